// Strands: the units of a Diderot-style bulk-synchronous program (Lehmann 2023, §2).
//
// A strand is initialised from its index, then `update` is applied once per super-step until it
// stabilizes (keeps its result) or dies (discards it). Strategies (sched/, issue 5) decide how strands
// map onto CPU threads or GPU threads and in what order; a strand's result must not depend on that, so
// everything a strand does is a pure MV_HD function of its own state and read-only workload data.
//
// The StrandWorkload concept (render/strands/mandelbrot.h is a model):
//   using State = …;                       trivially copyable per-strand state
//   MV_HD uint32_t num_strands() const;
//   MV_HD State init(uint32_t index) const;
//   MV_HD StrandStatus update(State&) const;     one super-step of one strand
//   MV_HD uint32_t pixel(uint32_t index) const;   film pixel the strand writes (row-major)
//   MV_HD Vec3 color(const State&, StrandStatus) const;   the finished strand's colour
// Optional:
//   static constexpr bool kCpuFma = false;   the CPU strategies skip their FMA-compiled loops for this
//                                            workload (sched/strand_cpu.h, strand_cpu_fma)
#pragma once

#include <cstdint>

#include "base/common.h"

namespace mv {

/// What an update leaves a strand as (Lehmann 2023 §2: `stabilize` keeps the result, `die` drops it).
enum class StrandStatus : uint8_t { Active = 0, Stable = 1, Dead = 2 };

/// Runs strand `index` to completion on the calling thread: the reference every strategy must agree with.
/// Returns the final status; `steps` receives the number of update calls (the per-strand step count that
/// Lehmann 2023 Fig 3.2 summarises). `max_steps` bounds a misbehaving workload (then Active is returned).
template <class W>
MV_HD StrandStatus run_strand(const W& w, uint32_t index, typename W::State& state, uint32_t& steps,
                              uint32_t max_steps = 0xffffffffu) {
  state = w.init(index);
  steps = 0;
  StrandStatus status = StrandStatus::Active;
  while (status == StrandStatus::Active && steps < max_steps) {
    status = w.update(state);
    ++steps;
  }
  return status;
}

}  // namespace mv
