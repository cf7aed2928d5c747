// The controller of the priority megakernel (Kerbl 2012 §3.1, §4.3, §5): the blocks 0 … P−1 of the
// persistent kernel (sched/megakernel/megakernel_device.cuh).
//  - `kerbl` (controller_block): with all its threads a controller repeatedly locks a pair of adjacent full
//    segments of the work queue (sched/megakernel/work_queue.cuh), sorts the pair descending with the
//    bitonic segment sort of sched/megakernel/bitonic_block.cuh (three methods by the segments' sorted
//    flags, §4.3) and unlocks it, walking from the back of the queue towards the front and restarting at
//    the back when the predecessor is unavailable (Fig 2). Time management (§5) lets it lock a pair only
//    when the buffer segments between the executing head and the pair will take the workers at least as
//    long as the longest sort measured for that method. The controller is one block of the kernel's block
//    size and uses all its threads for loading, sorting and storing a pair (§6.1). With several
//    controllers (MegakernelSettings::controllers) controller i restarts at the back of the i-th of P
//    equal ranges of the queue.
//  - `buckets` and `quanta` (table_controller_block): block 0 only keeps house; under `quanta` it keeps the
//    table priority bin → mean quantum of sched/megakernel/priority_table.h current (compute_priority_table).
// Every controller also mirrors the host's stop flag and watches for progress (controller_plan).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/common.h"
#include "sched/megakernel/bitonic.h"
#include "sched/megakernel/bitonic_block.cuh"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/megakernel_workers.cuh"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/work_queue.cuh"

namespace mv {

namespace mk {

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

}  // namespace mk

}  // namespace mv
