// The `checkerboard` strand workload: the smallest complete workload, and the worked example of
// docs/architecture.md ("Adding a workload"). One strand per pixel; the pixels of a checkerboard's
// light cells take `long_steps` updates, those of its dark cells `short_steps`, so the image shows at
// a glance how a strategy copes with a bimodal step distribution (Lehmann 2023 §3's load imbalance).
//
// Every update is integer arithmetic (a xorshift step of the strand's hash), so all strategies, CPU and
// GPU, agree bit for bit.
#pragma once

#include <cstdint>

#include "base/common.h"
#include "render/math.h"
#include "render/strands/strand.h"

namespace mv {

struct StrandViewParams;  // the viewer's view (app/session/strand_view_params.h); this workload has none

struct CheckerboardStrands {
  struct State {
    uint32_t steps_left;  ///< updates still to take
    uint32_t hash;        ///< the strand's work: a xorshift32 state
    uint32_t light;       ///< 1 in a light cell
  };
  uint32_t width = 512, height = 512;  ///< strands (pixels), each in [1, 16384]
  uint32_t cell = 32;                  ///< cell side in pixels, ≥ 1
  uint32_t short_steps = 8;            ///< updates of a dark-cell strand, ≥ 1
  uint32_t long_steps = 256;           ///< updates of a light-cell strand, ≥ 1

  MV_HD uint32_t num_strands() const { return width * height; }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }
  MV_HD bool light(uint32_t index) const { return ((index % width) / cell + (index / width) / cell) % 2 == 0; }
  MV_HD State init(uint32_t index) const {
    const bool l = light(index);
    return State{l ? long_steps : short_steps, index * 2654435761u + 1u, l ? 1u : 0u};
  }
  MV_HD WorkStatus update(State& s) const {
    s.hash ^= s.hash << 13;
    s.hash ^= s.hash >> 17;
    s.hash ^= s.hash << 5;
    return --s.steps_left == 0 ? WorkStatus::Stable : WorkStatus::Active;
  }
  /// Light cells light grey, dark cells dark grey, each with a faint noise from the strand's hash.
  MV_HD Vec3 color(const State& s, WorkStatus) const {
    const float noise = static_cast<float>(s.hash >> 24) / 255.f;
    return Vec3{s.light ? 0.8f + 0.1f * noise : 0.25f + 0.1f * noise};
  }
};

/// The workload at width × height (the registry's factory; the view is fixed and the data needs no side).
inline CheckerboardStrands checkerboard_workload(uint32_t width, uint32_t height, Side, const StrandViewParams&) {
  CheckerboardStrands w;
  w.width = width;
  w.height = height;
  return w;
}

}  // namespace mv
