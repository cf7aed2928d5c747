// GPU strategy `megakernel`: the priority megakernel of Kerbl 2012 (§3–§5, §6.3), with three queue designs
// (MegakernelSettings::queue):
//  - `kerbl`: the paper's design, described below: one segmented ring, sorted by controller blocks.
//  - `buckets` (default): K rings as a calendar queue over priority bands behind one ring of urgent tasks
//    (sched/megakernel/priority_table.h, claim_ring_warp in sched/megakernel/work_queue.cuh); workers serve the most urgent
//    non-empty band, so urgent tasks run again before the others' next turn. Block 0 only keeps house.
//  - `quanta`: one FIFO ring; each visit runs a priority-proportional number of sample batches drawn
//    from the task's credit and the rank of its priority (sched/megakernel/priority_table.h); block 0 keeps the
//    histogram's rank table current.
// Kerbl's ring turns over faster on an H100 than controllers can merge it, so under `kerbl` every live
// task still runs once per turn-over and the sample allocation stays uniform (docs/perf.md); the other two
// change where the samples go at the rate the GPU consumes tasks.
//
// The `kerbl` design:
// A persistent kernel runs one slice per step. Its grid holds as many blocks as can be resident at once
// (occupancy × SMs, launched cooperatively so that co-residency is guaranteed or the launch fails):
//  - block 0 is the controller (§3.1, §4.3): with all its threads it repeatedly locks a pair of adjacent
//    full segments of the work queue, sorts the pair descending with the bitonic segment sort of
//    sched/megakernel/bitonic_block.cuh (three methods by the segments' sorted flags, §4.3) and unlocks it, walking
//    from the back of the queue towards the front and restarting at the back when the predecessor is
//    unavailable (Fig 2). Time management (§5) lets it lock a pair only when the buffer segments between
//    the executing head and the pair will take the workers at least as long as the longest sort
//    measured for that method. Block 0 also mirrors the host's stop flag and watches for progress.
//  - every other block is part of the working module: each warp independently dequeues one task at a
//    time from the front (sched/megakernel/work_queue.cuh), executes it with run_task_warp, records its duration
//    (§5.3.1: the shortest per task) and, if the task is unfinished, enqueues it at the back with the
//    priority the execution wrote (§6.3: "tasks repeatedly append themselves to the end of the queue").
// The kernel's block size is one uniform setting (ScheduleSettings::block_size): the controller is one
// block of that size and uses all its threads for loading, sorting and storing a pair (§6.1: the
// controller's size is the kernel's block size).
//
// Slices (a step): the queue, its counters and the per-task metadata live in device memory across
// steps. A slice ends when (a) its budget of dequeues is used up (workers stop fetching), (b) the host
// sets the stop flag in mapped pinned memory (request_stop(), or the host's slice time limit), or (c)
// every task is finished; in-flight tasks complete and re-enqueue first, so the next slice continues
// exactly where this one stopped. invalidate() drops the queue; the next step rebuilds it from all
// unfinished tasks in descending order of their current priorities (a CUB radix sort), so a rebuilt
// queue starts fully sorted and its full segments are flagged sorted.
//
// Watchdog: every busy-wait is bounded by a clock64 budget (MegakernelSettings::watchdog_seconds at the
// device's clock rate) and a global abort flag; a timeout records an error in device memory, all blocks
// exit, and step() throws CudaError("megakernel watchdog: ...") and rebuilds the queue next time.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "sched/megakernel/bitonic.h"
#include "sched/megakernel/bitonic_block.cuh"
#include "sched/gpu/gpu_common.cuh"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/score.h"
#include "sched/strategy.h"
#include "sched/megakernel/work_queue.cuh"

