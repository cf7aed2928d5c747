// The image of a strand run and the workload-independent result the bench and the tests compare.
//
// The image is composed on the host from the final strand states, for every strategy alike: strand i
// writes color(state_i, status_i) at pixel(i) (row-major) unless it died. Colouring on the host keeps
// the comparison between strategies about the strand arithmetic: color() may use math-library functions
// (log2f, cosf) whose CPU and GPU implementations round differently, while the states themselves must
// agree bit for bit. It also keeps colouring out of every strategy's timed region.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/strand_stats.h"
#include "sched/strand_strategy.h"

namespace mv {

/// RGBA of pixels that no strand writes and of dead strands' pixels (Diderot's `die` drops the output).
inline constexpr float kStrandBackground[4] = {0.f, 0.f, 0.f, 0.f};

/// A run without its workload-specific states: what the bench prints and the tests compare.
struct StrandResult {
  uint32_t width = 0, height = 0;
  std::vector<float> rgba;           ///< width × height × 4 floats, row 0 at the top; alpha 1 where a strand wrote
  std::vector<StrandStatus> status;  ///< per strand, index order
  std::vector<uint32_t> steps;       ///< per strand update calls
  StrandTimings timing;

  /// FNV-1a 64 of the float RGBA bytes: equal images ⇔ equal checksums (up to collisions).
  uint64_t checksum() const { return fnv1a64(rgba.data(), rgba.size() * sizeof(float)); }
};

/// Colours the strands of `run` into a width × height RGBA image. Throws std::out_of_range if a strand's
/// pixel() is outside the image (a workload bug).
template <class W>
std::vector<float> strand_image(const W& w, const StrandRun<W>& run, uint32_t width, uint32_t height) {
  const size_t pixels = static_cast<size_t>(width) * height;
  std::vector<float> rgba(pixels * 4);
  for (size_t p = 0; p < pixels; ++p)
    for (int c = 0; c < 4; ++c) rgba[4 * p + c] = kStrandBackground[c];
  for (uint32_t i = 0; i < static_cast<uint32_t>(run.status.size()); ++i) {
    const uint32_t p = w.pixel(i);
    if (p >= pixels)
      throw std::out_of_range("strand " + std::to_string(i) + " writes pixel " + std::to_string(p) +
                              " outside the " + std::to_string(width) + "x" + std::to_string(height) + " image");
    if (run.status[i] == StrandStatus::Dead) continue;
    const auto c = w.color(run.state[i], run.status[i]);
    float* o = &rgba[4 * static_cast<size_t>(p)];
    o[0] = c.x;
    o[1] = c.y;
    o[2] = c.z;
    o[3] = 1.f;
  }
  return rgba;
}

/// Moves `run`'s per-strand arrays into a StrandResult with its image.
template <class W>
StrandResult finish_strand_run(const W& w, StrandRun<W>&& run, uint32_t width, uint32_t height) {
  StrandResult r;
  r.width = width;
  r.height = height;
  r.rgba = strand_image(w, run, width, height);
  r.status = std::move(run.status);
  r.steps = std::move(run.steps);
  r.timing = std::move(run.timing);
  return r;
}

/// Packs float RGBA into RGBA8 (R in the low byte) for write_png: each channel clamped to [0, 1] and
/// rounded to the nearest of 0..255.
inline std::vector<uint32_t> rgba8(const std::vector<float>& rgba) {
  std::vector<uint32_t> out(rgba.size() / 4);
  auto q = [](float v) -> uint32_t {
    const float c = v > 0.f ? (v < 1.f ? v : 1.f) : 0.f;  // NaN → 0
    return static_cast<uint32_t>(c * 255.f + 0.5f);
  };
  for (size_t p = 0; p < out.size(); ++p)
    out[p] = q(rgba[4 * p]) | (q(rgba[4 * p + 1]) << 8) | (q(rgba[4 * p + 2]) << 16) | (q(rgba[4 * p + 3]) << 24);
  return out;
}

}  // namespace mv
