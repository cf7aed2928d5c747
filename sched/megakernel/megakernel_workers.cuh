// The working module of the priority megakernel (Kerbl 2012 §3.1, §5.3.1, §6.3): the worker warp of each
// queue design (MegakernelSettings::queue), and the per-slice kernel parameters that workers and controllers
// share (SliceParams). Every block of the persistent kernel that is not a controller works; each of its warps
// runs one of these loops until the slice ends (its budget of dequeues is used up, the host's stop flag or a
// watchdog abort makes every reservation fail, or every task is finished):
//  - worker_warp (`kerbl`): dequeues one task at a time from the front of the segmented ring
//    (sched/megakernel/work_queue.cuh), executes it with run_task_warp, records its duration (§5.3.1: the
//    shortest per task) and, if the task is unfinished, enqueues it at the back with the priority the
//    execution wrote (§6.3: "tasks repeatedly append themselves to the end of the queue").
//  - worker_warp_buckets (`buckets`): claims the front task of the most urgent non-empty priority band's
//    ring (claim_ring_warp; bands and rings of sched/megakernel/priority_table.h), runs it and re-enqueues it
//    into the ring of its new band. Its opt-in features are compile-time variants (BucketsVariant), each
//    its own kernel, so that the default loop carries none of their instructions.
//  - worker_warp_quanta (`quanta`): dequeues from one FIFO ring and runs a priority-proportional number of
//    sample batches per visit (draw_quantum of sched/megakernel/priority_table.h).
// The controller blocks are in sched/megakernel/megakernel_controller.cuh, the persistent kernel in
// sched/megakernel/megakernel_device.cuh and the host side in sched/megakernel/megakernel.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/common.h"
#include "base/hash.h"
#include "sched/megakernel/lane_tokens.h"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/work_queue.cuh"