namespace mv {

namespace mk {

/// Per-slice kernel parameters.
struct SliceParams {
  unsigned long long budget = 0;         ///< dequeue reservations allowed in this slice
  long long watchdog_cycles = 0;         ///< bound of every busy-wait
  long long host_poll_cycles = 0;        ///< how often block 0 reads the host stop flag
  const int* host_stop = nullptr;        ///< mapped pinned memory (device pointer)
  OrderRecord record;                    ///< the slice's execution order (record.key null: off)
  uint32_t worker_warps = 0;
  uint32_t controllers = 1;              ///< controller blocks P (blocks 0 … P−1); 1 when controller == 0
  int controller = 1;
  int time_management = 1;
  int collect_metadata = 1;
  int wave_aware = 0;
  uint32_t static_task_cycles = 0;
  uint32_t constant_segment_cycles = 0;
  float buffer_multiplier = 1.f;
  int pull_forward = 0;                  ///< MegakernelSettings::pull_forward
  uint32_t pull_distance = 4;
  // ---- QueueDesign::Buckets and ::Quanta (sched/megakernel/priority_table.h) ----
  int design = 0;                        ///< QueueDesign
  uint32_t age_period = 0;               ///< Buckets: every age_period-th claim serves the fullest ring
  uint32_t band_repeat = 1;              ///< Buckets: batches a claim may run in a row within its band
  uint32_t band_slack = 0;               ///< Buckets: bands a repeating task may drift below its claimed one
  uint32_t quantum_max = 4;              ///< Quanta: Q
  int* hist = nullptr;                   ///< [kPriorityBins] live tasks per priority bin
  float* bin_quantum = nullptr;          ///< [kPriorityBins] mean quantum of a bin (controller-written)
  float* credit = nullptr;               ///< [num tasks] Quanta: fractional batches carried over
  long long table_cycles = 0;            ///< how often the controller recomputes the table
};

/// Effective duration of a task for buffer estimates: unknown counts as 0 (pessimistic, §5.3.1).
__device__ MV_INLINE uint32_t known_cycles(uint32_t c) { return c == kUnknownCycles ? 0u : c; }

/// §5.3.1: what a worker does after executing `task`: keep the shortest duration, then finish or
/// re-enqueue the task with the priority its execution wrote. One lane. Returns false on abort.
template <class View>
__device__ bool finish_task(const View& v, const QueueView& q, const SliceParams& sp, uint32_t task, uint32_t paths,
                            long long cycles) {
  if (paths == 0) {
    // The task was already finished when dequeued: a duplicate entry. Its twin accounts for `live`.
    atomicAdd(&q.main->empty_executions, 1ull);
    return true;
  }
  const bool measure = sp.collect_metadata && sp.static_task_cycles == 0;
  uint32_t estimate = sp.static_task_cycles;
  if (measure) {
    const uint32_t c = static_cast<uint32_t>(cycles < 0 ? 0 : (cycles >= kUnknownCycles ? kUnknownCycles - 1 : cycles));
    // Plain read-modify-write: no other warp executes this task now; the next executor reads it after
    // the queue's release/acquire (enqueue → dequeue) and so sees this write.
    uint32_t m = q.task_min_cycles[task];
    if (c < m) q.task_min_cycles[task] = m = c;
    estimate = known_cycles(m);
  }
  // run_task_warp wrote patch_spp/priority in this lane and ended with __syncwarp (film writes of all
  // lanes ordered before what this lane does next).
  if (v.finished(task)) {
    DeviceAtomic<int>(q.main->live).fetch_sub(1, cuda::memory_order_relaxed);  // termination only
    return true;
  }
  return enqueue(q, v.priority[task], task, estimate, sp.collect_metadata != 0, sp.watchdog_cycles);
}

/// The working module (§3.1): this warp fetches, executes and re-enqueues tasks until the slice ends.
template <class View>
__device__ void worker_warp(const View& v, const QueueView& q, const SliceParams& sp) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  for (;;) {
    uint32_t task = kNoTask;
    if (lane == 0) {
      // Slice budget (a): reserve one dequeue. Relaxed: a count, not a publication. The controller adds
      // kStopBias on a stop request and raise_error on a watchdog, which makes every reservation fail.
      if (DeviceAtomic<unsigned long long>(q.ctl->reserved).fetch_add(1ull, cuda::memory_order_relaxed) <
          sp.budget) {
        Dequeued d;
        if (dequeue(q, sp.watchdog_cycles, d, sp.record)) {
          if (d.task < q.num_tasks) task = d.task;
          else raise_error(q, kErrBadTask, d.ticket);
        }
      }
    }
    task = __shfl_sync(kFull, task, 0);
    if (task == kNoTask) break;
    // Lane 0 acquired the entry (and, through the queue, the previous execution's film writes); the
    // warp barrier orders that before the other lanes' reads of the task's film.
    __syncwarp();
    const long long t0 = clock64();
    const uint32_t paths = v.run_task_warp(task);
    const long long t1 = clock64();
    if (lane == 0) finish_task(v, q, sp, task, paths, t1 - t0);
    __syncwarp();
  }
  if (lane == 0) atomicAdd(&q.main->workers_exited, 1u);
}

// ---- QueueDesign::Buckets and ::Quanta ----

/// Moves one live task's count in the priority histogram from its old priority's bin to its new one's,
/// or removes it when the task finished (one lane).
__device__ MV_INLINE void move_priority_bin(int* hist, float old_p, float new_p, bool finished) {
  const uint32_t a = priority_bin(old_p);
  if (finished) {
    atomicSub(&hist[a], 1);
    return;
  }
  const uint32_t b = priority_bin(new_p);
  if (a != b) {
    atomicSub(&hist[a], 1);
    atomicAdd(&hist[b], 1);
  }
}

/// After `paths` were traced in one visit of `task` (whose priority was `old_p` before it): the quanta's
/// histogram, then finish or re-enqueue (buckets: into its new priority band's ring) (one lane).
template <class View>
__device__ bool finish_ranked(const View& v, const QueueView& q, const SliceParams& sp, uint32_t task, uint32_t paths,
                              float old_p) {
  if (paths == 0) {
    atomicAdd(&q.main->empty_executions, 1ull);
    return true;
  }
  const float p = v.priority[task];
  const bool done = v.finished(task);
  if (sp.design == static_cast<int>(QueueDesign::Quanta)) move_priority_bin(sp.hist, old_p, p, done);
  if (done) {
    DeviceAtomic<int>(q.main->live).fetch_sub(1, cuda::memory_order_relaxed);
    return true;
  }
  uint32_t ring = 0;
  if (q.rings > 1) {  // buckets: urgent, or the band's ring in the calendar window
    DeviceAtomic<unsigned int> cur_band(q.main->cur_band);
    uint32_t cur = cur_band.load(cuda::memory_order_relaxed);
    if (p < kUrgentPriority) {
      // A priority above the window moves the window up to it (bucket_ring: the window's last bands then
      // share rings with its new first ones until they drain; the far ring is not part of the window).
      const uint32_t band = priority_band(p);
      if (band < cur) {
        const uint32_t before = cur_band.fetch_min(band, cuda::memory_order_relaxed);
        cur = before < band ? before : band;
      }
    }
    ring = bucket_ring(p, cur, q.rings);
  }
  return enqueue(q.ring(ring), p, task, 0, false, sp.watchdog_cycles);
}

/// Buckets: whether a task claimed from `ring` with priority `claimed_p` may run again now that its
/// priority is p: it became urgent, or it was not urgent and its band is at most `slack` bands less urgent
/// than the band it was claimed from (a more urgent band always qualifies). Never for the far ring (below
/// the window: not the most urgent band). Pure: no memory traffic.
__device__ MV_INLINE bool stays_in_claimed_band(const QueueView& q, float claimed_p, float p, uint32_t ring,
                                                uint32_t slack) {
  if (ring + 1u >= q.rings) return false;
  if (p >= kUrgentPriority) return true;
  return claimed_p < kUrgentPriority && priority_band(p) <= priority_band(claimed_p) + slack;
}

/// Reserves one unit of the slice's budget (lane 0); false when the slice's budget or a stop is reached.
__device__ MV_INLINE bool reserve_work(const QueueView& q, const SliceParams& sp, unsigned long long units) {
  return DeviceAtomic<unsigned long long>(q.main->reserved).fetch_add(units, cuda::memory_order_relaxed) < sp.budget;
}

/// QueueDesign::Buckets: the warp claims the front task of the most urgent non-empty band (every
/// age_period-th claim: of the fullest ring), executes it once and re-enqueues it into its new priority
/// band's ring (claim_ring_warp, bucket_ring).
template <class View>
__device__ void worker_warp_buckets(const View& v, const QueueView& q, const SliceParams& sp) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t claims = 0;
  for (;;) {
    int go = lane == 0 ? static_cast<int>(reserve_work(q, sp, 1ull)) : 0;
    if (!__shfl_sync(kFull, go, 0)) break;
    const bool aged = sp.age_period != 0 && ++claims % sp.age_period == 0;
    const int ring = claim_ring_warp(q, sp.watchdog_cycles, aged);
    if (ring < 0) break;
    uint32_t task = kNoTask;
    float old_p = 0.f;
    if (lane == 0) {
      Dequeued d;
      if (take_claimed(q.ring(static_cast<uint32_t>(ring)), sp.watchdog_cycles, d, sp.record)) {
        if (d.task < q.num_tasks) {
          task = d.task;
          old_p = v.priority[task];
          if (aged) atomicAdd(&q.main->aged_claims, 1ull);
          // A far task taken because the window was empty: the window moves down to its band.
          if (!aged && ring == static_cast<int>(q.rings) - 1 && d.key < kUrgentPriority)
            DeviceAtomic<unsigned int>(q.main->cur_band).fetch_max(priority_band(d.key), cuda::memory_order_relaxed);
        } else {
          raise_error(q, kErrBadTask, d.ticket);
        }
      }
    }
    task = __shfl_sync(kFull, task, 0);
    if (task == kNoTask) break;
    __syncwarp();
    // Up to band_repeat batches in a row while the task stays in the band it was claimed from (an aged
    // claim runs once: it served the fullest ring, not the most urgent one).
    for (uint32_t runs = 1;; ++runs) {
      const uint32_t paths = v.run_task_warp(task);
      int again = 0;
      if (lane == 0) {
        again = !aged && runs < sp.band_repeat && paths != 0 && !v.finished(task) &&
                stays_in_claimed_band(q, old_p, v.priority[task], static_cast<uint32_t>(ring), sp.band_slack);
        if (again) again = reserve_work(q, sp, 1ull);  // the slice's budget counts every batch
        if (!again) finish_ranked(v, q, sp, task, paths, old_p);
      }
      again = __shfl_sync(kFull, again, 0);
      __syncwarp();
      if (!again) break;
    }
  }
  if (lane == 0) atomicAdd(&q.main->workers_exited, 1u);
}

/// QueueDesign::Quanta: the warp dequeues the front task, draws its quantum k from its priority's mean
/// quantum and its credit (draw_quantum), runs k batches back to back (k = 0: re-enqueues it untouched,
/// a yield) and re-enqueues it at the back. The slice's budget counts batches, not visits.
template <class View>
__device__ void worker_warp_quanta(const View& v, const QueueView& q, const SliceParams& sp) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  for (;;) {
    uint32_t task = kNoTask, k = 0;
    float old_p = 0.f;
    if (lane == 0 && reserve_work(q, sp, 1ull)) {
      Dequeued d;
      if (dequeue(q, sp.watchdog_cycles, d, sp.record)) {
        if (d.task < q.num_tasks) {
          task = d.task;
          old_p = v.priority[task];
          float c = sp.credit[task];
          k = draw_quantum(c, __ldcg(&sp.bin_quantum[priority_bin(old_p)]), sp.quantum_max);
          sp.credit[task] = c;  // only the visiting warp touches a task's credit
          DeviceAtomic<unsigned long long> reserved(q.main->reserved);
          if (k == 0) {
            reserved.fetch_sub(1ull, cuda::memory_order_relaxed);  // a yield costs no budget
            atomicAdd(&q.main->yields, 1ull);
          } else if (k > 1) {
            reserved.fetch_add(k - 1ull, cuda::memory_order_relaxed);
          }
        } else {
          raise_error(q, kErrBadTask, d.ticket);
        }
      }
    }
    task = __shfl_sync(kFull, task, 0);
    if (task == kNoTask) break;
    k = __shfl_sync(kFull, k, 0);
    __syncwarp();
    if (k == 0) {
      if (lane == 0) enqueue(q, old_p, task, 0, false, sp.watchdog_cycles);
      __syncwarp();
      continue;
    }
    uint32_t paths = 0;
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t p = v.run_task_warp(task);  // same value in every lane: the loop stays uniform
      paths += p;
      if (p == 0) break;  // finished within the quantum
    }
    if (lane == 0) finish_ranked(v, q, sp, task, paths, old_p);
    __syncwarp();
  }
  if (lane == 0) atomicAdd(&q.main->workers_exited, 1u);
}

