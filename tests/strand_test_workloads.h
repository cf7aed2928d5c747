// A strand workload for the strategy tests that counts, per strand, how often init and update are
// called (atomically, on the host or the device), so a test can see every strand run exactly once to
// completion whatever the grid. Strand i needs target(i) updates (1…40, every 11th 150…199) and then
// stabilizes, or dies when i % 7 == 3.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <cstring>

#include "app/session/strand_workloads.h"
#include "render/math.h"
#include "sched/strand_image.h"
#include "sched/strand_strategy.h"
#include "render/strands/strand.h"

namespace mv::test {

struct CountingStrands {
  struct State {
    uint32_t index, updates, target;
  };
  uint32_t n = 0;
  /// n + 1 counters each (host memory for CPU strategies, device memory for GPU ones; null: not counted).
  /// Entry n counts calls that arrived with a state that no init produced (index out of range).
  uint32_t* init_calls = nullptr;
  uint32_t* update_calls = nullptr;

  MV_HD uint32_t num_strands() const { return n; }
  MV_HD uint32_t pixel(uint32_t i) const { return i; }

  MV_HD static uint32_t target(uint32_t i) {
    uint32_t h = i * 2654435761u;
    h ^= h >> 15;
    return i % 11 == 0 ? 150 + h % 50 : 1 + h % 40;
  }
  MV_HD static WorkStatus final_status(uint32_t i) { return i % 7 == 3 ? WorkStatus::Dead : WorkStatus::Stable; }

  MV_HD State init(uint32_t i) const {
    bump(init_calls, i < n ? i : n);
    return State{i, 0, target(i)};
  }
  MV_HD WorkStatus update(State& s) const {
    bump(update_calls, s.index < n ? s.index : n);
    ++s.updates;
    return s.updates < s.target ? WorkStatus::Active : final_status(s.index);
  }
  MV_HD Vec3 color(const State& s, WorkStatus) const {
    return Vec3{static_cast<float>(s.index % 256) / 255.f, static_cast<float>(s.updates) / 200.f, 0.5f};
  }

  MV_HD static void bump(uint32_t* counters, uint32_t i) {
    if (!counters) return;
#if defined(__CUDA_ARCH__)
    atomicAdd(counters + i, 1u);
#else
    __atomic_fetch_add(counters + i, 1u, __ATOMIC_RELAXED);
#endif
  }
};

/// Success iff the run of CountingStrands{n} initialised every strand once and updated strand i exactly
/// min(target(i), max_steps) times (counted by the workload itself in init_calls / update_calls, n + 1
/// entries each), and the run reports those step counts, the right final status and the right state.
inline ::testing::AssertionResult ran_exactly_once(const StrandRun<CountingStrands>& r,
                                                   const std::vector<uint32_t>& init_calls,
                                                   const std::vector<uint32_t>& update_calls, uint32_t n,
                                                   uint32_t max_steps = 0xffffffffu) {
  if (r.steps.size() != n || r.status.size() != n || r.state.size() != n)
    return ::testing::AssertionFailure() << "result arrays have " << r.steps.size() << "/" << r.status.size() << "/"
                                         << r.state.size() << " entries, expected " << n;
  if (init_calls.size() != n + 1u || update_calls.size() != n + 1u)
    return ::testing::AssertionFailure() << "counter arrays of the wrong size";
  if (init_calls[n] || update_calls[n])
    return ::testing::AssertionFailure() << init_calls[n] << " init and " << update_calls[n]
                                         << " update calls saw a strand index out of range";
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t want = std::min(CountingStrands::target(i), max_steps);
    const WorkStatus want_status = want < CountingStrands::target(i) ? WorkStatus::Active : CountingStrands::final_status(i);
    if (init_calls[i] != 1)
      return ::testing::AssertionFailure() << "strand " << i << " initialised " << init_calls[i] << " times";
    if (update_calls[i] != want)
      return ::testing::AssertionFailure() << "strand " << i << " updated " << update_calls[i] << " times, expected "
                                           << want;
    if (r.steps[i] != want)
      return ::testing::AssertionFailure() << "strand " << i << " reports " << r.steps[i] << " steps, expected " << want;
    if (r.status[i] != want_status)
      return ::testing::AssertionFailure() << "strand " << i << " ended with status " << int(r.status[i])
                                           << ", expected " << int(want_status);
    if (r.state[i].index != i || r.state[i].updates != want)
      return ::testing::AssertionFailure() << "strand " << i << "'s final state is index " << r.state[i].index
                                           << ", " << r.state[i].updates << " updates";
  }
  return ::testing::AssertionSuccess();
}

/// The default view at 120×90 (about 15 % of the strands run to the cap) and a close-up of the
/// boundary near −0.75 + 0.1i (seahorse valley) with a cap of 600.
inline std::vector<MandelbrotStrands> mandelbrot_cases() {
  MandelbrotStrands a = mandelbrot_workload(120, 90);
  MandelbrotStrands b = mandelbrot_workload(97, 61);  // odd sizes: no power-of-two luck
  b.p.x0 = -0.80f;
  b.p.x1 = -0.70f;
  b.p.y0 = 0.05f;
  b.p.y1 = 0.15f;
  b.p.max_iterations = 600;
  return {a, b};
}

inline StrandResult run_mandelbrot(const MandelbrotStrands& w, const std::string& strategy, const StrandRunSettings& s = {}) {
  auto st = mandelbrot_strand_strategies().find(strategy).make();
  return finish_strand_run(w, st->run(w, s), w.p.width, w.p.height);
}

/// Same per-strand steps and statuses and the same image bytes.
inline ::testing::AssertionResult same_result(const StrandResult& a, const StrandResult& b) {
  if (a.steps != b.steps) {
    for (size_t i = 0; i < a.steps.size() && i < b.steps.size(); ++i)
      if (a.steps[i] != b.steps[i])
        return ::testing::AssertionFailure() << "strand " << i << ": " << a.steps[i] << " vs " << b.steps[i] << " steps";
    return ::testing::AssertionFailure() << "step arrays of different sizes";
  }
  if (a.status != b.status) return ::testing::AssertionFailure() << "statuses differ";
  if (a.rgba.size() != b.rgba.size() || std::memcmp(a.rgba.data(), b.rgba.data(), a.rgba.size() * sizeof(float)) != 0)
    return ::testing::AssertionFailure() << "images differ (checksums " << std::hex << a.checksum() << " vs "
                                         << b.checksum() << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace mv::test