namespace mv {

namespace mk {

/// Optional measurement of the `buckets` workers (MegakernelStrategy fills it when the environment variable
/// MEGAVIEW_MK_PROFILE names an output prefix; null otherwise): where the worker warps' cycles go in one
/// slice, and each task's cumulative execution cycles. Cycle counts are clock64 differences within one warp
/// (SM clock); the four timestamps are %globaltimer (ns, comparable across SMs).
struct WorkerProfile {
  unsigned long long life_cycles;   ///< Σ over warps: worker loop entry to exit
  unsigned long long exec_cycles;   ///< Σ: inside run_task_warp
  unsigned long long claim_cycles;  ///< Σ: finding and taking a task (claim_ring_warp, take_claimed)
  unsigned long long take_cycles;   ///< Σ: of which in take_claimed
  unsigned long long claims, rounds, lost, empty;  ///< Σ over claims: ClaimCounts
  unsigned long long execs;         ///< run_task_warp calls that traced paths
  unsigned long long warps;         ///< worker warps that ran
  unsigned long long first_start, last_start, first_exit, last_exit;  ///< ns (globaltimer)
  unsigned long long* task_cycles;  ///< [num tasks] Σ run_task_warp cycles of the task's executions (all slices)
  unsigned int* task_execs;         ///< [num tasks] its executions that traced paths
};

__device__ MV_INLINE unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

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
  WorkerProfile* prof = nullptr;         ///< Buckets: measurement (null: off)
  int stay_leading = 0;                  ///< Buckets: MegakernelSettings::stay_leading (kBucketsMeasured)
  uint32_t patch_lanes = 1;              ///< Buckets, kBucketsShared: MegakernelSettings::patch_lanes
  uint32_t* lane_extra = nullptr;        ///< kBucketsShared: [num tasks] secondary tokens (lane_tokens.h)
  int* lane_extra_sum = nullptr;         ///< kBucketsShared: Σ lane_extra (extra queue entries and executions)
  int lane_extra_cap = 0;                ///< kBucketsShared: the most Σ lane_extra may reach (ring capacity)
  uint32_t* lane_lock = nullptr;         ///< kBucketsShared: [num tasks] commit locks (run_task_warp_shared)
  unsigned long long* lane_spawns = nullptr;  ///< kBucketsShared: extra tokens added (MegakernelStats::lane_spawns)
  /// kBucketsShared: far-ring drains (claim_ring_warp's FarDrain, far_drain_due): MegakernelSettings::far_drain
  /// rounds × worker_warps batches, 0: off.
  unsigned long long far_drain_batches = 0;
};

/// Compile-time variants of the `buckets` worker loop (worker_warp_buckets), each the loop of its own
/// kernel (sched/megakernel/megakernel_device.cuh), chosen by the host from the settings.
enum BucketsVariant : int {
  kBucketsPlain = 0,        ///< stay_leading off, patch_lanes 1: the default
  kBucketsStayLeading = 1,  ///< stay_leading on, patch_lanes 1
  kBucketsMeasured = 2,     ///< the WorkerProfile variant: stay_leading read from SliceParams, patch_lanes 1
  kBucketsShared = 3,       ///< patch_lanes > 1 (lane_tokens.h) with far-ring drains (far_drain_batches);
                            ///< stay_leading read from SliceParams
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

/// Enqueues `task` with priority p: under `buckets` into the urgent ring or its band's ring (moving the
/// window up to its band when it is above it), else into the one ring (one lane).
__device__ MV_INLINE bool enqueue_ranked(const QueueView& q, const SliceParams& sp, uint32_t task, float p) {
  uint32_t ring = 0, band = kNoBand;
  if (q.rings > 1) {  // buckets: urgent, or the band's ring in the calendar window
    uint32_t cur = DeviceAtomic<unsigned int>(q.main->cur_band).load(cuda::memory_order_relaxed);
    if (p < kUrgentPriority) {
      // A priority above the window moves the window up to it (bucket_ring: the window's last bands then
      // share rings with its new first ones until they drain; the far ring is not part of the window).
      band = priority_band(p);
      if (band < cur) cur = move_window_up(q, band);
    }
    ring = bucket_ring(p, cur, q.rings);
  }
  const bool ok = enqueue(q.ring(ring), p, task, 0, false, sp.watchdog_cycles);
  if (ring > 0 && ring + 1u < q.rings) {
    // A claim may have moved the window down past the entry's band between the read of cur_band above and the
    // enqueue; then the entry's ring stands for one of the window's last bands. After a sequentially consistent
    // fence, one of this check and the claim's (recheck_passed_bands) sees the other: move the window back up.
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
    if (DeviceAtomic<unsigned int>(q.main->cur_band).load(cuda::memory_order_relaxed) > band) move_window_up(q, band);
  }
  return ok;
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
  return enqueue_ranked(q, sp, task, p);
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

/// Buckets: whether a task whose priority is now p is at least as urgent as every waiting task (no urgent
/// task waits and p's band is at most the window's first band cur_band), so that the greedy order would
/// pick it next anyway (one lane; two relaxed loads).
__device__ MV_INLINE bool leads_the_queue(const QueueView& q, float p) {
  if (p >= kUrgentPriority || DeviceAtomic<int>(q.ctl[0].avail).load(cuda::memory_order_relaxed) > 0) return false;
  return priority_band(p) <= DeviceAtomic<unsigned int>(q.main->cur_band).load(cuda::memory_order_relaxed);
}

/// Buckets: whether the worker's variant keeps a task whose priority is now p running because it leads
/// the queue (stay_leading): never in kBucketsPlain, always in kBucketsStayLeading, as the settings say in
/// the others.
template <int Variant>
__device__ MV_INLINE bool stays_leading(const QueueView& q, const SliceParams& sp, float p) {
  if constexpr (Variant == kBucketsPlain) return false;
  else if constexpr (Variant == kBucketsStayLeading) return leads_the_queue(q, p);
  else return sp.stay_leading && leads_the_queue(q, p);
}

/// kBucketsShared: one more secondary token of `task` (a secondary queue entry, which an idle warp claims
/// and runs beside this one) if it has fewer than patch_lanes − 1 (lane_token_may_spawn) and all tasks
/// together fewer than lane_extra_cap, so that no ring can hold more entries than its capacity (one lane).
__device__ MV_INLINE void spawn_lane(const QueueView& q, const SliceParams& sp, uint32_t task, float p) {
  DeviceAtomic<uint32_t> extra(sp.lane_extra[task]);
  uint32_t e = extra.load(cuda::memory_order_relaxed);
  if (!lane_token_may_spawn(e, sp.patch_lanes)) return;
  DeviceAtomic<int> sum(*sp.lane_extra_sum);
  if (sum.fetch_add(1, cuda::memory_order_relaxed) >= sp.lane_extra_cap) {  // reserve room first
    sum.fetch_sub(1, cuda::memory_order_relaxed);
    return;
  }
  while (lane_token_may_spawn(e, sp.patch_lanes)) {
    if (extra.compare_exchange_weak(e, e + 1u, cuda::memory_order_relaxed)) {
      atomicAdd(sp.lane_spawns, 1ull);
      // The entry joins the window's first band (bucket_ring) without moving the window up: a window moved
      // up to its band would stop every other leading task (leads_the_queue) and send the idle warps after
      // this one entry.
      const uint32_t entry = secondary_entry(task);
      const uint32_t cur = DeviceAtomic<unsigned int>(q.main->cur_band).load(cuda::memory_order_relaxed);
      if (cur == kNoBand || q.rings < 3) enqueue_ranked(q, sp, entry, p);
      else enqueue(q.ring(bucket_ring(p, cur, q.rings)), p, entry, 0, false, sp.watchdog_cycles);
      return;
    }
  }
  sum.fetch_sub(1, cuda::memory_order_relaxed);  // another warp took the task's last lane
}

/// kBucketsShared: the warp that ran `task` gives its token back (lane_token_release): a secondary token
/// is dropped; the primary one ends the finished task or re-enqueues it with its new priority, as under
/// D = 1 (one lane). A batch that found the task finished (paths 0) is not an empty execution: the task's
/// other tokens raced this one to the target.
template <class View>
__device__ bool release_lane(const View& v, const QueueView& q, const SliceParams& sp, uint32_t task,
                             bool secondary) {
  switch (lane_token_release(secondary, v.finished(task))) {
    case TokenRelease::Drop:
      DeviceAtomic<uint32_t>(sp.lane_extra[task]).fetch_sub(1u, cuda::memory_order_relaxed);
      DeviceAtomic<int>(*sp.lane_extra_sum).fetch_sub(1, cuda::memory_order_relaxed);
      return true;
    case TokenRelease::Finish:
      DeviceAtomic<int>(q.main->live).fetch_sub(1, cuda::memory_order_relaxed);
      return true;
    case TokenRelease::Requeue:
      break;
  }
  return enqueue_ranked(q, sp, task, v.priority[task]);
}

/// kBucketsShared: the uniform 32-bit number of far_drain_due for claim `claim` of warp `warp` (a hash of
/// both and the SM clock; only its distribution matters).
__device__ MV_INLINE uint32_t drain_draw(uint32_t warp, uint32_t claim) {
  return hash32(static_cast<uint32_t>(clock64()) ^ (warp * 0x9e3779b9u) ^ (claim * 0x85ebca6bu));
}

/// Runs one batch of `task`: run_task_warp, or run_task_warp_shared (with the task's commit lock) in
/// kBucketsShared.
template <int Variant, class View>
__device__ MV_INLINE uint32_t run_batch(const View& v, const SliceParams& sp, uint32_t task) {
  if constexpr (Variant == kBucketsShared) return v.run_task_warp_shared(task, &sp.lane_lock[task]);
  else return v.run_task_warp(task);
}

/// Reserves one unit of the slice's budget (lane 0); false when the slice's budget or a stop is reached.
__device__ MV_INLINE bool reserve_work(const QueueView& q, const SliceParams& sp, unsigned long long units) {
  return DeviceAtomic<unsigned long long>(q.main->reserved).fetch_add(units, cuda::memory_order_relaxed) < sp.budget;
}

/// QueueDesign::Buckets: the warp claims the front task of the most urgent non-empty band (every
/// age_period-th claim: of the fullest ring), executes it once and re-enqueues it into its new priority
/// band's ring (claim_ring_warp, bucket_ring). `Variant` (BucketsVariant) selects the opt-in features;
/// `Profile` fills the WorkerProfile (with kBucketsMeasured).
template <bool Profile, int Variant, class View>
__device__ void worker_warp_buckets(const View& v, const QueueView& q, const SliceParams& sp) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t claims = 0;
  [[maybe_unused]] uint32_t last_runs = 1;  // kBucketsShared: batches of the previous claim (far_drain_due)
  [[maybe_unused]] const uint32_t warp_id = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  WorkerProfile* const prof = sp.prof;
  const long long life0 = Profile ? clock64() : 0;
  unsigned long long exec_c = 0, claim_c = 0, execs = 0, take_c = 0, n_claims = 0;
  ClaimCounts counts;
  if (Profile && lane == 0) {
    const unsigned long long t = global_ns();
    atomicMin(&prof->first_start, t);
    atomicMax(&prof->last_start, t);
  }
  for (;;) {
    int go = lane == 0 ? static_cast<int>(reserve_work(q, sp, 1ull)) : 0;
    if (!__shfl_sync(kFull, go, 0)) break;
    const bool aged = sp.age_period != 0 && ++claims % sp.age_period == 0;
    long long c0 = 0, k0 = 0, e0 = 0;  // Profile: clock64 at the claim, the take and the execution
    if constexpr (Profile) c0 = clock64();
    [[maybe_unused]] bool drained = false;  // kBucketsShared: a far-ring drain (claim_ring_warp), lane 0
    int ring;
    if constexpr (Variant == kBucketsShared)
      ring = claim_ring_warp<true>(q, sp.watchdog_cycles, aged, nullptr, sp.far_drain_batches, &drained,
                                   drain_draw(warp_id, claims), last_runs);
    else
      ring = claim_ring_warp(q, sp.watchdog_cycles, aged, Profile ? &counts : nullptr);
    if (ring < 0) break;
    uint32_t task = kNoTask;
    float old_p = 0.f;
    [[maybe_unused]] bool secondary = false;  // kBucketsShared: lane 0 holds a secondary token
    if constexpr (Profile) {
      ++n_claims;
      k0 = clock64();
    }
    if (lane == 0) {
      Dequeued d;
      if (take_claimed(q.ring(static_cast<uint32_t>(ring)), sp.watchdog_cycles, d, sp.record)) {
        if constexpr (Variant == kBucketsShared) {
          secondary = entry_is_secondary(d.task);
          d.task = entry_task(d.task);
        }
        if (d.task < q.num_tasks) {
          task = d.task;
          old_p = v.priority[task];
          if (aged) atomicAdd(&q.main->aged_claims, 1ull);
          // A far task taken because the window was empty: the window moves down to its band.
          if (!aged && !drained && ring == static_cast<int>(q.rings) - 1 && d.key < kUrgentPriority)
            move_window_down(q, priority_band(d.key));
        } else {
          raise_error(q, kErrBadTask, d.ticket);
        }
      }
    }
    task = __shfl_sync(kFull, task, 0);
    if constexpr (Profile) {
      const long long k1 = clock64();
      claim_c += static_cast<unsigned long long>(k1 - c0);
      take_c += static_cast<unsigned long long>(k1 - k0);
    }
    if (task == kNoTask) break;
    __syncwarp();
    // Up to band_repeat batches in a row while the task stays in the band it was claimed from, or (with
    // stay_leading) leads the queue (an aged claim runs once: it served the fullest ring, not the most
    // urgent one). kBucketsShared: a task that leads the queue also spawns another token (spawn_lane).
    for (uint32_t runs = 1;; ++runs) {
      if constexpr (Profile) e0 = clock64();
      const uint32_t paths = run_batch<Variant>(v, sp, task);
      if constexpr (Profile) {
        const unsigned long long e = static_cast<unsigned long long>(clock64() - e0);
        exec_c += e;
        if (paths != 0) {
          ++execs;
          if (lane == 0) {  // only this warp executes the task now
            prof->task_cycles[task] += e;
            prof->task_execs[task] += 1u;
          }
        }
      }
      int again = 0;
      if (lane == 0) {
        if constexpr (Variant == kBucketsShared) {
          const float p = v.priority[task];
          const bool open = paths != 0 && !v.finished(task);
          const bool leads = open && leads_the_queue(q, p);
          if (leads) spawn_lane(q, sp, task, p);
          again = !aged && runs < sp.band_repeat && open &&
                  (stays_in_claimed_band(q, old_p, p, static_cast<uint32_t>(ring), sp.band_slack) ||
                   (sp.stay_leading && leads));
          if (again) again = reserve_work(q, sp, 1ull);
          if (!again) release_lane(v, q, sp, task, secondary);
        } else {
          again = !aged && runs < sp.band_repeat && paths != 0 && !v.finished(task) &&
                  (stays_in_claimed_band(q, old_p, v.priority[task], static_cast<uint32_t>(ring), sp.band_slack) ||
                   stays_leading<Variant>(q, sp, v.priority[task]));
          if (again) again = reserve_work(q, sp, 1ull);  // the slice's budget counts every batch
          if (!again) finish_ranked(v, q, sp, task, paths, old_p);
        }
      }
      again = __shfl_sync(kFull, again, 0);
      __syncwarp();
      if (!again) {
        if constexpr (Variant == kBucketsShared) last_runs = runs;
        break;
      }
    }
  }
  if (Profile && lane == 0) {
    const unsigned long long t = global_ns();
    atomicMin(&prof->first_exit, t);
    atomicMax(&prof->last_exit, t);
    atomicAdd(&prof->life_cycles, static_cast<unsigned long long>(clock64() - life0));
    atomicAdd(&prof->exec_cycles, exec_c);
    atomicAdd(&prof->claim_cycles, claim_c);
    atomicAdd(&prof->execs, execs);
    atomicAdd(&prof->take_cycles, take_c);
    atomicAdd(&prof->claims, n_claims);
    atomicAdd(&prof->rounds, static_cast<unsigned long long>(counts.rounds));
    atomicAdd(&prof->lost, static_cast<unsigned long long>(counts.lost));
    atomicAdd(&prof->empty, static_cast<unsigned long long>(counts.empty));
    atomicAdd(&prof->warps, 1ull);
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

}  // namespace mk

}  // namespace mv