/// Block-wide exclusive suffix sum: returns Σ of `v` over the threads with a larger index, and the
/// block's total in `total`. `warp_sums` is 32 words of shared memory. All threads must call it.
__device__ MV_INLINE uint32_t block_suffix_sum(uint32_t v, uint32_t* warp_sums, uint32_t& total) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31u) >> 5;
  uint32_t x = v;  // inclusive suffix within the warp
  for (uint32_t off = 1; off < 32; off <<= 1) {
    const uint32_t t = __shfl_down_sync(kFull, x, off);
    if (lane + off < 32) x += t;
  }
  if (lane == 0) warp_sums[warp] = x;
  __syncthreads();
  uint32_t above = 0, all = 0;
  for (uint32_t w = 0; w < warps; ++w) {
    all += warp_sums[w];
    if (w > warp) above += warp_sums[w];
  }
  __syncthreads();  // warp_sums may be reused by the next call
  total = all;
  return above + x - v;
}

/// The whole block: turns the histogram into the table bin → mean quantum of sched/megakernel/priority_table.h.
/// Reads the histogram as it is (counts move while it runs: a transient error of a few tasks' rank).
/// Bins of thread t: [t·c, t·c + c), c = ⌈kPriorityBins / blockDim.x⌉.
__device__ MV_INLINE void compute_priority_table(const int* hist, float* bin_quantum, uint32_t quantum_max,
                                                 uint32_t* warp_sums) {
  const uint32_t chunk = (kPriorityBins + blockDim.x - 1) / blockDim.x;
  const uint32_t lo = min(threadIdx.x * chunk, kPriorityBins), hi = min(lo + chunk, kPriorityBins);
  uint32_t mine = 0;
  for (uint32_t b = lo; b < hi; ++b) {
    const int c = __ldcg(&hist[b]);
    mine += c > 0 ? static_cast<uint32_t>(c) : 0u;
  }
  uint32_t live = 0;
  uint32_t above = block_suffix_sum(mine, warp_sums, live);
  for (uint32_t b = hi; b-- > lo;) {
    const int c = __ldcg(&hist[b]);
    const uint32_t n = c > 0 ? static_cast<uint32_t>(c) : 0u;
    const float u = priority_mid_rank(above, n, live);
    __stcg(&bin_quantum[b], priority_quantum(u, quantum_max));
    above += n;
  }
}

/// Block 0's shared decision state (thread 0 decides, the block follows).
struct ControllerShared {
  unsigned long long head;
  long long front;          ///< front segment of the pair (absolute)
  long long back;           ///< back segment: front + 1 (Fig 2), or the walk's segment (pull_forward)
  int action;
  int a_sorted, b_sorted;
  unsigned long long buffer_sum;
  unsigned int buffer_min;
  unsigned int est_min[2];
  unsigned long long sort_max[3];  ///< §5.3.2: longest lock-to-unlock cycles per SortMethod (thread 0 writes)
};

enum ControllerAction : int { kExit = 0, kIdle = 1, kEvaluate = 2, kSort = 3, kRestart = 4 };

/// Thread 0 of the controller: the state it keeps across iterations.
struct ControllerLocal {
  uint32_t index = 0;                     ///< this controller's number i in [0, P)
  long long cursor = -1;                  ///< back segment of the next pair; −1: restart at the back
  long long pull_extra = 0;               ///< pull_forward: segments added to the distance after refusals
  unsigned long long last_head = ~0ull;
  unsigned int last_exited = ~0u;
  long long progress_t = 0, poll_t = 0, lock_t = 0;
};

/// Thread 0: housekeeping (exit, progress watchdog, host stop flag) and the choice of the next pair
/// (Fig 2). Returns kExit, kIdle or kEvaluate (pair in cs.front, cs.front + 1).
__device__ MV_INLINE int controller_plan(const QueueView& q, const SliceParams& sp, ControllerLocal& me,
                                         ControllerShared& cs) {
  QueueControl& c = *q.ctl;
  if (aborted(q)) return kExit;
  const unsigned int exited = DeviceAtomic<unsigned int>(q.main->workers_exited).load(cuda::memory_order_relaxed);
  if (exited >= sp.worker_warps) return kExit;
  const unsigned long long head = DeviceAtomic<unsigned long long>(c.head).load(cuda::memory_order_relaxed);
  const unsigned long long tail = DeviceAtomic<unsigned long long>(c.tail).load(cuda::memory_order_relaxed);
  const long long now = clock64();
  // Progress watchdog: some dequeue or reservation (any ring) or some worker exit within every watchdog
  // period.
  const unsigned long long progress =
      head + DeviceAtomic<unsigned long long>(q.main->reserved).load(cuda::memory_order_relaxed);
  if (progress != me.last_head || exited != me.last_exited) {
    me.last_head = progress;
    me.last_exited = exited;
    me.progress_t = now;
  } else if (now - me.progress_t > sp.watchdog_cycles) {
    raise_error(q, kErrNoProgress, head);
    return kExit;
  }
  // (b) Host stop flag: a system-scope read over PCIe (~1 µs), so only every host_poll_cycles.
  if (now - me.poll_t > sp.host_poll_cycles) {
    me.poll_t = now;
    // A volatile load of mapped host memory is a system-scope read that the compiler cannot hoist.
    if (sp.host_stop && *reinterpret_cast<const volatile int*>(sp.host_stop) != 0 &&
        DeviceAtomic<int>(c.stop).exchange(1, cuda::memory_order_relaxed) == 0)
      DeviceAtomic<unsigned long long>(c.reserved).fetch_add(kStopBias, cuda::memory_order_relaxed);
  }
  if (!sp.controller) return kIdle;
  const long long S_log2 = q.segment_log2;
  const long long hs = static_cast<long long>(head >> S_log2);      // segment in execution: never touched
  const long long back = static_cast<long long>(tail >> S_log2) - 1; // last segment with all tickets taken
  // Controller i of P restarts at the back of the i-th of P equal ranges of [hs + 1, back] (i = 0: the
  // back itself, Kerbl's single controller).
  const long long start = back - ((back - hs - 1 > 0 ? back - hs - 1 : 0) * me.index) / sp.controllers;
  if (me.cursor < 0 || me.cursor > back) me.cursor = start;
  if (sp.pull_forward) {
    const long long target = hs + 1 + static_cast<long long>(sp.pull_distance) + me.pull_extra + me.index;
    if (me.cursor <= target) {  // the walk reached the target: restart at the back of its range
      if (me.cursor != start) atomicAdd(&c.ctrl_restarts, 1ull);
      me.cursor = start;
      if (me.cursor <= target) {
        // The queue is too short for this distance: let the adaptive part shrink again, or a controller
        // that was pushed far out by refusals would stay idle for the rest of the slice.
        me.pull_extra /= 2;
        me.cursor = -1;
        return kIdle;
      }
    }
    cs.head = head;
    cs.front = target;
    cs.back = me.cursor;
    cs.a_sorted = q.seg_sorted[q.seg_slot(target)] == q.seg_tag(target);
    cs.b_sorted = q.seg_sorted[q.seg_slot(me.cursor)] == q.seg_tag(me.cursor);
    cs.buffer_sum = 0;
    cs.buffer_min = 0xffffffffu;
    cs.est_min[0] = cs.est_min[1] = 0xffffffffu;
    return kEvaluate;
  }
  if (me.cursor - 1 < hs + 1) {  // predecessor in execution (or head too close): restart at the back
    if (me.cursor != start) atomicAdd(&c.ctrl_restarts, 1ull);
    me.cursor = start;
    if (me.cursor - 1 < hs + 1) {  // the queue is too short for any pair behind the head
      me.cursor = -1;
      return kIdle;
    }
  }
  const long long front = me.cursor - 1;
  cs.head = head;
  cs.front = front;
  cs.back = front + 1;
  cs.a_sorted = q.seg_sorted[q.seg_slot(front)] == q.seg_tag(front);
  cs.b_sorted = q.seg_sorted[q.seg_slot(front + 1)] == q.seg_tag(front + 1);
  cs.buffer_sum = 0;
  cs.buffer_min = 0xffffffffu;
  cs.est_min[0] = cs.est_min[1] = 0xffffffffu;
  return kEvaluate;
}

