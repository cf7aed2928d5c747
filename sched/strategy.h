// Strategies: how a workload's tasks are mapped onto CPU threads or GPU warps, and in what order.
//
// The Workload concept (what a strategy may use of W; render/pathtracer/patch_workload.h is the model):
//   using W::View;                         trivially copyable, with
//     MV_HD uint32_t run_task(uint32_t)    one thread executes a task; returns paths traced (0: finished)
//     __device__ uint32_t run_task_warp(uint32_t)  one warp executes a task (GPU mapping)
//     MV_HD bool finished(uint32_t)        task reached its target
//     float* priority                      per task, larger = more urgent; kFinishedPriority when done
//   uint32_t W::num_tasks();  uint32_t W::work_per_task();  W::make_current(Side);  View W::view(Side);
//   WorkCounters* W::device_counters()     device counters that run_task_warp accumulates
// Strategies never know a concrete workload: they are templates over W, instantiated by the registry
// (app/session/strategies.cu), so any strategy runs any workload (docs/architecture.md, "Registries").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/common.h"
#include "base/errors.h"
#include "base/params.h"
#include "base/work.h"
#include "sched/registry.h"
#include "sched/strategy_info.h"

namespace mv {

/// Settings every strategy reads; all may change between steps (live in the GUI).
struct ScheduleSettings {
  /// Tasks per wave K for priority waves (sorted-waves, and the CPU strategies' priority order), [1, 2^24].
  uint32_t wave_size = 8192;
  /// GPU threads per block for task kernels (a multiple of 32 in [32, 1024]).
  uint32_t block_size = 128;
};

/// What one step did.
struct StepStats {
  uint64_t work = 0;       ///< units of work done (base/work.h: samples for patch tasks, steps for strands)
  uint64_t tasks = 0;      ///< task executions
  uint32_t finished = 0;   ///< tasks that reached their target in this step
  double busy_ms = 0.0;    ///< time the executing side was busy (CUDA events on the GPU, wall clock on the CPU)
};

template <class W>
class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const StrategyInfo& info() const = 0;
  /// Executes tasks of `w` worth about `budget_work` paths (at least one task), returns what was done.
  /// The workload must be current on info().side. Throws CudaError on a failed CUDA call.
  virtual StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& settings) = 0;
  /// Forgets cached schedule state (call after the workload was reset or its target changed).
  virtual void invalidate() {}
  /// The strategy's own knobs (base/params.h), live: what the CLI, the GUI, the sidecar and the bench CSV
  /// show and edit without knowing the strategy. Null when it has none.
  virtual Params* params() { return nullptr; }
};

/// Name → factory for one workload type; the GUI combo boxes and the CLI's --strategy come from here.
/// Every strategy registered here is progressive (StrategyInfo::progressive).
template <class W>
class StrategyRegistry : public NamedRegistry<StrategyInfo, Strategy<W>> {
 public:
  StrategyRegistry()
      : NamedRegistry<StrategyInfo, Strategy<W>>("strategy", [](StrategyInfo& i) { i.progressive = true; }) {}
};

}  // namespace mv
