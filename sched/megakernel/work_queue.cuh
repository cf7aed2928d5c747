// The priority megakernel's work queue (Kerbl 2012, §3.2–§3.3): a segmented ring buffer in device memory
// and its device-side protocol, as small __device__ functions. The worker warps and the controllers that
// use it are in sched/megakernel/megakernel_workers.cuh and sched/megakernel/megakernel_controller.cuh, the
// strategy that owns it in sched/megakernel/megakernel.cuh.
//
// Layout. A ring of C entries (C a power of two, C > number of tasks) stored as two arrays key[C] and
// task[C] (struct of arrays, so the controller can hand them to load_segment_pair / store_segment_pair of
// sched/megakernel/bitonic.h directly). Tickets are 64-bit positions that never wrap: ticket p lives in slot
// p mod C, in lap p / C, in the absolute segment p / S; the ring has R = C / S segment slots, and
// absolute segment k uses slot k mod R. Per slot a 64-bit sequence word seq[slot]:
//     seq == p        the slot is free for ticket p (it was consumed in lap p/C − 1, or never used)
//     seq == p + 1    ticket p has been written and not yet consumed
//     seq == p + C    ticket p has been consumed: the slot is free for ticket p + C
// (Vyukov's bounded MPMC queue). Per segment slot: a state word (§3.3: ≥ 0 = worker accesses in
// progress, < 0 = locked by the controller), a sorted tag and a buffer-time estimate (§5.3), both tagged
// with the lap so that a new lap of the same slot starts unsorted without any reset.
// Shared counters: head (next ticket to dequeue), tail (next ticket to enqueue), avail (entries
// enqueued and not yet claimed by a dequeuer), live (unfinished tasks, in the queue or executing).
//
// Protocol (one lane of a warp runs it; "acq"/"rel" = acquire/release at device scope):
//   enqueue(key, task):  p = tail++ (relaxed); wait seq[p] == p (acq); key[p], task[p] = ...;
//                        seq[p] = p + 1 (rel); estimate[seg(p)] max= (lap, cycles) (relaxed); avail++ (relaxed)
//   dequeue():           claim: avail-- while avail > 0 (relaxed); p = head++ (relaxed);
//                        state[seg(p)]++ (acq) — while it was locked: undo, back off, retry;
//                        wait seq[p] == p + 1 (acq); read key[p], task[p];
//                        seq[p] = p + C (rel); state[seg(p)]-- (rel)
//   controller lock:     CAS state 0 → kLocked (acq) on the front, then on the back segment (release the
//                        front if the back fails); verify every seq of both == ticket + 1 (acq);
//                        sort; write back; __threadfence + __syncthreads; state += −kLocked (rel).
// Why it is correct (no entry lost, none duplicated):
//  1. Every ticket is handed out once (atomic head/tail). The enqueuer of ticket p writes slot p only once
//     seq == p, i.e. after lap p/C − 1's consumer marked it consumed (its release → our acquire), and a
//     dequeuer of p reads it only once seq == p + 1, i.e. after the write (release → acquire). So each
//     written entry is read exactly once, by the holder of its ticket.
//  2. The controller permutes entries only among 2S slots that it verified to be written and not yet
//     consumed, while it holds both segments exclusively. A consumer holds its segment's state shared
//     from before it reads seq until after it marked the slot consumed, so no slot changes from "written"
//     to "consumed" during the sort; enqueuers never touch a slot whose seq is ticket + 1. The permutation
//     keeps the multiset of (key, task), and each slot is still read once by its ticket's holder — also
//     when a holder took its ticket before the lock and waits for the unlock.
//  3. Ordering: the controller's writes (all its threads fence, then barrier, then thread 0's release
//     RMW on state) happen-before a consumer's reads through the consumer's acquire RMW on state, which
//     reads from the unlock's release sequence. Enqueuers' writes reach the controller through its
//     threads' acquire loads of seq followed by __syncthreads (barriers order memory within the CTA).
//  4. Liveness: avail counts completed enqueues minus claims, so head never runs past tickets that will
//     be written; an enqueuer waits for slot p − C to be consumed, and since each unfinished task holds at
//     most one ticket in [head, tail), tail − head ≤ number of tasks < C: ticket p − C is already handed
//     out and its holder finishes. Every wait is additionally bounded by the watchdog (Spin).
// Relaxed atomics suffice for head, tail, avail, live and the budget: they only decide which ticket a
// warp gets and whether it waits; all data flows through the seq and state acquire/release pairs.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "base/common.h"
#include "sched/megakernel/priority_table.h"