/// Thread 0: §5.2 time check, then the two try-locks. Returns kSort (both held) or kRestart.
__device__ MV_INLINE int controller_lock(const QueueView& q, const SliceParams& sp, ControllerLocal& me,
                                         ControllerShared& cs) {
  QueueControl& c = *q.ctl;
  const long long front = cs.front;
  const int method = static_cast<int>(choose_sort_method(cs.a_sorted, cs.b_sorted));
  if (sp.time_management) {
    const long long hs = static_cast<long long>(cs.head >> q.segment_log2);
    const long long segments = front - 1 - hs;  // whole buffer segments between head and pair
    const unsigned long long entries = (static_cast<unsigned long long>(front) << q.segment_log2) - cs.head;
    const bool measured = sp.collect_metadata && sp.static_task_cycles == 0;
    const double per_segment =
        !sp.collect_metadata ? sp.constant_segment_cycles : static_cast<double>(sp.static_task_cycles);
    double buffer;
    if (sp.wave_aware) {
      const double shortest = measured ? (segments > 0 ? cs.buffer_min : 0.0) : per_segment;
      buffer = static_cast<double>(entries / sp.worker_warps) * shortest;
    } else {
      buffer = measured ? static_cast<double>(cs.buffer_sum) : static_cast<double>(segments) * per_segment;
    }
    if (buffer * sp.buffer_multiplier < static_cast<double>(cs.sort_max[method])) {
      atomicAdd(&c.ctrl_time_refusals, 1ull);
      if (sp.pull_forward) {  // the target is too close to the head: aim further ahead
        if (me.pull_extra < 256) ++me.pull_extra;
        return kRestart;  // keep the walk's position
      }
      me.cursor = -1;
      return kRestart;
    }
  }
  const uint32_t fa = q.seg_slot(front), fb = q.seg_slot(cs.back);
  if (!try_lock_segment(q, fa)) {
    atomicAdd(&c.ctrl_lock_failures, 1ull);
    me.cursor = -1;
    return kRestart;
  }
  if (!try_lock_segment(q, fb)) {
    unlock_segment(q, fa);
    atomicAdd(&c.ctrl_lock_failures, 1ull);
    me.cursor = -1;
    return kRestart;
  }
  // With several controllers another one may have sorted the pair since the plan: read the flags again
  // under the locks (their writer held these locks when it wrote them).
  cs.a_sorted = q.seg_sorted[fa] == q.seg_tag(front);
  cs.b_sorted = q.seg_sorted[fb] == q.seg_tag(cs.back);
  // The head may have moved into the pair since the plan: then workers wait for us. Give it back.
  const unsigned long long head = DeviceAtomic<unsigned long long>(c.head).load(cuda::memory_order_relaxed);
  if (static_cast<long long>(head >> q.segment_log2) >= front) {
    unlock_segment(q, fb);
    unlock_segment(q, fa);
    atomicAdd(&c.ctrl_restarts, 1ull);
    me.cursor = -1;
    return kRestart;
  }
  me.lock_t = clock64();
  return kSort;
}

/// The controller (§3.1, §4.3, §5): block 0, all threads. s_keys/s_vals: 2S entries of dynamic shared
/// memory. Returns when all worker warps have left or on abort.
inline __device__ void controller_block(const QueueView& q, const SliceParams& sp, float* s_keys, uint32_t* s_vals,
                                        uint32_t index) {
  __shared__ ControllerShared cs;
  const uint32_t tid = threadIdx.x, threads = blockDim.x;
  const uint32_t S = q.segment_size();
  const bool measured = sp.collect_metadata && sp.static_task_cycles == 0;
  ControllerLocal me;
  me.index = index;
  if (tid == 0) {
    for (int m = 0; m < 3; ++m) cs.sort_max[m] = q.ctl->sort_cycles_max[m];
    me.progress_t = clock64();
    me.poll_t = me.progress_t - sp.host_poll_cycles - 1;
  }
  for (;;) {
    if (tid == 0) cs.action = controller_plan(q, sp, me, cs);
    __syncthreads();
    const int planned = cs.action;
    if (planned == kExit) break;  // uniform: every thread read the same value
    if (planned == kIdle) {
      if (tid == 0) __nanosleep(sp.controller ? 500 : 2000);
      __syncthreads();  // nobody may still read cs.action when thread 0 writes it again
      continue;
    }
    // §5.2: accumulate the buffer segments' estimates (hs, front) in parallel.
    const long long front = cs.front;
    if (sp.time_management && measured) {
      const long long hs = static_cast<long long>(cs.head >> q.segment_log2);
      unsigned long long sum = 0;
      unsigned int mn = 0xffffffffu;
      for (long long k = hs + 1 + tid; k < front; k += threads) {
        // Relaxed read of a heuristic written with atomicMax by enqueuers and by this controller.
        const uint32_t e = unpack_estimate(
            DeviceAtomic<unsigned long long>(q.seg_estimate[q.seg_slot(k)]).load(cuda::memory_order_relaxed),
            q.seg_tag(k));
        sum += e;
        mn = e < mn ? e : mn;
      }
      if (sum) atomicAdd(&cs.buffer_sum, sum);
      if (mn != 0xffffffffu) atomicMin(&cs.buffer_min, mn);
    }
    __syncthreads();
    if (tid == 0) cs.action = controller_lock(q, sp, me, cs);
    __syncthreads();
    if (cs.action != kSort) {
      __syncthreads();
      continue;
    }
    // Both segments are ours. §3.2: only full, untouched segments may be sorted: every slot must hold
    // ticket + 1 (written, not consumed). The acquire loads make the enqueuers' key/task writes visible
    // to this thread, and __syncthreads_and (a CTA barrier) to the whole block.
    const long long back = cs.back;
    const unsigned long long t0 = static_cast<unsigned long long>(front) << q.segment_log2;
    const unsigned long long t1 = static_cast<unsigned long long>(back) << q.segment_log2;
    bool full = true;
    for (uint32_t i = tid; i < 2 * S; i += threads) {
      const unsigned long long p = i < S ? t0 + i : t1 + (i - S);
      full &= DeviceAtomic<unsigned long long>(q.seq[q.slot(p)]).load(cuda::memory_order_acquire) == p + 1;
    }
    if (!__syncthreads_and(full)) {
      if (tid == 0) {
        unlock_segment(q, q.seg_slot(back));
        unlock_segment(q, q.seg_slot(front));
        atomicAdd(&q.ctl->ctrl_not_full, 1ull);
        me.cursor = -1;
      }
      __syncthreads();
      continue;
    }
    const bool a_sorted = cs.a_sorted, b_sorted = cs.b_sorted;
    const SortMethod method = choose_sort_method(a_sorted, b_sorted);
    const uint32_t base_a = q.seg_slot(front) << q.segment_log2, base_b = q.seg_slot(back) << q.segment_log2;
    load_segment_pair(s_keys, s_vals, q.key + base_a, q.task + base_a, q.key + base_b, q.task + base_b, S, a_sorted,
                      b_sorted, tid, threads);
    __syncthreads();
    sort_segment_pair(s_keys, s_vals, S, method);  // ends with a barrier: the sorted pair is visible
    store_segment_pair(s_keys, s_vals, q.key + base_a, q.task + base_a, q.key + base_b, q.task + base_b, S, tid,
                       threads);
    if (measured) {  // §5.3.1: the segments' new shortest durations (their contents changed)
      unsigned int mn_a = 0xffffffffu, mn_b = 0xffffffffu;
      for (uint32_t i = tid; i < 2 * S; i += threads) {
        const uint32_t c = known_cycles(q.task_min_cycles[s_vals[i]]);
        if (i < S) mn_a = c < mn_a ? c : mn_a;
        else mn_b = c < mn_b ? c : mn_b;
      }
      atomicMin(&cs.est_min[0], mn_a);
      atomicMin(&cs.est_min[1], mn_b);
    }
    // Every thread fences its own stores to the ring, then the barrier orders them before thread 0's
    // release in unlock_segment (cumulativity): a worker that acquires the state sees the sorted pair.
    __threadfence();
    __syncthreads();
    if (tid == 0) {
      QueueControl& c = *q.ctl;
      const uint32_t fa = q.seg_slot(front), fb = q.seg_slot(back);
      if (measured) {
        // No enqueue can write these slots now (they are full and unconsumed). An enqueuer of this lap may
        // still be between its seq store and its fetch_max; its late max can only lower the estimate to a
        // duration of a task in the pair: pessimistic, harmless.
        atomicExch(&q.seg_estimate[fa], pack_estimate(q.seg_tag(front), cs.est_min[0]));
        atomicExch(&q.seg_estimate[fb], pack_estimate(q.seg_tag(back), cs.est_min[1]));
      }
      q.seg_sorted[fa] = q.seg_tag(front);  // controller-only words
      q.seg_sorted[fb] = q.seg_tag(back);
      const int m = static_cast<int>(method);
      const unsigned long long took = static_cast<unsigned long long>(clock64() - me.lock_t);
      unlock_segment(q, fb);
      unlock_segment(q, fa);
      if (took > cs.sort_max[m]) {  // §5.3.2: keep the longest (of every controller)
        cs.sort_max[m] = took;
        atomicMax(&c.sort_cycles_max[m], took);
      }
      atomicAdd(&c.sort_passes[m], 1ull);  // controllers only
      if (sp.pull_forward) {
        me.cursor = back - 1;  // pull from the next segment towards the front into the target
        if (me.pull_extra > 0) --me.pull_extra;
      } else {
        me.cursor = front;  // Fig 2: one segment towards the front
      }
    }
    __syncthreads();
  }
}

