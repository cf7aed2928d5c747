// Strand strategies: how the strands of a StrandWorkload (render/strands/strand.h) are mapped onto CPU
// threads or CUDA threads, and in what order (Lehmann 2023, §3). Names are Appendix A's:
//
//   sequential                        one CPU thread, strand after strand (the speed-up baseline, §4.1.2)
//   cpu-parallel                      TBB, BSP super-steps over blocks of strands (Diderot's parallel runtime, §2.3)
//   cuda                              BSP: one launch per super-step, grid-stride over the strands (§3.1)
//   cuda-permute                      cuda over a random permutation of the index space (§3.2)
//   cuda-batch                        one launch; each thread runs its static strands to completion (§3.3)
//   cuda-batch-permute                cuda-batch over the permutation (§3.2 + §3.3)
//   cuda-global-queue                 one launch; an atomic counter hands out units of c strands (§3.4)
//   cuda-unified-memory               cuda with strand state in managed memory (§3.1, §4.2.3)
//   cuda-global-queue-unified-memory  cuda-global-queue with managed memory (§3.4, §4.2.3)
//
// Why a separate interface rather than sched/strategy.h's Strategy<W>: a patch strategy is incremental
// (step(budget) continues a persistent film, live switching keeps the picture), while a strand program
// is one run from init to the last stable strand whose cost is the whole run (Lehmann times a program
// end to end). So a strand strategy is a single call, run(workload, settings) → StrandRun, that owns its
// allocations for that call, with no budget and no persistent state; the registry keeps the patch
// registry's shape (name → factory, `find` naming the allowed names) so the CLI and the tests list
// strategies the same way. Strategies are templates over W, instantiated per workload by
// make_strand_registry<W>() (sched/strand_registry.cuh) in a CUDA translation unit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#endif

#include "base/enum_names.h"
#include "base/common.h"
#include "base/errors.h"
#include "base/params.h"
#include "base/work.h"
#include "sched/registry.h"
#include "sched/strand_grid.h"
#include "sched/strategy_info.h"