namespace mv::mk {

/// A segment state word below this is locked by the controller (§3.3). kLocked is far from INT_MIN so
/// that workers' transient +1/−1 on a locked word never overflow, and far below 0 so that they never
/// make it look unlocked.
inline constexpr int kLocked = INT_MIN / 2;
/// "No task": a worker stops.
inline constexpr uint32_t kNoTask = 0xffffffffu;
/// Added to the slice's reservation counter to make every later reservation fail (stop request).
inline constexpr unsigned long long kStopBias = 1ull << 62;
/// Unknown task duration in task_min_cycles.
inline constexpr uint32_t kUnknownCycles = 0xffffffffu;

/// Why the megakernel aborted (QueueControl::error); the host turns it into CudaError("megakernel
/// watchdog: ...") and rebuilds the queue on the next step.
enum MegakernelError : uint32_t {
  kErrNone = 0,
  kErrDequeueSlot = 1,     ///< a dequeuer waited too long for its slot to be written
  kErrEnqueueSlot = 2,     ///< an enqueuer waited too long for its slot to be consumed
  kErrSegmentLock = 3,     ///< a worker waited too long for the controller to unlock a segment
  kErrEmptyQueue = 4,      ///< the queue stayed empty too long while tasks were unfinished
  kErrNoProgress = 5,      ///< controller: no dequeue and no worker exit for a whole watchdog period
  kErrBadTask = 6,         ///< a dequeued task index is out of range (corrupt queue)
};

inline const char* megakernel_error_name(uint32_t e) {
  switch (e) {
    case kErrNone: return "none";
    case kErrDequeueSlot: return "a dequeuer waited too long for its slot to be written";
    case kErrEnqueueSlot: return "an enqueuer waited too long for its slot to be consumed";
    case kErrSegmentLock: return "a worker waited too long on a segment locked by the controller";
    case kErrEmptyQueue: return "the queue stayed empty while tasks were unfinished";
    case kErrNoProgress: return "no dequeue and no worker exit for a whole watchdog period";
    case kErrBadTask: return "a dequeued task index is out of range (corrupt queue)";
  }
  return "unknown error";
}

/// Shared counters and statistics in device memory. Hot counters sit on their own 128-byte lines.
/// Persistent (live across slices, reset by a rebuild): head, tail, avail, live and the cumulative
/// statistics. Per slice (reset by begin_slice_kernel): reserved, workers_exited, stop, abort, error.
struct QueueControl {
  alignas(128) unsigned long long head;  ///< next ticket to dequeue
  alignas(128) unsigned long long tail;  ///< next ticket to enqueue
  alignas(128) int avail;                ///< enqueued entries not yet claimed by a dequeuer
  alignas(128) int live;                 ///< unfinished tasks (in the queue or executing)
  alignas(128) unsigned long long reserved;  ///< this slice's dequeue reservations (+ kStopBias on stop)
  alignas(128) unsigned int workers_exited;  ///< worker warps that left this slice
  alignas(128) int stop;           ///< 1: workers stop fetching (mirrored from the host flag by block 0)
  int abort;                       ///< 1: every loop exits now (watchdog); the queue is then invalid
  unsigned int error;              ///< first MegakernelError of the slice
  unsigned int error_block;        ///< block that raised it
  unsigned long long error_detail; ///< ticket or segment it concerned
  // ---- cumulative statistics since the last rebuild ----
  alignas(128) unsigned long long sort_passes[3];      ///< controller passes per SortMethod
  unsigned long long sort_cycles_max[3];               ///< §5.3.2: longest lock-to-unlock time per method
  unsigned long long ctrl_lock_failures;               ///< controller try-locks that found a segment in use
  unsigned long long ctrl_time_refusals;               ///< §5.2: pairs refused because the buffer was short
  unsigned long long ctrl_restarts;                    ///< walks restarted at the back (Fig 2)
  unsigned long long ctrl_not_full;                    ///< locked pairs found not full / already consumed
  alignas(128) unsigned long long lock_collisions;     ///< worker accesses that met a locked segment
  unsigned long long wait_cycles;                      ///< worker cycles spent waiting on locked segments
  unsigned long long empty_executions;                 ///< dequeued tasks that were already finished (must be 0)
  unsigned long long yields;                           ///< `quanta`: visits that ran no batch
  unsigned long long aged_claims;                      ///< `buckets`: claims served from the fullest ring
  unsigned long long table_passes;                     ///< `quanta`: controller passes over the histogram
  alignas(128) unsigned long long record_next;         ///< several rings: next index of the order record
  alignas(128) unsigned int cur_band;                  ///< several rings: the most urgent band with waiting tasks
};

/// Everything device code needs of the queue; trivially copyable kernel parameter.
struct QueueView {
  float* key = nullptr;                   ///< [C] priority of the entry (larger first)
  uint32_t* task = nullptr;               ///< [C] task index
  unsigned long long* seq = nullptr;      ///< [C] slot sequence word (see the file comment)
  int* seg_state = nullptr;               ///< [R] §3.3 state word
  uint32_t* seg_sorted = nullptr;         ///< [R] lap + 1 when the segment of that lap is sorted, else other
  unsigned long long* seg_estimate = nullptr;  ///< [R] (lap + 1) << 32 | ~min task cycles; atomicMax
  uint32_t* task_min_cycles = nullptr;    ///< [num tasks] §5.3.1: shortest measured duration, kUnknownCycles
  QueueControl* ctl = nullptr;            ///< this ring's head, tail and avail
  uint32_t capacity_log2 = 0;             ///< C = 2^capacity_log2
  uint32_t segment_log2 = 0;              ///< S = 2^segment_log2
  uint32_t num_tasks = 0;
  /// The words all rings share: live, the slice's reservations, stop, abort, errors and statistics
  /// (ring 0's control block; == ctl for a single ring).
  QueueControl* main = nullptr;
  /// Rings laid out back to back (MegakernelSettings::queue = buckets: K; otherwise 1): ring k's
  /// arrays start k·C (entries) and k·R (segments) into the ones above, its control block at ctl + k.
  uint32_t rings = 1;
  /// Workers take the segment state word shared around each dequeue (§3.3). Needed only while a
  /// controller may lock segments to sort them (QueueDesign::Kerbl).
  bool locking = true;