/// QueueDesign::Buckets and ::Quanta: block 0 keeps the slice's housekeeping (exit, progress watchdog,
/// host stop flag: controller_plan with sorting off) and recomputes the table every table_cycles.
inline __device__ void table_controller_block(const QueueView& q, const SliceParams& sp) {
  __shared__ ControllerShared cs;
  __shared__ int action;
  __shared__ uint32_t warp_sums[32];
  ControllerLocal me;
  long long last = 0;
  if (threadIdx.x == 0) {
    me.progress_t = clock64();
    me.poll_t = me.progress_t - sp.host_poll_cycles - 1;
    last = me.progress_t;
  }
  for (;;) {
    if (threadIdx.x == 0) {
      action = controller_plan(q, sp, me, cs);  // sp.controller == 0: kExit or kIdle
      const long long now = clock64();
      if (action != kExit && now - last >= sp.table_cycles) {
        action = kEvaluate;
        last = now;
      }
    }
    __syncthreads();
    const int a = action;
    if (a == kExit) break;
    if (a == kEvaluate && sp.design == static_cast<int>(QueueDesign::Quanta)) {
      compute_priority_table(sp.hist, sp.bin_quantum, sp.quantum_max, warp_sums);
      if (threadIdx.x == 0) atomicAdd(&q.main->table_passes, 1ull);
    } else if (threadIdx.x == 0) {
      __nanosleep(500);
    }
    __syncthreads();  // nobody may still read `action` when thread 0 writes it again
  }
}

/// Register cap of the persistent kernel. Unbounded, the patch-task instance takes 86 registers: 5 blocks
/// of 128 threads per SM, where the `uniform` kernel (79) fits 6; the occupancy difference alone cost
/// 7 % of throughput on an H100 (docs/perf.md). 80 registers give the same 6 blocks (256-register
/// allocation units per warp).
inline constexpr int kMegakernelMaxRegisters = 80;

/// The persistent kernel of one queue design (a template parameter, so that each design's kernel holds only
/// its own worker loop and fits the register cap without spilling): blocks 0 … P−1 control, the others work.
template <class View, int Design>
__global__ void __maxnreg__(kMegakernelMaxRegisters) megakernel_kernel(View v, QueueView q, SliceParams sp) {
  extern __shared__ uint32_t mk_smem[];
  if constexpr (Design == static_cast<int>(QueueDesign::Kerbl)) {
    if (blockIdx.x < sp.controllers) {
      const uint32_t S = q.segment_size();
      controller_block(q, sp, reinterpret_cast<float*>(mk_smem), mk_smem + 2 * S, blockIdx.x);
    } else {
      worker_warp(v, q, sp);
    }
  } else {
    if (blockIdx.x < sp.controllers) table_controller_block(q, sp);
    else if constexpr (Design == static_cast<int>(QueueDesign::Buckets)) worker_warp_buckets(v, q, sp);
    else worker_warp_quanta(v, q, sp);
  }
}

/// The persistent kernel of queue design `d`.
template <class View>
const void* megakernel_entry(QueueDesign d) {
  switch (d) {
    case QueueDesign::Buckets: return reinterpret_cast<const void*>(&megakernel_kernel<View, 1>);
    case QueueDesign::Quanta: return reinterpret_cast<const void*>(&megakernel_kernel<View, 2>);
    case QueueDesign::Kerbl: break;
  }
  return reinterpret_cast<const void*>(&megakernel_kernel<View, 0>);
}

/// Resets the per-slice words of QueueControl. (The non-template kernels here are `static`: this header
/// is included by several translation units, without relocatable device code.)
static __global__ void begin_slice_kernel(QueueControl* c) {
  c->record_next = 0;
  c->reserved = 0;
  c->workers_exited = 0;
  c->stop = 0;
  c->abort = 0;
  c->error = 0;
  c->error_block = 0;
  c->error_detail = 0;
}

/// flags[i] = the task order[i] is unfinished (rebuild).
template <class View>
__global__ void unfinished_in_order_kernel(View v, const uint32_t* order, uint8_t* flags, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = v.finished(order[i]) ? 0 : 1;
}

/// Rebuild: entries [0, n_live) from `list` (descending priority), every other slot free for lap 0.
static __global__ void init_ring_kernel(QueueView q, const float* priority, const uint32_t* list, const int* n_live_ptr) {
  const uint64_t n_live = static_cast<uint64_t>(*n_live_ptr);
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < q.capacity();
       i += uint64_t(gridDim.x) * blockDim.x) {
    if (i < n_live) {
      const uint32_t t = list[i];
      q.key[i] = priority[t];
      q.task[i] = t;
      q.seq[i] = i + 1;
    } else {
      q.seq[i] = i;
    }
  }
}

/// Rebuild: segment words and counters. Lap 0's full segments are sorted when `sorted` (the list is). Every segment
/// holding rebuilt entries gets the estimate "0 cycles" (unknown: no task has been measured since the
/// rebuild); since atomicMax keeps the shortest duration of a lap, later enqueues cannot raise it.
static __global__ void init_segments_kernel(QueueView q, const int* n_live_ptr, bool sorted) {
  const uint32_t n_live = static_cast<uint32_t>(*n_live_ptr);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < q.segment_slots()) {
    const uint64_t first = uint64_t(j) * q.segment_size();
    const bool full = first + q.segment_size() <= n_live;
    q.seg_state[j] = 0;
    q.seg_sorted[j] = full && sorted ? q.seg_tag(j) : 0u;
    q.seg_estimate[j] = first < n_live ? pack_estimate(q.seg_tag(j), 0u) : 0ull;
  }
  if (j == 0) {
    QueueControl* c = q.ctl;
    c->head = 0;
    c->tail = n_live;
    c->avail = static_cast<int>(n_live);
    c->live = static_cast<int>(n_live);
  }
}

