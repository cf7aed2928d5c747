// A deterministic discrete-event model of Kerbl's priority megakernel on the CPU (Kerbl 2012, §3–§5):
// predicts the order score S(n) (§6.2, sched/megakernel/score.h) from task durations and sort times, and shows
// how segment size, worker count, sort speed and time management trade off.
//
// What is modelled (times in µs from 0, simulated in integer ns so that runs are exact and repeatable):
//  - The queue: a fixed ring of n entries (no insertions during the run, as in §6.2's test), entry p at
//    queue position p, each a task with a priority (larger = more urgent) and a duration. Positions are
//    cut into segments of S entries; only full segments take part in sorting (§3.2), so a partial last
//    segment (n mod S entries) keeps its initial order.
//  - Segment state word (§3.3): ≥ 0 counts the working module's accesses (a segment is "in use" from its
//    first dequeue on and never sortable again); negative = locked by the controller. A worker that
//    dequeues an entry of a locked segment busy-waits until the unlock: a collision.
//  - W workers: a free worker at once dequeues the front entry (head = atomicAdd(head, 1)) and executes it
//    for the task's duration. The dequeue order is the execution order L that S(n) rates. At equal
//    times, workers dequeue before the controller decides.
//  - One controller (§4.3, Fig 2): a cursor walks adjacent full-segment pairs (a, a+1) from the back
//    (a+1 = last full segment) towards the front; each pass locks both, merges their 2S entries (the S
//    highest priorities, descending, to a; the rest, descending, to a+1; ties by task id), takes
//    t_sort[method] and unlocks, then moves one segment forward. It restarts at the back when the
//    predecessor a is unavailable (in use by the workers) or, with time management on, when the buffer
//    ahead is too small; after the pair (0, 1) it restarts as well. Methods follow the paper's sorted
//    flags: a segment's flag is set once it has been part of a pass (its entries are then in descending
//    order), so a pass is unsorted–unsorted (0 flags set), unsorted–sorted (1) or sorted–sorted (2).
//    With no insertions, flags are never cleared.
//  - Time management (§5.2): before locking (a, a+1) the controller accumulates, from segment a−1 towards
//    the front and down to the segment being dequeued, the remaining entries R and their shortest task
//    duration d_min (the segment meta data of §3.2/§5.3, exact here); it locks only when
//        d_min × floor(m × R / W)  ≥  t_sort[method]        (m: buffer_multiplier, §5.4).
//    Kerbl counts one shortest duration per buffer segment, which assumes a segment runs in one round
//    (W = S; in the formula here that is m = W / S). Here a worker dequeues at most once per d_min, and the busy ones finish after the decision,
//    so the first entry of a is dequeued more than floor(R / W) × d_min later: with m ≤ 1 and durations
//    as estimated no collision can happen. m > 1 counts m·R entries (optimistic: collisions possible);
//    the floor matters: with fewer than W entries ahead the workers may reach a at once.
//    If even the back pair is refused, the controller sleeps until the next dequeue and retries; it
//    stops for good once the back pair's predecessor is in use.
// What is not: memory latency, the cost of probing segment meta data, contention on the head counter,
// and device delays between dequeue and execution (§6.2 mentions those as a cause of lower scores).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sched/megakernel/bitonic.h"  // SortMethod: the three pair-sorting methods of §4.3

namespace mv {

/// Initial queue order of the priorities 0..n−1 (§6.2 uses ascending: the worst case, FIFO score 0).
enum class InitialOrder { Ascending, Random, Descending };

struct QueueModelParams {
  uint32_t n = 10000;          ///< tasks in the queue, [1, 2^24] (priorities 0..n−1 are exact floats)
  uint32_t segment = 256;      ///< segment size S in entries, [1, n] (§6.2 uses 256)
  uint32_t workers = 1056;     ///< concurrent workers W, ≥ 1 (an H100: 132 SMs × 8 warps)
  double task_us = 100.0;      ///< duration of every task, > 0 (used when `task_us_each` is empty)
  /// Per-task durations in µs (> 0), indexed by initial queue position; empty: all `task_us`.
  std::vector<double> task_us_each;
  /// Controller time of one pass per method (index = SortMethod), µs, each ≥ 1e-3 (the simulation runs
  /// about total time / t_sort passes).
  std::array<double, 3> sort_us = {20.0, 12.0, 6.0};
  /// §5.4's global multiplier m on the time buffers, > 0: entries ahead count m times (1: the provable
  /// bound, no collisions; > 1: optimistic).
  double buffer_multiplier = 1.0;
  bool time_management = true;     ///< §5.2's collision avoidance
  bool controller = true;          ///< false: no sorting, the queue runs FIFO
  InitialOrder order = InitialOrder::Ascending;
  uint64_t seed = 1;  ///< permutation for InitialOrder::Random
  /// Called now and then (about every 65536 events) with the entries dequeued so far; empty: never.
  std::function<void(uint32_t dequeued)> progress;
};

/// An upper estimate of the controller passes a run simulates: one per shortest sort time over the
/// makespan of ceil(n / W) rounds of the longest task (0 without a controller). The run's time grows with it.
double estimated_controller_passes(const QueueModelParams& p);

/// One worker's time line: from 0 until it finds the queue empty it executes or waits, never idles.
struct WorkerTimeline {
  double exec_us = 0.0;   ///< time spent executing tasks
  double wait_us = 0.0;   ///< time spent waiting on locked segments
  double done_us = 0.0;   ///< when it found the queue empty (= the finish of its last task)
  uint32_t tasks = 0;     ///< tasks it executed
};

struct QueueModelResult {
  std::vector<float> executed;  ///< L: priorities in dequeue (execution) order, n entries
  double score = 0.0;           ///< order_score(executed), Kerbl's S(n)
  double total_us = 0.0;        ///< makespan: the last task's finish
  double last_dequeue_us = 0.0; ///< when the last entry was dequeued
  uint64_t sort_passes = 0;     ///< controller passes (all methods)
  std::array<uint64_t, 3> passes_by_method{};  ///< index = SortMethod
  uint64_t collisions = 0;      ///< dequeues of an entry in a locked segment
  double wait_us = 0.0;         ///< total time workers waited on locked segments
  std::vector<WorkerTimeline> workers;  ///< W entries
};

/// The initial priorities of queue positions 0..n−1 for `order` (a permutation of 0..n−1; Random uses a
/// seeded Fisher–Yates shuffle, identical on every platform).
std::vector<float> initial_priorities(uint32_t n, InitialOrder order, uint64_t seed);

/// Runs the model; deterministic for given parameters. Throws std::invalid_argument naming a parameter
/// out of range.
QueueModelResult run_queue_model(const QueueModelParams& p);

}  // namespace mv