  MV_HD uint64_t capacity() const { return 1ull << capacity_log2; }
  MV_HD uint32_t segment_size() const { return 1u << segment_log2; }
  MV_HD uint32_t segment_slots() const { return 1u << (capacity_log2 - segment_log2); }
  MV_HD uint32_t slot(uint64_t ticket) const { return static_cast<uint32_t>(ticket & (capacity() - 1)); }
  /// Segment slot of absolute segment k.
  MV_HD uint32_t seg_slot(uint64_t k) const { return static_cast<uint32_t>(k & (segment_slots() - 1)); }
  /// Lap tag (lap + 1, 0 = never) of absolute segment k: what seg_sorted and seg_estimate must hold.
  MV_HD uint32_t seg_tag(uint64_t k) const { return static_cast<uint32_t>((k >> (capacity_log2 - segment_log2)) + 1); }
  /// Ring k's view (k < rings): same shape, same shared words.
  MV_HD QueueView ring(uint32_t k) const {
    QueueView r = *this;
    const uint64_t e = uint64_t(k) << capacity_log2;
    const uint32_t g = k << (capacity_log2 - segment_log2);
    r.key += e;
    r.task += e;
    r.seq += e;
    r.seg_state += g;
    r.seg_sorted += g;
    r.seg_estimate += g;
    r.ctl += k;
    return r;
  }
};

/// Packs a buffer-time estimate for atomicMax: the newest lap wins, within a lap the shortest duration.
MV_HD MV_INLINE unsigned long long pack_estimate(uint32_t tag, uint32_t cycles) {
  return (static_cast<unsigned long long>(tag) << 32) | (0xffffffffu - cycles);
}
/// The estimate of a segment whose tag is `tag`, or 0 (no buffer assumed) if it holds another lap's.
MV_HD MV_INLINE uint32_t unpack_estimate(unsigned long long packed, uint32_t tag) {
  return static_cast<uint32_t>(packed >> 32) == tag ? 0xffffffffu - static_cast<uint32_t>(packed) : 0u;
}

#if defined(__CUDACC__)

template <class T>
using DeviceAtomic = cuda::atomic_ref<T, cuda::thread_scope_device>;

__device__ MV_INLINE bool aborted(const QueueView& q) {
  return DeviceAtomic<int>(q.main->abort).load(cuda::memory_order_relaxed) != 0;
}

/// Records the first error of the slice and makes every loop of every block exit (abort), and every
/// later reservation fail (stop bias).
__device__ MV_INLINE void raise_error(const QueueView& q, uint32_t code, unsigned long long detail) {
  if (atomicCAS(&q.main->error, 0u, code) == 0u) {
    q.main->error_block = blockIdx.x;
    q.main->error_detail = detail;
  }
  DeviceAtomic<int>(q.main->abort).store(1, cuda::memory_order_relaxed);
  DeviceAtomic<unsigned long long>(q.main->reserved).fetch_add(kStopBias, cuda::memory_order_relaxed);
}

/// One bounded busy-wait: exponential __nanosleep backoff (32 ns … max_sleep_ns), the global abort flag,
/// and a clock64 budget (the watchdog). `next()` returns false when the loop must give up: on abort
/// (someone else's error) or when the budget is spent (then it raises `error` itself). With a
/// `progress` word the budget counts from the last change of that word instead of from the start: a wait
/// that keeps seeing progress elsewhere (the empty-queue wait near the end of a render, while the last
/// tasks keep cycling through the queue) is not a stall.
struct Spin {
  long long start = 0;
  long long budget;
  uint32_t error;
  unsigned long long detail;
  unsigned sleep_ns = 32;
  unsigned max_sleep_ns;
  unsigned long long* progress;
  unsigned long long seen = 0;

