// The priority megakernel's settings and statistics (sched/megakernel/megakernel.cuh, Kerbl 2012 §3–§6) in plain
// C++: the viewer's panels, the command line and the capture sidecar read and write them without CUDA
// headers, through MegakernelControl (what Session::megakernel() returns). Every knob is described once:
// its default here, its name, range, doc and source in assets/knobs-megakernel.json, bound to the field in
// megakernel_params() (base/params.h); the ranges checked by validate(), the CLI options, the GUI panel, the
// sidecar and scripted changes all come from that table.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "base/enum_names.h"
#include "base/errors.h"
#include "base/params.h"

namespace mv {

/// How the megakernel's workers order the tasks they execute (MegakernelSettings::queue).
enum class QueueDesign : uint32_t {
  /// Kerbl 2012 exactly: one segmented ring, every task re-enqueued at the back, controller blocks sort
  /// pairs of segments (§3–§5). Every live task runs once per turn-over of the ring, so on a GPU that
  /// turns the ring over faster than the controllers merge it the sample allocation stays uniform
  /// (docs/perf.md); kept for the paper's experiments (sched-bench, sort-bench, Figs 3–5).
  Kerbl,
  /// K FIFO rings: urgent tasks, then a calendar queue over priority bands (sched/megakernel/priority_table.h);
  /// workers serve the most urgent non-empty band, every age_period-th claim of a warp the fullest ring.
  Buckets,
  /// One FIFO ring; a task draws priority-proportional quanta of sample batches per visit, through a
  /// per-task credit (0: it yields this visit) (sched/megakernel/priority_table.h).
  Quanta,
};
inline constexpr int kNumQueueDesigns = 3;

/// The queue designs' names, in QueueDesign order: "kerbl", "buckets", "quanta".
inline constexpr EnumNames<QueueDesign, kNumQueueDesigns> kQueueDesignNames{{"kerbl", "buckets", "quanta"}};

inline const char* queue_design_name(QueueDesign d) { return kQueueDesignNames(d); }

/// Parses a queue design name; throws InputError("", "--queue", ...) listing the names.
inline QueueDesign parse_queue_design(const std::string& name) {
  return kQueueDesignNames.parse(name, "--queue", "queue design");
}

/// Settings of the megakernel beyond ScheduleSettings (block_size is taken from there). Changing
/// segment_size or blocks_per_sm rebuilds the queue at the next step; the others apply to the next slice.
struct MegakernelSettings {
  /// Queue design. Changing it rebuilds the queue at the next step (the film is kept).
  QueueDesign queue = QueueDesign::Buckets;
  /// `buckets`: number of rings K, [3, 32]: one of urgent tasks, a calendar window of K − 2 priority bands
  /// of at most a factor 1.25 each, four an octave (K = 32: 7.5 octaves of priority), and one of the tasks
  /// below the window.
  uint32_t buckets = 32;
  /// `buckets`: every age_period-th claim of a worker warp takes the ring with the most waiting entries
  /// instead of the most urgent one, so no task waits for ever whatever the priorities (0: never; else
  /// [2, 65536]).
  uint32_t age_period = 32;
  /// `buckets`: a claimed task runs up to this many sample batches in a row, [1, 64], as long as after
  /// each batch it still belongs to the band it was claimed from (or has become urgent); then it goes back
  /// to its band's ring. 1: one batch per claim. The claims saved are queue operations the warp does not
  /// do; the band is the most urgent non-empty one when claimed, so the task is still among the most
  /// urgent when it runs again. The default 16 with band_slack 2 was measured on room and caustic
  /// (docs/perf.md): it lifts the kernel's rate above uniform's without costing samples to quality.
  uint32_t band_repeat = 16;
  /// `buckets`: how many bands (four an octave) a repeating task's priority may fall below the band it was
  /// claimed from and still run again, [0, 30]. 0: only while it stays in its band.
  uint32_t band_slack = 2;
  /// `buckets`: D, the most warps that may execute one task's batches at the same time, [1, 32]. With
  /// D > 1 a task that leads the queue after a batch puts a secondary entry of itself into the queue while
  /// it has fewer than D entries and executions (sched/megakernel/lane_tokens.h), so a scene's hottest
  /// patches are sampled D batches at a time instead of one batch per ≈ 40 µs; the batches reserve their
  /// sample indices atomically, so every patch still ends exactly at the target, and add to the film in the
  /// order they finish (under a per-patch lock): the image then equals D = 1's statistically, not bitwise
  /// (summation order). Needs a workload whose tasks allow it (the path tracer's patches). 1: one warp per
  /// task, the default kernel unchanged. Switching between 1 and more rebuilds the queue. On `caustic` under
  /// `neyman` with stay_leading, band_repeat 64 and 4 paths per pixel, D = 8 reaches uniform's 128-spp MSE
  /// in 0.081× uniform's time (the mean MSE of 32 seeds, rendered from scratch), where stay_leading alone
  /// takes 0.14×; on `room` it costs `variance` ≈ 20 % of time to quality (docs/perf.md).
  uint32_t patch_lanes = 1;
  /// `buckets`: a repeating task also runs again (within band_repeat) while it leads the queue: no urgent
  /// task waits and its priority's band is at least as urgent as the most urgent band with waiting tasks,
  /// so the greedy order would pick it next anyway. Keeps a scene's hottest patches running back to back
  /// instead of waiting for a claim between batches: on `caustic` under `neyman`, whose time to quality is
  /// bound by the serial executions of its hottest patches, 0.16× uniform's time instead of 0.19–0.28×
  /// (0.145–0.150× with band_repeat 64), at twice the samples; it costs `variance` on caustic 7 % and
  /// `neyman` on room (docs/perf.md), hence off by default.
  bool stay_leading = false;
  /// `buckets` with patch_lanes > 1: the far ring (the tasks whose band lay below the calendar window when
  /// they were enqueued) is also served, FIFO, at the rate that claims each of its entries again within
  /// about this many rounds (a round: one batch on every worker warp, ≈ 40 µs on caustic), [1, 65536], 0:
  /// only when the window is empty (and by ageing), as with one lane. With lanes, idle warps find the
  /// window busy with secondary entries and seldom reach the far ring, where a patch whose first batch
  /// ranked it low (or that the window moved past) then waits for tens of ms; a bounded wait keeps those
  /// patches sampled (sched/megakernel/work_queue.cuh claim_ring_warp; at most every other claim drains,
  /// so the window is never starved). On caustic under `neyman` with D = 4 (docs/perf.md): 0 stalled
  /// 0.8–1.1× uniform's time in 4 of 9 runs, 10 at most 0.22×, 25 up to 0.31×, 4 at most 0.19×.
  uint32_t far_drain = 10;
  /// `quanta`: the largest number of sample batches one visit may run, Q in [2, 64]; the mean quantum
  /// runs from Q (most urgent) through 1 (median) to 1/Q (least urgent).
  uint32_t quantum_max = 4;
  /// Segment size S (§3.2): a power of two in [32, 512]. The paper's runs use 256.
  uint32_t segment_size = 256;
  /// The controller sorts (§4.3). false: the queue runs in plain FIFO order (the fair comparison).
  bool controller = true;
  /// Controller blocks P in [1, 64] (beyond Kerbl, who uses one): blocks 0 … P−1 sort, the rest work.
  /// Controller i restarts its back-to-front walk (Fig 2) at the back of the i-th of P equal ranges of the
  /// sortable queue, so P walks run staggered like a pipelined bubble sort; they meet only through the
  /// segments' try-locks, which keep any overlap safe. An H100's 132 SMs drain a segment far faster than
  /// one block can merge the queue (docs/perf.md); P > 1 multiplies the merge rate.
  uint32_t controllers = 1;
  /// §5.2 collision avoidance: lock a pair only when the buffer ahead covers the sort time.
  bool time_management = true;
  /// §5.4's global multiplier on the buffer time (> 1: optimistic, sorts more, collides more).
  float buffer_multiplier = 1.0f;
  /// false: Kerbl's buffer = Σ over buffer segments of their shortest task (one segment per task
  /// duration; right when workers ≤ S). true: floor(R / W) × the shortest of them, R entries ahead of the
  /// pair and W worker warps (the bound of sched/megakernel/queue_model.h; right when W > S, as on an H100).
  bool wave_aware_buffer = false;
  /// Front-pull merges (beyond Kerbl): instead of Fig 2's adjacent pairs, a controller merges the
  /// segment its walk is at (from the back towards the front) with a *target* segment just ahead of the
  /// head — head + 1 + pull_distance (+ i for controller i, + an adaptive extra after §5.2 refusals) —
  /// so the best S entries of every segment it visits land right behind the segment in execution. On an
  /// H100 the ring is consumed ~50× faster than adjacent merges can carry an entry forward (perf.md);
  /// a pull moves it the whole way in one merge. Same locks, same "full and untouched" rule, same time
  /// check (on the buffer ahead of the target).
  bool pull_forward = false;
  /// Segments between the one in execution and the pull target, [1, 1024].
  uint32_t pull_distance = 4;
  /// §5.3 metadata: measure each task's shortest duration and keep per-segment minima. false: every
  /// buffer segment counts `constant_segment_cycles` (§5.4, "a constant global variable").
  bool collect_metadata = true;
  /// §5.4: > 0 assumes every task takes this many cycles instead of measuring (needs collect_metadata).
  uint32_t static_task_cycles = 0;
  /// Buffer time per segment when collect_metadata is false, in cycles.
  uint32_t constant_segment_cycles = 100000;
  /// Resident blocks per SM (0: the most the occupancy calculator allows).
  uint32_t blocks_per_sm = 0;
  /// Worker blocks of the persistent grid, [1, 65535], beside the controller blocks (0: every block that is
  /// resident with blocks_per_sm). Kerbl 2012 §6.2 ran 15 worker blocks on a GTX 480; an H100 holds hundreds.
  /// The grid launched is min(controllers + worker_blocks, the resident grid).
  uint32_t worker_blocks = 0;
  /// Record the slice's dequeue order (priorities) and compute its order score S(n) (sched/megakernel/score.h).
  bool record_order = false;
  /// At most this many dequeues per slice are recorded.
  uint32_t record_capacity = 1u << 16;
  /// Watchdog: the longest any busy-wait may last, and the host's limit on one slice (then it asks the
  /// kernel to stop, which ends the slice early but cleanly), in seconds, (0, 60].
  double watchdog_seconds = 2.0;
  /// How a rebuild orders the queue: true (default) by descending priority, as the controller would
  /// leave it; false in task index order (sched-bench fills it in ascending priority, the worst case of
  /// Kerbl §6.2). Only a rebuild reads it.
  bool rebuild_sorted = true;
  /// Throws InputError("", "--name", …) naming the first setting that megakernel_params() does not allow.
  void validate() const;
};

/// The megakernel's knobs (base/params.h), bound to the fields of MegakernelSettings, in panel order. Their names,
/// ranges, docs, sources and conditions (`when`: the queue design that reads a knob) are data, in
/// assets/knobs-megakernel.json (base/param_file.h); names are the CLI options without the dashes.
const ParamTable<MegakernelSettings>& megakernel_params();

inline void MegakernelSettings::validate() const { megakernel_params().check(*this); }

/// What the GUI shows about the megakernel (stats()); cumulative values count since the last rebuild.
struct MegakernelStats {
  // ---- launch configuration ----
  uint32_t grid_blocks = 0;       ///< blocks of the persistent grid (blocks 0 … P−1: controllers)
  uint32_t controllers = 0;       ///< controller blocks P of the last slice
  uint32_t blocks_per_sm = 0;
  uint32_t worker_warps = 0;
  uint32_t registers = 0;         ///< registers per thread of the kernel
  uint32_t capacity = 0;          ///< ring capacity C
  // ---- last slice ----
  uint64_t queue_length = 0;      ///< entries in the queue after the slice (= unfinished tasks)
  uint64_t dequeues = 0;          ///< tickets taken in the slice
  double tasks_per_second = 0.0;  ///< task executions / busy time
  bool stopped_by_host = false;   ///< the slice hit the host stop flag (request_stop or time limit)
  double order_score = -1.0;      ///< S(n) of the recorded dequeue order; −1 when not recorded
  uint64_t recorded = 0;          ///< how many dequeues the score covers
  // ---- cumulative ----
  uint64_t slices = 0;
  uint64_t sort_passes[3] = {0, 0, 0};      ///< per SortMethod
  uint64_t sort_cycles_max[3] = {0, 0, 0};  ///< §5.3.2: the longest lock-to-unlock time per method
  uint64_t lock_collisions = 0;   ///< worker accesses that met a locked segment
  uint64_t wait_cycles = 0;       ///< worker cycles spent waiting for unlocks
  uint64_t ctrl_lock_failures = 0;
  uint64_t ctrl_time_refusals = 0;
  uint64_t ctrl_restarts = 0;
  uint64_t ctrl_not_full = 0;
  uint64_t empty_executions = 0;  ///< dequeued tasks that were already finished: must stay 0
  uint64_t yields = 0;            ///< `quanta`: visits that ran no batch (credit below one batch)
  uint64_t aged_claims = 0;       ///< `buckets`: claims that served the fullest ring (ageing)
  uint64_t table_passes = 0;      ///< `quanta`: controller passes over the priority histogram
  uint64_t lane_spawns = 0;       ///< `buckets`, patch_lanes > 1: secondary entries tasks added of themselves
};

/// The megakernel as code without CUDA headers reaches it: MegakernelStrategy<W> implements it, and
/// Session::megakernel() returns the active strategy as this interface (null for other strategies).
class MegakernelControl {
 public:
  virtual ~MegakernelControl() = default;
  /// The settings the next step reads (segment_size and blocks_per_sm changes rebuild the queue there;
  /// the others apply to the next slice). The step validates them (InputError naming the field).
  virtual MegakernelSettings& settings() = 0;
  virtual const MegakernelSettings& settings() const = 0;
  /// The last slice's numbers and the counters since the last rebuild (all zero before the first step).
  virtual const MegakernelStats& stats() const = 0;
};

}  // namespace mv
