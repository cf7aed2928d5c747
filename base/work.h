// The work contract: what every workload gives a strategy, and what a strategy counts.
//
// A workload is a set of work items indexed 0 … N−1. Each item is initialised once from its index and then
// updated until it is no longer active:
//
//   init(index) → state                  the item's first state
//   update(state) → WorkStatus           one unit of work: Active (update again), Stable (keep the
//                                        result), Dead (discard it): Lehmann 2023 §2's strand life cycle
//   priority (optional)                  larger = more urgent; kUnsampledPriority before the first update,
//                                        kFinishedPriority once the item will never be updated again
//
// All of these are MV_HD, so a CPU strategy, a GPU strategy and the tests run the same per-item code.
// Two kinds of item implement the contract:
//   - a strand (Lehmann 2023 §2; render/strands/strand.h): one update is one super-step of one strand;
//   - a patch task (Kerbl 2012 §6.3; render/pathtracer/patch_task.h): one update is one batch of samples of a 4×4
//     pixel patch, and the patch stays active until it reaches its target spp. Its state lives in the
//     Film, so the task view updates the film in place rather than a State value.
// Strategies (sched/) only see this contract; they never include a workload (docs/architecture.md).
//
// Counters are in neutral units: "work" is whatever one update does (samples for a patch task, one step
// for a strand), so a strategy can count and budget it without knowing the workload.
#pragma once

#include <cfloat>
#include <cstdint>

#include "base/common.h"

namespace mv {

/// What an update leaves a work item as (Lehmann 2023 §2: `stabilize` keeps the result, `die` drops it).
enum class WorkStatus : uint8_t { Active = 0, Stable = 1, Dead = 2 };

/// Priority of an item that has not been updated yet: it runs before every measured item.
inline constexpr float kUnsampledPriority = FLT_MAX;
/// Priority of an item that is finished: it never runs again.
inline constexpr float kFinishedPriority = -FLT_MAX;

/// Counters of one strategy step that GPU item code accumulates with atomics.
struct WorkCounters {
  unsigned long long work = 0;  ///< units of work done (samples for patch tasks, steps for strands)
  unsigned int tasks = 0;       ///< task executions that did work
  unsigned int finished = 0;    ///< tasks that reached their end
};

/// Runs item `index` of `w` to completion on the calling thread: the reference every strategy must agree
/// with. Returns the final status; `steps` receives the number of update calls (the per-strand step count
/// that Lehmann 2023 Fig 3.2 summarises). `max_steps` bounds a misbehaving workload (then Active is
/// returned). W needs `State init(uint32_t) const` and `WorkStatus update(State&) const`.
template <class W>
MV_HD WorkStatus run_item(const W& w, uint32_t index, typename W::State& state, uint32_t& steps,
                          uint32_t max_steps = 0xffffffffu) {
  state = w.init(index);
  steps = 0;
  WorkStatus status = WorkStatus::Active;
  while (status == WorkStatus::Active && steps < max_steps) {
    status = w.update(state);
    ++steps;
  }
  return status;
}

}  // namespace mv