/// Rebuild (Quanta): counts the live list's priorities into the zeroed histogram.
static __global__ void priority_hist_kernel(const float* priority, const uint32_t* list, const int* n_live_ptr,
                                            int* hist) {
  const uint32_t n = static_cast<uint32_t>(*n_live_ptr);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&hist[priority_bin(priority[list[i]])], 1);
}

/// Rebuild (Quanta): the table from the histogram, by one block (the controller's own code).
static __global__ void priority_table_kernel(const int* hist, float* bin_quantum, uint32_t quantum_max) {
  __shared__ uint32_t warp_sums[32];
  compute_priority_table(hist, bin_quantum, quantum_max, warp_sums);
}

/// Rebuild (Buckets): cur = the most urgent band of the live list's ranked (not urgent) priorities;
/// kNoBand when there is none.
static __global__ void first_band_kernel(const float* priority, const uint32_t* list, const int* n_live_ptr,
                                         QueueControl* main) {
  const uint32_t n = static_cast<uint32_t>(*n_live_ptr);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (priority[list[i]] < kUrgentPriority) atomicMin(&main->cur_band, priority_band(priority[list[i]]));
}

/// Rebuild (Buckets): flags[i] = list entry i belongs to ring k of the window that starts at cur.
static __global__ void ring_flags_kernel(const float* priority, const uint32_t* list, const int* n_live_ptr,
                                         const QueueControl* main, uint32_t rings, uint32_t k, uint8_t* flags,
                                         uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    flags[i] = i < static_cast<uint32_t>(*n_live_ptr) && bucket_ring(priority[list[i]], main->cur_band, rings) == k;
}

/// RAII int in mapped pinned host memory: the host writes it while a kernel reads it (stop requests).
class MappedFlag {
 public:
  MappedFlag() {
    MV_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(int), cudaHostAllocMapped));
    set(0);
    MV_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  ~MappedFlag() {
    if (host_) cudaFreeHost(host_);  // destructor path: errors cannot be reported here
  }
  MappedFlag(const MappedFlag&) = delete;
  MappedFlag& operator=(const MappedFlag&) = delete;
  void set(int v) { __atomic_store_n(host_, v, __ATOMIC_SEQ_CST); }
  int get() const { return __atomic_load_n(host_, __ATOMIC_SEQ_CST); }
  const int* device() const { return device_; }

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

}  // namespace mk

template <class W>
class MegakernelStrategy final : public Strategy<W>, public MegakernelControl {
  using View = typename W::View;

 public:
  /// Touches no CUDA: the registry constructs a probe instance on machines without a GPU.
  MegakernelStrategy() = default;
  const StrategyInfo& info() const override { return info_; }
  void invalidate() override { valid_ = false; }

  MegakernelSettings& settings() override { return settings_; }
  const MegakernelSettings& settings() const override { return settings_; }
  Params* params() override { return &params_; }
  const MegakernelStats& stats() const override { return stats_; }

  /// The last slice's execution order when record_order is on (else empty), entry i the i-th visit:
  /// its priority key, its task and its ticket in its ring (QueueDesign::Buckets: each ring counts its
  /// own tickets). order_score(recorded_keys()) is stats().order_score.
  const std::vector<float>& recorded_keys() const { return order_keys_; }
  const std::vector<uint32_t>& recorded_tasks() const { return order_tasks_; }
  const std::vector<unsigned long long>& recorded_tickets() const { return order_tickets_; }

  /// Asks the running slice to stop early (any thread; no effect when no slice runs). The slice ends
  /// cleanly: in-flight tasks complete and re-enqueue.
  void request_stop() {
    if (mk::MappedFlag* f = stop_flag_ptr_.load()) f->set(1);
  }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    settings_.validate();
    if (s.block_size < 32 || s.block_size > 1024 || s.block_size % 32)
      throw InputError("", "block_size", std::to_string(s.block_size) + " is not a multiple of 32 in [32, 1024]");
    configure(w.num_tasks(), s.block_size);
    View v = w.view(Side::Device);
    if (!valid_) rebuild(w, v);
    if (live_ == 0) return StepStats{};

    const uint64_t per_task = w.work_per_task();
    const uint64_t budget_tasks = std::max<uint64_t>(1, (budget_work + per_task - 1) / per_task);
    mk::SliceParams sp;
    sp.budget = budget_tasks;
    sp.watchdog_cycles = static_cast<long long>(settings_.watchdog_seconds * clock_khz_ * 1000.0);
    sp.host_poll_cycles = static_cast<long long>(20e-6 * clock_khz_ * 1000.0);  // every ~20 µs
    sp.host_stop = stop_flag_->device();
    const bool kerbl = settings_.queue == QueueDesign::Kerbl;
    sp.controllers = kerbl && settings_.controller ? settings_.controllers : 1u;
    if (sp.controllers >= grid_)
      throw InputError("", "controllers",
                       std::to_string(sp.controllers) + " controller blocks leave no worker in a grid of " +
                           std::to_string(grid_) + " blocks");
    worker_warps_ = (grid_ - sp.controllers) * (block_ / 32);
    sp.worker_warps = worker_warps_;
    sp.controller = kerbl && settings_.controller;
    sp.design = static_cast<int>(settings_.queue);
    sp.age_period = settings_.age_period;
    sp.band_repeat = settings_.band_repeat;
    sp.band_slack = settings_.band_slack;
    sp.quantum_max = settings_.quantum_max;
    sp.hist = hist_.data();
    sp.bin_quantum = bin_quantum_.data();
    sp.credit = credit_.data();
    sp.table_cycles = static_cast<long long>(2e-6 * clock_khz_ * 1000.0);  // every ~2 µs
    sp.time_management = settings_.time_management;
    sp.collect_metadata = settings_.collect_metadata;
    sp.wave_aware = settings_.wave_aware_buffer;
    sp.pull_forward = settings_.pull_forward;
    sp.pull_distance = settings_.pull_distance;
    sp.static_task_cycles = settings_.static_task_cycles;
    sp.constant_segment_cycles = settings_.constant_segment_cycles;
    sp.buffer_multiplier = settings_.buffer_multiplier;
    if (settings_.record_order) {
      record_.resize(settings_.record_capacity);
      record_task_.resize(settings_.record_capacity);
      record_ticket_.resize(settings_.record_capacity);
      sp.record.key = record_.data();
      sp.record.task = record_task_.data();
      sp.record.ticket = record_ticket_.data();
      sp.record.cap = settings_.record_capacity;
      sp.record.base = rings_ == 1 ? head_ : 0;
    }