  __device__ Spin(long long budget_cycles, uint32_t err, unsigned long long what, unsigned max_sleep = 1024,
                  unsigned long long* progress_word = nullptr)
      : budget(budget_cycles), error(err), detail(what), max_sleep_ns(max_sleep), progress(progress_word) {
    start = clock64();
    if (progress) seen = DeviceAtomic<unsigned long long>(*progress).load(cuda::memory_order_relaxed);
  }
  __device__ bool next(const QueueView& q) {
    if (aborted(q)) return false;
    if (clock64() - start > budget) {
      if (progress) {  // read only once per budget period: no extra traffic on a hot line
        const unsigned long long now = DeviceAtomic<unsigned long long>(*progress).load(cuda::memory_order_relaxed);
        if (now != seen) {
          seen = now;
          start = clock64();
          return true;
        }
      }
      raise_error(q, error, detail);
      return false;
    }
    __nanosleep(sleep_ns);
    sleep_ns = sleep_ns < max_sleep_ns ? sleep_ns * 2 : max_sleep_ns;
    return true;
  }
  __device__ long long elapsed() const { return clock64() - start; }
};

/// Enqueues (key, task) at the back (one thread). `estimate_cycles` feeds the segment's §5.3 buffer
/// estimate (skipped when `collect` is false). Returns false only on abort/watchdog.
__device__ MV_INLINE bool enqueue(const QueueView& q, float key, uint32_t task, uint32_t estimate_cycles, bool collect,
                                  long long watchdog) {
  // Which ticket we get needs no ordering: relaxed (see the file comment, "Relaxed atomics ...").
  const unsigned long long p =
      DeviceAtomic<unsigned long long>(q.ctl->tail).fetch_add(1ull, cuda::memory_order_relaxed);
  const uint32_t s = q.slot(p);
  DeviceAtomic<unsigned long long> seq(q.seq[s]);
  // Acquire: the previous lap's consumer marked the slot consumed (release) after reading it, so our
  // writes below cannot overtake its reads.
  if (seq.load(cuda::memory_order_acquire) != p) {
    Spin spin(watchdog, kErrEnqueueSlot, p);
    while (seq.load(cuda::memory_order_acquire) != p)
      if (!spin.next(q)) return false;
  }
  q.key[s] = key;
  q.task[s] = task;
  // Release: publishes key/task (and, by cumulativity, the task's film writes that this warp ordered
  // before us with __syncwarp) to whoever acquires seq == p + 1: the dequeuer or the controller.
  seq.store(p + 1, cuda::memory_order_release);
  if (collect) {
    const uint64_t k = p >> q.segment_log2;
    // Relaxed: the estimate is a heuristic for time management, never needed for correctness.
    DeviceAtomic<unsigned long long>(q.seg_estimate[q.seg_slot(k)])
        .fetch_max(pack_estimate(q.seg_tag(k), estimate_cycles), cuda::memory_order_relaxed);
  }
  // Relaxed: avail only guarantees that the ticket a claimer takes will be written (liveness); the data
  // itself is published through seq.
  DeviceAtomic<int>(q.ctl->avail).fetch_add(1, cuda::memory_order_relaxed);
  return true;
}

/// Outcome of dequeue().
struct Dequeued {
  uint32_t task = kNoTask;
  float key = 0.f;
  unsigned long long ticket = 0;
};

/// Claims one entry (the avail semaphore), blocking while the queue is empty but tasks are unfinished.
/// Returns false when there is nothing more to claim (all tasks finished, stop or abort).
__device__ MV_INLINE bool claim(const QueueView& q, long long watchdog) {
  DeviceAtomic<int> avail(q.ctl->avail);
  // Idle warps back off up to 4 µs (they poll one hot line); a stall is no enqueue for a whole period.
  Spin spin(watchdog, kErrEmptyQueue, 0, 4096, &q.ctl->tail);
  for (;;) {
    // Test before the RMW: thousands of idle warps must not hammer the counter with failing RMWs.
    if (avail.load(cuda::memory_order_relaxed) > 0) {
      if (avail.fetch_sub(1, cuda::memory_order_relaxed) > 0) return true;
      avail.fetch_add(1, cuda::memory_order_relaxed);  // lost the race: undo
    }
    if (DeviceAtomic<int>(q.main->live).load(cuda::memory_order_relaxed) <= 0) return false;
    if (DeviceAtomic<int>(q.main->stop).load(cuda::memory_order_relaxed) != 0) {
      // Stop while waiting for work: give up; nothing was taken.
      return false;
    }
    if (!spin.next(q)) return false;
  }
}

/// Takes the segment state shared (§3.3: "behaves like a semaphore"): increments it unless the
/// controller holds it, in which case it waits. Counts collisions and wait cycles.
__device__ MV_INLINE bool acquire_segment_shared(const QueueView& q, uint32_t seg_slot, unsigned long long ticket,
                                                 long long watchdog) {
  DeviceAtomic<int> state(q.seg_state[seg_slot]);
  // Acquire: if the word was unlocked, we read from the controller's unlock (release) or a later RMW of
  // its release sequence, so its sorted entries are visible to our reads.
  if (state.fetch_add(1, cuda::memory_order_acquire) >= 0) return true;
  state.fetch_sub(1, cuda::memory_order_relaxed);  // locked: undo (the word stays negative throughout)
  Spin spin(watchdog, kErrSegmentLock, ticket);
  bool ok = false;
  for (;;) {
    if (!spin.next(q)) break;
    if (state.load(cuda::memory_order_relaxed) < 0) continue;
    if (state.fetch_add(1, cuda::memory_order_acquire) >= 0) {
      ok = true;
      break;
    }
    state.fetch_sub(1, cuda::memory_order_relaxed);
  }
  atomicAdd(&q.main->lock_collisions, 1ull);
  atomicAdd(&q.main->wait_cycles, static_cast<unsigned long long>(spin.elapsed()));
  return ok;
}

/// Where dequeues are recorded (the execution order, for S(n) and the order log): entry i of a slice goes
/// to key[i], task[i] and ticket[i] for i < cap. With one ring i is the ticket − base (the head's order);
/// with several rings i comes from a shared counter (QueueControl::record_next) in claim order.
struct OrderRecord {
  float* key = nullptr;                 ///< null: recording off
  uint32_t* task = nullptr;
  unsigned long long* ticket = nullptr; ///< the ring's ticket of the entry
  unsigned long long base = 0;
  uint32_t cap = 0;
};

/// Takes ring q's front ticket after a successful claim() on it (one thread) and records it in `rec`.
/// Returns false on abort (the claim is then lost with the aborted slice).
__device__ MV_INLINE bool take_claimed(const QueueView& q, long long watchdog, Dequeued& out, const OrderRecord& rec) {
  const unsigned long long p =
      DeviceAtomic<unsigned long long>(q.ctl->head).fetch_add(1ull, cuda::memory_order_relaxed);
  const uint32_t s = q.slot(p);
  const uint32_t ss = q.seg_slot(p >> q.segment_log2);
  if (q.locking && !acquire_segment_shared(q, ss, p, watchdog)) return false;
  DeviceAtomic<unsigned long long> seq(q.seq[s]);
  // Acquire: pairs with the enqueuer's release of p + 1 (its key/task writes become visible).
  if (seq.load(cuda::memory_order_acquire) != p + 1) {
    Spin spin(watchdog, kErrDequeueSlot, p);
    bool ok = true;
    while (seq.load(cuda::memory_order_acquire) != p + 1)
      if (!spin.next(q)) {
        ok = false;
        break;
      }
    if (!ok) {
      if (q.locking) DeviceAtomic<int>(q.seg_state[ss]).fetch_sub(1, cuda::memory_order_relaxed);
      return false;
    }
  }
  out.key = q.key[s];
  out.task = q.task[s];
  out.ticket = p;
  if (rec.key) {
    const unsigned long long i =
        q.rings == 1 ? p - rec.base : atomicAdd(&q.main->record_next, 1ull);
    if (p >= rec.base && i < rec.cap) {
      rec.key[i] = out.key;
      rec.task[i] = out.task;
      rec.ticket[i] = p;
    }
  }
  // Release: our reads of key/task happen before the next lap's enqueuer writes the slot.
  seq.store(p + q.capacity(), cuda::memory_order_release);
  // Release, and only after the slot is marked consumed: once the controller can lock this segment it
  // sees seq == p + C and will not sort the slot (otherwise it could move our entry to an unread slot).
  if (q.locking) DeviceAtomic<int>(q.seg_state[ss]).fetch_sub(1, cuda::memory_order_release);
  return true;
}

/// Dequeues the front entry of a single ring (one thread): claim() then take_claimed().
/// Returns false on empty-and-done, stop or abort; the claim is then not taken.
__device__ MV_INLINE bool dequeue(const QueueView& q, long long watchdog, Dequeued& out, const OrderRecord& rec) {
  if (!claim(q, watchdog)) return false;
  return take_claimed(q, watchdog, out, rec);
}

/// Buckets: moves the window's first band up to `band` (a task of a band above the window is enqueued, or an
/// enqueued task's band was passed); returns the first band after the move.
__device__ MV_INLINE uint32_t move_window_up(const QueueView& q, uint32_t band) {
  const uint32_t before = DeviceAtomic<unsigned int>(q.main->cur_band).fetch_min(band, cuda::memory_order_relaxed);
  return before < band ? before : band;
}

/// Buckets: the window's first band just moved down from `from` to `to` (> from; a claim found the bands between
/// empty, or took a far task). An entry enqueued into one of those bands' rings meanwhile would now sit in a ring
/// that stands for one of the window's last bands, behind every band before it, and could wait there until the
/// render ends. So, after a sequentially consistent fence, this looks at those rings again and moves the window
/// back up to the first band whose ring is not empty. The enqueuer checks the other way round after its own
/// fence (enqueue_ranked in sched/megakernel/megakernel_workers.cuh): of the two, at least one sees the other's
/// write, so no entry stays behind a window that moved past its band. A ring that holds entries of the band W
/// further on instead moves the window up needlessly; those entries run a little early, as with any upward move.
__device__ MV_INLINE void recheck_passed_bands(const QueueView& q, uint32_t from, uint32_t to) {
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
  const uint32_t width = window_width(q.rings);
  for (uint32_t b = from; b < to && b - from < width; ++b)
    if (DeviceAtomic<int>(q.ctl[1u + b % width].avail).load(cuda::memory_order_relaxed) > 0) {
      move_window_up(q, b);
      return;
    }
}

/// Buckets: moves the window's first band down to `band` (a claim found the bands before it empty, or took a far
/// task of that band) and, where it moved, re-checks the bands it passed (recheck_passed_bands).
__device__ MV_INLINE void move_window_down(const QueueView& q, uint32_t band) {
  const uint32_t before = DeviceAtomic<unsigned int>(q.main->cur_band).fetch_max(band, cuda::memory_order_relaxed);
  if (before != kNoBand && before < band) recheck_passed_bands(q, before, band);
}

/// What claim_ring_warp calls did, added up over the calls (a measurement): rounds of reading the rings,
/// races lost (the ring's entry went to another warp), rounds that found every ring empty.
struct ClaimCounts {
  uint32_t rounds = 0, lost = 0, empty = 0;
};

/// Several rings (QueueDesign::Buckets, a calendar queue over priority bands, sched/megakernel/priority_table.h):
/// the whole warp claims one entry of the urgent ring 0 if it has one, else of the most urgent non-empty
/// band in the window [cur, cur + W − 1] (ring 1 + j mod W holds band j), moving cur there, else of the far
/// ring K − 1; with `aged`, of the ring with the most waiting entries instead (ageing: bands that wait long
/// grow, and a few claims serve them whatever their priority). Lane l < rings reads ring l's avail, so one
/// round trip finds the ring. Blocks while every ring is empty but tasks are unfinished. Returns the ring
/// (warp-uniform), or −1 when there is nothing more to claim (all finished, stop, abort). `cc`, if not null,
/// counts what the call did (lane 0's count of lost races).
///
/// `FarDrain` (the patch_lanes kernel, MegakernelSettings::far_drain): when no urgent task waits, the claim
/// takes the far ring (FIFO) instead of the window with far_drain_due's probability
/// (sched/megakernel/priority_table.h; lane 0's `draw` and `batches`, the warp's batches since its previous
/// claim), so each far entry is claimed again within about drain_batches batches of the whole grid,
/// whatever keeps the window busy: a patch whose priority came from one unlucky batch, or whose band the
/// window has moved past, waits a bounded time. `drained` (lane 0's value) tells the worker that such a
/// claim was not taken because the window was empty, so the window must not move down to the entry's band.
template <bool FarDrain = false>
__device__ MV_INLINE int claim_ring_warp(const QueueView& q, long long watchdog, bool aged, ClaimCounts* cc = nullptr,
                                         unsigned long long drain_batches = 0, bool* drained = nullptr,
                                         uint32_t draw = 0, uint32_t batches = 1) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u, rings = q.rings, width = window_width(rings);
  const unsigned band_bits = (1u << width) - 1u;  // width ≤ 30
  // Progress while waiting: any warp's new reservation (it finished a task).
  Spin spin(watchdog, kErrEmptyQueue, 0, 4096, &q.main->reserved);
  for (;;) {
    uint32_t cur = lane == 0 ? DeviceAtomic<unsigned int>(q.main->cur_band).load(cuda::memory_order_relaxed) : 0u;
    cur = __shfl_sync(kFull, cur, 0);
    const int a = lane < rings ? DeviceAtomic<int>(q.ctl[lane].avail).load(cuda::memory_order_relaxed) : 0;
    const unsigned mask = __ballot_sync(kFull, a > 0);
    if (cc) {
      ++cc->rounds;
      if (!mask) ++cc->empty;
    }
    int ring = -1;
    uint32_t band = cur;
    if (mask && aged) {
      const int most = __reduce_max_sync(kFull, a);
      ring = __ffs(__ballot_sync(kFull, a == most && a > 0)) - 1;
    } else if (mask & 1u) {
      ring = 0;  // urgent first
    } else if ((mask >> 1) & band_bits) {
      const uint32_t o = cur == kNoBand ? 0u : cur % width;  // the ring of band cur, rotated to bit 0
      const unsigned m = (mask >> 1) & band_bits;
      const unsigned rot = o == 0 ? m : ((m >> o) | (m << (width - o))) & band_bits;
      const uint32_t f = static_cast<uint32_t>(__ffs(rot) - 1);
      ring = static_cast<int>(1u + (o + f) % width);
      band = cur == kNoBand ? cur : cur + f;
    } else if (mask) {
      ring = static_cast<int>(rings - 1u);  // the window is empty: the far tasks
    }
    if constexpr (FarDrain) {
      const int far_waiting = __shfl_sync(kFull, a, static_cast<int>(rings - 1u));
      if (lane == 0) {
        *drained = false;
        if (ring > 0 && ring < static_cast<int>(rings - 1u) && far_drain_due(draw, batches, far_waiting, drain_batches)) {
          ring = static_cast<int>(rings - 1u);
          band = cur;  // a drain leaves the window where it is
          *drained = true;
        }
      }
    }
    if (lane == 0) {
      if (ring >= 0) {
        DeviceAtomic<int> avail(q.ctl[ring].avail);
        if (avail.fetch_sub(1, cuda::memory_order_relaxed) > 0) {
          if (band != kNoBand && band > cur) move_window_down(q, band);
        } else {
          avail.fetch_add(1, cuda::memory_order_relaxed);  // lost the race: undo, look again
          if (cc) ++cc->lost;
          ring = -1;
        }
      }
      if (ring < 0) {
        if (DeviceAtomic<int>(q.main->live).load(cuda::memory_order_relaxed) <= 0 ||
            DeviceAtomic<int>(q.main->stop).load(cuda::memory_order_relaxed) != 0)
          ring = -2;
        else if (!mask && !spin.next(q))
          ring = -2;
      }
    }
    ring = __shfl_sync(kFull, ring, 0);
    if (ring >= 0) return ring;
    if (ring == -2) return -1;
  }
}

/// Controller: tries to take a segment exclusively (CAS 0 → kLocked). Acquire on success: every worker
/// that released the word before (consumed slots, reads) happens-before our reads of the segment.
__device__ MV_INLINE bool try_lock_segment(const QueueView& q, uint32_t seg_slot) {
  int expected = 0;
  return DeviceAtomic<int>(q.seg_state[seg_slot])
      .compare_exchange_strong(expected, kLocked, cuda::memory_order_acquire, cuda::memory_order_relaxed);
}

/// Controller: releases an exclusive hold. Adding −kLocked keeps the transient counts of workers that
/// bounced off the lock. Release: the sorted entries (fenced by all controller threads and ordered by a
/// __syncthreads before this call) become visible to a worker whose acquire RMW reads this value or a
/// later one.
__device__ MV_INLINE void unlock_segment(const QueueView& q, uint32_t seg_slot) {
  DeviceAtomic<int>(q.seg_state[seg_slot]).fetch_add(-kLocked, cuda::memory_order_release);
}

#endif  // __CUDACC__

}  // namespace mv::mk