namespace mv {

/// Strands per task when a patch-task strategy (uniform, sorted-waves, megakernel, sequential-priority)
/// runs a strand program: one warp's worth, so the GPU strategies' warp-per-task mapping gives each lane
/// one strand (sched/adapters/strand_tasks.h).
inline constexpr uint32_t kStrandTaskGroup = 32;

/// The priority of a group of strands run as a task (sched/adapters/strand_tasks.h; larger runs sooner). Every
/// rule first runs each group once (unstarted groups have kUnsampledPriority, as unsampled patches do),
/// because until then nothing is known about the group's work.
enum class StrandTaskPriority : uint8_t {
  /// Constant: the task order of the strategy itself (task index for sorted-waves, the queue's FIFO
  /// order for the megakernel without sorting effect).
  Fifo = 0,
  /// The group's remaining-work estimate, largest first: Σ over its still-active strands of the updates
  /// each has taken so far (a strand that has run long is expected to run long: the age estimate of
  /// heavy-tailed step distributions such as mandelbrot's, Lehmann 2023 Fig 3.2). Long groups start
  /// early, so the run does not end on a straggler (longest-processing-time-first).
  MostRemaining = 1,
  /// The same estimate, smallest first: cheap groups finish first, so the image fills in fastest.
  LeastRemaining = 2,
};

/// The group priorities' names, in StrandTaskPriority order: "fifo", "most-remaining", "least-remaining".
inline constexpr EnumNames<StrandTaskPriority, 3> kStrandTaskPriorityNames{{"fifo", "most-remaining", "least-remaining"}};

inline const char* strand_task_priority_name(StrandTaskPriority p) { return kStrandTaskPriorityNames(p); }

/// Parses a StrandTaskPriority name; throws InputError("", field, …) listing the names.
inline StrandTaskPriority parse_strand_task_priority(const std::string& name, const char* field = "--task-priority") {
  return kStrandTaskPriorityNames.parse(name, field, "task priority");
}

struct StrandRunSettings;
/// "q16,most-remaining": a task strategy's quantum and group priority (tables, sidecars, the GUI).
std::string strand_task_text(const StrandRunSettings& s);

/// What a run may be told. All fields have defaults; each strategy reads only those its info() names.
struct StrandRunSettings {
  GridConfig grid;                  ///< GPU strategies: n, b (and c for the global queues), or auto
  uint64_t permute_seed = 1;        ///< seed of the index-space permutation (the *-permute strategies)
  bool prefetch = true;             ///< unified-memory strategies: cudaMemPrefetchAsync the strand arrays to the GPU
  /// Unified-memory strategies: the BSP loop's active counter (and the queue's work counter) in managed
  /// memory too, reset and read by the host through its page. Off (default): the counter is device memory
  /// read with cudaMemcpy, as in the non-managed strategies, and only the strand arrays (Lehmann §3.1's
  /// strand array, the data the paper puts in unified memory) are managed. On, the page migrates twice
  /// per super-step (measured: docs/perf.md).
  bool managed_counter = false;
  uint32_t max_steps = 0xffffffffu; ///< per-strand update bound, as run_item's (then the strand stays Active)
  uint32_t cpu_block = 4096;        ///< cpu-parallel: strands per TBB block, [1, 2^24]
  /// Task strategies (those that read the knob task-quantum): updates each active strand of a group takes
  /// per execution of its task before the task re-enqueues with its new priority, [1, 65536].
  uint32_t task_quantum = 16;
  /// Task strategies: how a group's priority is estimated after each execution.
  StrandTaskPriority task_priority = StrandTaskPriority::MostRemaining;
  /// Task strategies: the wrapped patch strategy's own knobs by name (base/params.h; e.g. the megakernel's
  /// queue=kerbl), applied before the run; names it does not have are ignored.
  ParamValues task_knobs;
  /// Record the order in which strands finish (StrandRun::finish_order), for the viewer's fill-in replay.
  /// Costs one atomic per finished strand (the timings' notes say so); off for the bench.
  bool record_finish_order = false;
  /// CPU strategies: called on the calling thread with (done, total), the run's progress done / total for a
  /// progress line: strands finished of all after each 4096 (sequential); for cpu-parallel, strand updates
  /// of n · B where the workload bounds a strand's updates by B (W::max_updates, render/strands/strand.h),
  /// else strands finished, after each super-step and every 0.25 s within a long one. Null: not called.
  /// Its cost is inside the timing; the bench leaves it null.
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

/// StrandRun::finish_order of a strand that never finished (still Active after max_steps).
inline constexpr uint32_t kStrandNotFinished = 0xffffffffu;

/// Where a strategy stamps finishing strands: ticket[i] = the number of strands that finished before
/// strand i (an atomic counter `next`, host or device memory like the strand arrays). Null: not recorded.
/// On the GPU the lanes of a warp that stamp together take one atomic (warp-aggregated: the leader adds
/// the group's size, each lane takes base + its rank), so recording costs about one atomic per warp
/// step rather than one per strand.
struct FinishTickets {
  uint32_t* ticket = nullptr;
  unsigned int* next = nullptr;
  MV_HD MV_INLINE void stamp(uint32_t i) const {
    if (!ticket) return;
#if defined(__CUDA_ARCH__)
    const auto group = cooperative_groups::coalesced_threads();
    unsigned int base = 0;
    if (group.thread_rank() == 0) base = atomicAdd(next, group.size());
    base = group.shfl(base, 0);
    ticket[i] = base + group.thread_rank();
#else
    ticket[i] = __atomic_fetch_add(next, 1u, __ATOMIC_RELAXED);
#endif
  }
};

/// How long a run took and what it launched. Timed region (docs/strands.md has the full statement):
///   GPU: CUDA events on the default stream around init, every kernel, the BSP host loop's active-count
///        read-backs and, with unified memory, the prefetch; allocation, the permutation's generation
///        and upload, and the download of the results are outside.
///   CPU: steady_clock wall time around init and updates; allocation and the image are outside.
struct StrandTimings {
  double ms = 0.0;            ///< the timed region, milliseconds
  bool cuda_events = false;   ///< true: GPU time by CUDA events; false: host wall clock
  uint32_t launches = 0;      ///< kernel launches in the timed region (GPU); 0 on the CPU
  uint32_t super_steps = 0;   ///< BSP super-steps (cuda, cuda-permute, cuda-unified-memory, cpu-parallel); 0 otherwise
  GridConfig grid;            ///< the grid the GPU strategy ran with (auto resolved); `auto` on the CPU
  std::string notes;          ///< anything that changes the meaning of the numbers (e.g. prefetch off)
};

/// The outcome of one run: per strand (index order) its final state, status and update count.
template <class W>
struct StrandRun {
  std::vector<typename W::State> state;
  std::vector<WorkStatus> status;
  std::vector<uint32_t> steps;
  /// With StrandRunSettings::record_finish_order: per strand its place in the order of finishing (0 =
  /// first), kStrandNotFinished if it never finished; empty otherwise. Strands finishing at once on the
  /// GPU are ordered by their atomic, so this is the order the hardware produced, not a schedule.
  std::vector<uint32_t> finish_order;
  StrandTimings timing;
};

template <class W>
class StrandStrategy {
 public:
  virtual ~StrandStrategy() = default;
  virtual const StrategyInfo& info() const = 0;
  /// Runs every strand of `w` from init until it is no longer Active (or max_steps updates) and returns
  /// the per-strand results. Throws InputError for settings out of range (naming the field), CudaError
  /// for a failed CUDA call. Every strand is initialised exactly once and updated exactly as often as
  /// run_item would update it, whatever the grid.
  virtual StrandRun<W> run(const W& w, const StrandRunSettings& settings) = 0;
};

/// Name → factory of the strand strategies for one workload type (in registration order). Every strategy
/// registered here runs to completion (StrategyInfo::run_to_completion).
template <class W>
class StrandStrategyRegistry : public NamedRegistry<StrategyInfo, StrandStrategy<W>> {
 public:
  StrandStrategyRegistry()
      : NamedRegistry<StrategyInfo, StrandStrategy<W>>("strand strategy",
                                                       [](StrategyInfo& i) { i.run_to_completion = true; }) {}
};

inline std::string strand_task_text(const StrandRunSettings& s) {
  return "q" + std::to_string(s.task_quantum) + "," + strand_task_priority_name(s.task_priority);
}

/// Checks the settings every strategy shares (grid ranges, cpu_block); throws InputError naming the field.
inline void validate_strand_settings(const StrandRunSettings& s) {
  validate_grid(s.grid, "--grid");
  if (s.cpu_block < 1 || s.cpu_block > (1u << 24))
    throw InputError("", "cpu_block", "strands per CPU block = " + std::to_string(s.cpu_block) +
                                          " is out of range [1, 16777216]");
  if (s.task_quantum < 1 || s.task_quantum > 65536)
    throw InputError("", "--task-quantum", "updates per task execution = " + std::to_string(s.task_quantum) +
                                               " is out of range [1, 65536]");
}

/// The strand strategies' knobs (base/params.h) over StrandRunSettings. Each strategy's info lists the
/// ones it reads (StrategyInfo::knobs); the viewer's Strands panel, the CLI's options and the
/// capture sidecar are generated from this table and that list.
inline const ParamTable<StrandRunSettings>& strand_params() {
  static const ParamTable<StrandRunSettings> table = [] {
    using K = ParamKind;
    using R = StrandRunSettings;
    const std::string tasks = "Kerbl 2012 §6.3 on strands";
    ParamTable<R> t;
    t.add(work_unit_param("strands"),
          [](const R& r) { return static_cast<double>(r.grid.work_unit); },
          [](R& r, double v) { r.grid.work_unit = static_cast<uint32_t>(v); });
    t.add(make_param("permute-seed", K::Int, 0, 4294967295.0, "seed of the random permutation of the index space",
                     "Lehmann 2023 §3.2"),
          &R::permute_seed);
    t.add(make_param("prefetch", K::Bool, 0, 1,
                     "cudaMemPrefetchAsync the managed strand arrays to the GPU before the run", "Lehmann 2023 §4.2.3"),
          &R::prefetch);
    t.add(make_param("managed-counter", K::Bool, 0, 1,
                     "the active counter in managed memory too (its page then migrates twice per super-step)",
                     "Lehmann 2023 §3.1, §4.2.3"),
          &R::managed_counter);
    t.add(make_param("cpu-block", K::Int, 1, 1u << 24, "strands per TBB block of a super-step", "Lehmann 2023 §2.3"),
          &R::cpu_block);
    t.add(make_param("task-quantum", K::Int, 1, 65536,
                     "updates each active strand of a group of 32 takes per execution of its task before the task "
                     "re-enqueues with its new priority",
                     tasks),
          &R::task_quantum);
    t.add(make_param("task-priority", K::Choice, 0, 0,
                     "a group's priority after each execution: fifo (the strategy's own order), most-remaining "
                     "(longest expected work first) or least-remaining (cheapest first)",
                     tasks, "", 0, {kStrandTaskPriorityNames.names.begin(), kStrandTaskPriorityNames.names.end()}),
          &R::task_priority);
    return t;
  }();
  return table;
}

/// Whether `name` is a knob of strand_params().
inline bool strand_params_have(std::string_view name) { return find_param(strand_params().specs(), name) != nullptr; }

}  // namespace mv