    WorkCounters* counters = w.device_counters();
    MV_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(WorkCounters)));
    mk::begin_slice_kernel<<<1, 1>>>(ctl_.data());
    MV_CUDA_CHECK_LAUNCH();
    stop_flag_->set(0);
    GpuTimer timer;
    timer.start();
    mk::QueueView q = queue_;
    void* args[] = {&v, &q, &sp};
    const cudaError_t err = cudaLaunchCooperativeKernel(kernel_,
                                                        dim3(grid_), dim3(block_), args, smem_bytes_, nullptr);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
      (void)cudaGetLastError();
      valid_ = false;
      throw CudaError("megakernel: the persistent grid of " + std::to_string(grid_) + " blocks of " +
                      std::to_string(block_) + " threads cannot be co-resident on this GPU (another context, "
                      "MPS or a smaller partition?); lower blocks_per_sm");
    }
    MV_CUDA_CHECK(err);
    timer.stop();
    const bool stopped_by_host = wait_for_slice(timer);
    StepStats st;
    st.busy_ms = timer.elapsed_ms();
    WorkCounters tc;
    MV_CUDA_CHECK(cudaMemcpy(&tc, counters, sizeof(tc), cudaMemcpyDeviceToHost));
    std::vector<mk::QueueControl> rings(rings_);
    MV_CUDA_CHECK(cudaMemcpy(rings.data(), ctl_.data(), sizeof(mk::QueueControl) * rings_, cudaMemcpyDeviceToHost));
    mk::QueueControl c = rings[0];  // the shared words; head, tail and avail summed over the rings below
    for (uint32_t k = 1; k < rings_; ++k) {
      c.head += rings[k].head;
      c.tail += rings[k].tail;
      c.avail += rings[k].avail;
    }
    if (c.error != mk::kErrNone) {
      valid_ = false;  // the queue may be inconsistent: rebuild from the film at the next step
      throw CudaError("megakernel watchdog: " + std::string(mk::megakernel_error_name(c.error)) + " (block " +
                      std::to_string(c.error_block) + ", ticket/segment " + std::to_string(c.error_detail) +
                      ", head " + std::to_string(c.head) + ", tail " + std::to_string(c.tail) + ", live " +
                      std::to_string(c.live) + ")");
    }
    // At the end of a slice every dequeued task has finished or re-entered the queue.
    if (c.tail - c.head != static_cast<unsigned long long>(c.live) || c.avail != c.live || c.live < 0) {
      valid_ = false;
      throw CudaError("megakernel: queue invariant broken after a slice: head " + std::to_string(c.head) + ", tail " +
                      std::to_string(c.tail) + ", avail " + std::to_string(c.avail) + ", live " +
                      std::to_string(c.live));
    }
    st.work = tc.work;
    st.tasks = tc.tasks;
    st.finished = tc.finished;
    update_stats(c, st, stopped_by_host);
    head_ = c.head;
    live_ = static_cast<uint32_t>(c.live);
    return st;
  }

 private:
  /// Device properties, allocations and the launch configuration for (num_tasks, S, block size).
  void configure(uint32_t num_tasks, uint32_t block) {
    if (clock_khz_ == 0) {
      int dev = 0, coop = 0;
      MV_CUDA_CHECK(cudaGetDevice(&dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
      if (!coop) throw CudaError("megakernel: this GPU does not support cooperative launches (co-residency)");
      if (clock_khz_ <= 0) clock_khz_ = 1000000;  // 1 GHz if the driver reports nothing
      stop_flag_ = std::make_unique<mk::MappedFlag>();
      stop_flag_ptr_.store(stop_flag_.get());
    }
    const uint32_t S = settings_.segment_size;
    const uint32_t rings = settings_.queue == QueueDesign::Buckets ? settings_.buckets : 1u;
    if (num_tasks == num_tasks_ && S == segment_size_ && block == block_ &&
        settings_.blocks_per_sm == blocks_per_sm_set_ && settings_.queue == design_ && rings == rings_)
      return;
    valid_ = false;
    design_ = settings_.queue;
    rings_ = rings;
    num_tasks_ = num_tasks;
    segment_size_ = S;
    block_ = block;
    blocks_per_sm_set_ = settings_.blocks_per_sm;
    // Capacity C: a power of two ≥ num_tasks + 2S and ≥ 4S. Since tail − head ≤ num_tasks ≤ C − 2S, the
    // last full segment is at most R − 2 segments behind the head's (R = C / S), so the pair the
    // controller locks never shares a segment slot (state word) with the segment in execution.
    uint64_t cap = 4ull * S;
    while (cap < uint64_t(num_tasks) + 2ull * S) cap <<= 1;
    if (cap > (1ull << 31)) throw InputError("", "tasks", "too many tasks for the megakernel queue");
    uint32_t cap_log2 = 0, s_log2 = 0;
    while ((1ull << cap_log2) < cap) ++cap_log2;
    while ((1u << s_log2) < S) ++s_log2;
    // One ring, or K of the same shape back to back (QueueView::ring).
    key_.resize(cap * rings);
    task_.resize(cap * rings);
    seq_.resize(cap * rings);
    const uint32_t segs = static_cast<uint32_t>(cap >> s_log2);
    seg_state_.resize(size_t(segs) * rings);
    seg_sorted_.resize(size_t(segs) * rings);
    seg_estimate_.resize(size_t(segs) * rings);
    task_min_.resize(num_tasks);
    ctl_.resize(rings);
    hist_.resize(kPriorityBins);
    bin_quantum_.resize(kPriorityBins);
    credit_.resize(num_tasks);
    queue_ = mk::QueueView{key_.data(),        task_.data(),     seq_.data(), seg_state_.data(),
                           seg_sorted_.data(), seg_estimate_.data(), task_min_.data(), ctl_.data(),
                           cap_log2,           s_log2,           num_tasks};
    queue_.main = ctl_.data();
    queue_.rings = rings;
    queue_.locking = design_ == QueueDesign::Kerbl;
    // Grid: everything that fits at once (co-residency is what lets warps spin on each other).
    smem_bytes_ = design_ == QueueDesign::Kerbl ? size_t(2) * S * (sizeof(float) + sizeof(uint32_t)) : 0;
    kernel_ = mk::megakernel_entry<View>(design_);
    const void* kernel = kernel_;
    cudaFuncAttributes fa{};
    MV_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    registers_ = static_cast<uint32_t>(fa.numRegs);
    int per_sm = 0;
    MV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block), smem_bytes_));
    if (per_sm <= 0)
      throw CudaError("megakernel: a block of " + std::to_string(block) + " threads does not fit an SM (" +
                      std::to_string(fa.numRegs) + " registers per thread, " + std::to_string(smem_bytes_) +
                      " bytes of shared memory); lower block_size");
    if (settings_.blocks_per_sm > 0) per_sm = std::min<int>(per_sm, static_cast<int>(settings_.blocks_per_sm));
    blocks_per_sm_ = static_cast<uint32_t>(per_sm);
    grid_ = static_cast<uint32_t>(per_sm * sm_count_);
    if (grid_ < 2) throw CudaError("megakernel: needs at least two co-resident blocks (controller + a worker)");
  }

  /// Rebuilds the queue from all unfinished tasks in descending order of their current priorities.
  void rebuild(W& w, const View& v) {
    const uint32_t n = num_tasks_;
    if (iota_.size() != n) {
      device_iota(iota_, n);
      sorted_keys_.resize(n);
      order_.resize(n);
      list_.resize(n);
      flags_.resize(n);
      count_.resize(1);
      size_t a = 0, b = 0;
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, a, static_cast<const float*>(nullptr),
                                                              sorted_keys_.data(), iota_.data(), order_.data(),
                                                              static_cast<int>(n)));
      MV_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, b, order_.data(), flags_.data(), list_.data(),
                                               count_.data(), static_cast<int>(n)));
      temp_.resize(std::max<size_t>({a, b, 1}));
    }
    size_t bytes = temp_.size();
    if (settings_.rebuild_sorted) {
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp_.data(), bytes, v.priority, sorted_keys_.data(),
                                                              iota_.data(), order_.data(), static_cast<int>(n)));
    } else {
      MV_CUDA_CHECK(cudaMemcpyAsync(order_.data(), iota_.data(), iota_.bytes(), cudaMemcpyDeviceToDevice));
    }
    mk::unfinished_in_order_kernel<<<(n + 255) / 256, 256>>>(v, order_.data(), flags_.data(), n);
    MV_CUDA_CHECK_LAUNCH();
    bytes = temp_.size();
    MV_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, order_.data(), flags_.data(), list_.data(),
                                             count_.data(), static_cast<int>(n)));
    ctl_.zero();
    // §5.3: measurements start over (durations change with the camera, paths per pixel, ...).
    MV_CUDA_CHECK(cudaMemsetAsync(task_min_.data(), 0xff, task_min_.bytes()));
    const mk::QueueView q = queue_;
    if (design_ == QueueDesign::Quanta) {
      // The live priority distribution and its table, from the controller's own code.
      hist_.zero();
      credit_.zero();
      mk::priority_hist_kernel<<<(n + 255) / 256, 256>>>(v.priority, list_.data(), count_.data(), hist_.data());
      MV_CUDA_CHECK_LAUNCH();
      mk::priority_table_kernel<<<1, 256>>>(hist_.data(), bin_quantum_.data(), settings_.quantum_max);
      MV_CUDA_CHECK_LAUNCH();
    }
    int live = 0;
    if (rings_ == 1) {
      mk::init_ring_kernel<<<1024, 256>>>(q, v.priority, list_.data(), count_.data());
      MV_CUDA_CHECK_LAUNCH();
      mk::init_segments_kernel<<<(q.segment_slots() + 255) / 256, 256>>>(q, count_.data(), settings_.rebuild_sorted);
      MV_CUDA_CHECK_LAUNCH();
      MV_CUDA_CHECK(cudaMemcpy(&live, count_.data(), sizeof(int), cudaMemcpyDeviceToHost));
    } else {
      // Each live task enters the ring of its priority's band (bucket_ring, the window opening at the most
      // urgent ranked band), in the list's order (a stable partition).
      ring_list_.resize(n);
      ring_count_.resize(rings_);
      MV_CUDA_CHECK(cudaMemsetAsync(&ctl_.data()->cur_band, 0xff, sizeof(unsigned int)));
      mk::first_band_kernel<<<(n + 255) / 256, 256>>>(v.priority, list_.data(), count_.data(), ctl_.data());
      MV_CUDA_CHECK_LAUNCH();
      for (uint32_t k = 0; k < rings_; ++k) {
        mk::ring_flags_kernel<<<(n + 255) / 256, 256>>>(v.priority, list_.data(), count_.data(), ctl_.data(), rings_, k,
                                                        flags_.data(), n);
        MV_CUDA_CHECK_LAUNCH();
        bytes = temp_.size();
        MV_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, list_.data(), flags_.data(), ring_list_.data(),
                                                 ring_count_.data() + k, static_cast<int>(n)));
        const mk::QueueView r = q.ring(k);
        mk::init_ring_kernel<<<1024, 256>>>(r, v.priority, ring_list_.data(), ring_count_.data() + k);
        MV_CUDA_CHECK_LAUNCH();
        mk::init_segments_kernel<<<(r.segment_slots() + 255) / 256, 256>>>(r, ring_count_.data() + k,
                                                                           settings_.rebuild_sorted);
        MV_CUDA_CHECK_LAUNCH();
      }
      std::vector<int> counts(rings_);
      ring_count_.download(counts.data(), rings_);
      for (int c : counts) live += c;
      // The shared live count (init_segments_kernel wrote each ring's own count into its block).
      MV_CUDA_CHECK(cudaMemcpy(&ctl_.data()->live, &live, sizeof(int), cudaMemcpyHostToDevice));
    }
    live_ = static_cast<uint32_t>(live);
    head_ = 0;
    valid_ = true;
    stats_ = MegakernelStats{};
    (void)w;
  }

  /// Waits for the slice; past the watchdog time it raises the host stop flag once (the slice then ends
  /// cleanly). Returns whether it did.
  bool wait_for_slice(GpuTimer& timer) {
    (void)timer;
    const auto t0 = std::chrono::steady_clock::now();
    bool stopped = false;
    for (;;) {
      const cudaError_t q = cudaStreamQuery(nullptr);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) MV_CUDA_CHECK(q);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!stopped && s > settings_.watchdog_seconds) {
        stop_flag_->set(1);
        stopped = true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return stopped || stop_flag_->get() != 0;
  }

  void update_stats(const mk::QueueControl& c, const StepStats& st, bool stopped_by_host) {
    MegakernelStats& s = stats_;
    s.grid_blocks = grid_;
    s.controllers = grid_ - worker_warps_ / (block_ / 32);
    s.blocks_per_sm = blocks_per_sm_;
    s.worker_warps = worker_warps_;
    s.registers = registers_;
    s.capacity = static_cast<uint32_t>(queue_.capacity());
    s.queue_length = c.tail - c.head;
    s.dequeues = c.head - head_;  // head summed over the rings (step)
    s.tasks_per_second = st.busy_ms > 0 ? st.tasks / st.busy_ms * 1000.0 : 0.0;
    s.stopped_by_host = stopped_by_host;
    ++s.slices;
    for (int m = 0; m < 3; ++m) {
      s.sort_passes[m] = c.sort_passes[m];
      s.sort_cycles_max[m] = c.sort_cycles_max[m];
    }
    s.lock_collisions = c.lock_collisions;
    s.wait_cycles = c.wait_cycles;
    s.ctrl_lock_failures = c.ctrl_lock_failures;
    s.ctrl_time_refusals = c.ctrl_time_refusals;
    s.ctrl_restarts = c.ctrl_restarts;
    s.ctrl_not_full = c.ctrl_not_full;
    s.empty_executions = c.empty_executions;
    s.yields = c.yields;
    s.aged_claims = c.aged_claims;
    s.table_passes = c.table_passes;
    s.order_score = -1.0;
    s.recorded = 0;
    order_keys_.clear();
    order_tasks_.clear();
    order_tickets_.clear();
    if (settings_.record_order && s.dequeues > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(s.dequeues, settings_.record_capacity));
      order_keys_.resize(n);
      order_tasks_.resize(n);
      order_tickets_.resize(n);
      record_.download(order_keys_.data(), n);
      record_task_.download(order_tasks_.data(), n);
      record_ticket_.download(order_tickets_.data(), n);
      MV_CUDA_CHECK(cudaDeviceSynchronize());
      s.order_score = order_score(order_keys_);
      s.recorded = n;
    }
  }

  StrategyInfo info_{"megakernel",
                     "GPU: persistent priority megakernel, a controller block sorts the queue's segments "
                     "(Kerbl 2012); optionally several controller blocks",
                     Side::Device};
  MegakernelSettings settings_;
  BoundParams<MegakernelSettings> params_{megakernel_params(), settings_};
  MegakernelStats stats_;
  bool valid_ = false;
  // launch configuration
  int sm_count_ = 0, clock_khz_ = 0;
  uint32_t num_tasks_ = 0, segment_size_ = 0, block_ = 0, blocks_per_sm_set_ = ~0u;
  uint32_t grid_ = 0, blocks_per_sm_ = 0, worker_warps_ = 0, registers_ = 0;
  size_t smem_bytes_ = 0;
  const void* kernel_ = nullptr;  ///< the persistent kernel of design_
  // queue (device)
  mk::QueueView queue_{};
  DeviceBuffer<float> key_;
  DeviceBuffer<uint32_t> task_;
  DeviceBuffer<unsigned long long> seq_;
  DeviceBuffer<int> seg_state_;
  DeviceBuffer<uint32_t> seg_sorted_;
  DeviceBuffer<unsigned long long> seg_estimate_;
  DeviceBuffer<uint32_t> task_min_;
  DeviceBuffer<mk::QueueControl> ctl_;
  DeviceBuffer<float> record_;
  DeviceBuffer<uint32_t> record_task_;
  DeviceBuffer<unsigned long long> record_ticket_;
  std::vector<float> order_keys_;
  std::vector<uint32_t> order_tasks_;
  std::vector<unsigned long long> order_tickets_;
  // QueueDesign::Buckets and ::Quanta
  QueueDesign design_ = QueueDesign::Kerbl;
  uint32_t rings_ = 1;
  DeviceBuffer<int> hist_;
  DeviceBuffer<float> bin_quantum_;
  DeviceBuffer<float> credit_;
  DeviceBuffer<uint32_t> ring_list_;
  DeviceBuffer<int> ring_count_;
  uint64_t head_ = 0;  ///< head after the last slice (record base)
  uint32_t live_ = 0;  ///< unfinished tasks after the last slice
  // rebuild scratch
  DeviceBuffer<uint32_t> iota_, order_, list_;
  DeviceBuffer<float> sorted_keys_;
  DeviceBuffer<uint8_t> flags_, temp_;
  DeviceBuffer<int> count_;
  // host stop flag (b)
  std::unique_ptr<mk::MappedFlag> stop_flag_;
  std::atomic<mk::MappedFlag*> stop_flag_ptr_{nullptr};
};

}  // namespace mv
