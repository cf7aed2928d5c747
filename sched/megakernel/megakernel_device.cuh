// The device side of the priority megakernel (Kerbl 2012 §3–§5, §6.3): the persistent kernel of each queue
// design and the kernels that begin a slice and rebuild the queue. The kernel's blocks 0 … P−1 are
// controllers (sched/megakernel/megakernel_controller.cuh), every other block works
// (sched/megakernel/megakernel_workers.cuh); the host class that owns the buffers, rebuilds the queue and
// launches the slices is MegakernelStrategy in sched/megakernel/megakernel.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/common.h"
#include "base/errors.h"
#include "sched/megakernel/megakernel_controller.cuh"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/megakernel_workers.cuh"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/work_queue.cuh"

namespace mv {

namespace mk {

/// Register cap of the persistent kernel. Unbounded, the patch-task instance takes 86 registers: 5 blocks
/// of 128 threads per SM, where the `uniform` kernel (79) fits 6; the occupancy difference alone cost
/// 7 % of throughput on an H100 (docs/perf.md). 80 registers give the same 6 blocks (256-register
/// allocation units per warp).
inline constexpr int kMegakernelMaxRegisters = 80;

/// Kernel variant: QueueDesign::Buckets with its workers measured (WorkerProfile).
inline constexpr int kBucketsProfiled = 3;
/// Kernel variant: QueueDesign::Buckets with stay_leading (BucketsVariant kBucketsStayLeading).
inline constexpr int kBucketsStayLeadingKernel = 4;
/// Kernel variant: QueueDesign::Buckets with patch_lanes > 1 (BucketsVariant kBucketsShared).
inline constexpr int kBucketsSharedKernel = 5;

/// Whether tasks of `View` may run on several warps at once (View::kSharedExecutions, with
/// run_task_warp_shared): what MegakernelSettings::patch_lanes > 1 needs.
template <class View, class = void>
struct SharedExecutions : std::false_type {};
template <class View>
struct SharedExecutions<View, std::enable_if_t<View::kSharedExecutions>> : std::true_type {};

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
    else if constexpr (Design == static_cast<int>(QueueDesign::Buckets))
      worker_warp_buckets<false, kBucketsPlain>(v, q, sp);
    else if constexpr (Design == kBucketsProfiled) worker_warp_buckets<true, kBucketsMeasured>(v, q, sp);
    else if constexpr (Design == kBucketsStayLeadingKernel) worker_warp_buckets<false, kBucketsStayLeading>(v, q, sp);
    else if constexpr (Design == kBucketsSharedKernel) worker_warp_buckets<false, kBucketsShared>(v, q, sp);
    else worker_warp_quanta(v, q, sp);
  }
}

/// The persistent kernel of queue design `d` (`profiled`: the measured Buckets variant, kBucketsProfiled;
/// else under Buckets the variant of `stay_leading` and `patch_lanes`). Throws InputError("", "patch-lanes")
/// when patch_lanes > 1 and View's tasks cannot run concurrently (SharedExecutions).
template <class View>
const void* megakernel_entry(QueueDesign d, bool profiled = false, bool stay_leading = false,
                             uint32_t patch_lanes = 1) {
  switch (d) {
    case QueueDesign::Buckets:
      if (profiled) return reinterpret_cast<const void*>(&megakernel_kernel<View, kBucketsProfiled>);
      if (patch_lanes > 1) {
        if constexpr (SharedExecutions<View>::value)
          return reinterpret_cast<const void*>(&megakernel_kernel<View, kBucketsSharedKernel>);
        else
          throw InputError("", "patch-lanes",
                           std::to_string(patch_lanes) + " needs a workload whose tasks can run on several warps at "
                           "once (the path tracer's patches); this one allows 1");
      }
      if (stay_leading) return reinterpret_cast<const void*>(&megakernel_kernel<View, kBucketsStayLeadingKernel>);
      return reinterpret_cast<const void*>(&megakernel_kernel<View, 1>);
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

/// Rebuild, one ring: slot i < n_live takes list[i] with its priority as key (sequence word i + 1: the
/// entry of ticket i, written), every other slot of the ring's capacity is empty (sequence word i). The
/// calling grid strides over the slots along x.
__device__ MV_INLINE void fill_ring_slots(const QueueView& q, const float* priority, const uint32_t* list,
                                          uint64_t n_live) {
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

/// Rebuild: segment j's words and (j = 0) the ring's counters, for a ring of n_live rebuilt entries. Lap 0's
/// full segments are sorted when `sorted` (the list is). Every segment holding rebuilt entries gets the
/// estimate "0 cycles" (unknown: no task has been measured since the rebuild); since atomicMax keeps the
/// shortest duration of a lap, later enqueues cannot raise it.
__device__ MV_INLINE void init_segment(const QueueView& q, uint32_t n_live, bool sorted, uint32_t j) {
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

/// The rebuild's starting words, for one launch: every ring's control block zeroed (with several rings main's
/// cur_band then kNoBand and the rings' counts zeroed), every task's shortest measured duration unknown
/// (§5.3.1), and with patch lanes (non-null lane arrays) no secondary token.
struct RebuildReset {
  QueueControl* ctl = nullptr;  ///< [rings]
  uint32_t rings = 1;
  int* ring_counts = nullptr;   ///< [rings] when rings > 1
  uint32_t* task_min = nullptr; ///< [n]
  uint32_t n = 0;
  uint32_t* lane_extra = nullptr;             ///< [n] or null
  int* lane_extra_sum = nullptr;              ///< [1] or null
  unsigned long long* lane_spawns = nullptr;  ///< [1] or null
  uint32_t* lane_lock = nullptr;              ///< [n] or null
};

/// Rebuild: writes RebuildReset's words (the grid strides over the tasks and the control blocks' words).
static __global__ void reset_rebuild_kernel(RebuildReset r) {
  constexpr uint32_t kCtlWords = sizeof(QueueControl) / sizeof(uint32_t);
  constexpr uint32_t kCurBandWord = offsetof(QueueControl, cur_band) / sizeof(uint32_t);
  static_assert(sizeof(QueueControl) % sizeof(uint32_t) == 0, "control blocks are whole words");
  const uint32_t ctl_words = r.rings * kCtlWords, stride = gridDim.x * blockDim.x;
  auto* words = reinterpret_cast<uint32_t*>(r.ctl);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < ctl_words || i < r.n; i += stride) {
    if (i < ctl_words) words[i] = r.rings > 1 && i == kCurBandWord ? kNoBand : 0u;
    if (i < r.n) {
      r.task_min[i] = kUnknownCycles;
      if (r.lane_extra) r.lane_extra[i] = 0;
      if (r.lane_lock) r.lane_lock[i] = 0;
    }
    if (i == 0) {
      if (r.lane_extra_sum) *r.lane_extra_sum = 0;
      if (r.lane_spawns) *r.lane_spawns = 0;
    }
    if (r.rings > 1 && i < r.rings) r.ring_counts[i] = 0;
  }
}

/// Rebuild (Buckets): main's cur_band (kNoBand before) = the most urgent band of the unfinished tasks' ranked
/// (not urgent) priorities; it stays kNoBand when there is none. One atomicMin a warp.
template <class View>
__global__ void first_band_kernel(View v, QueueControl* main, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t band = kNoBand;
  if (i < n && !v.finished(i) && v.priority[i] < kUrgentPriority) band = priority_band(v.priority[i]);
  for (int d = 16; d > 0; d >>= 1) band = min(band, __shfl_xor_sync(0xffffffffu, band, d));
  if ((threadIdx.x & 31u) == 0 && band != kNoBand) atomicMin(&main->cur_band, band);
}

/// Bits of the priority above which a rebuild's sort key holds the ring (ring_sort_key).
constexpr int kRingKeyShift = 32;

/// The rebuild's sort key of a task in ring k: k above bit 32, and with `sorted` the bitwise NOT of the
/// priority's order-preserving bits below it (sign bit flipped for p ≥ 0, every bit for p < 0, as a radix
/// sort orders floats), so that one ascending radix sort leaves the rings in order and each ring in
/// descending priority (ties in task order: the sort is stable).
MV_HD MV_INLINE unsigned long long ring_sort_key(uint32_t ring, float p, bool sorted) {
  uint32_t bits = 0;
  if (sorted) {
    uint32_t u;
    std::memcpy(&u, &p, sizeof(u));
    bits = ~(u ^ ((u >> 31) ? 0xffffffffu : 0x80000000u));
  }
  return (static_cast<unsigned long long>(ring) << kRingKeyShift) | bits;
}

/// Rebuild (Buckets): key[i] = ring_sort_key of task i in the ring of its priority's band (bucket_ring, the
/// window opening at main's cur_band); a finished task gets ring `rings` (it sorts last). counts[k] += the
/// unfinished tasks of ring k (zeroed before): each warp adds each of its rings once.
template <class View>
__global__ void ring_keys_kernel(View v, const QueueControl* main, uint32_t rings, bool sorted,
                                 unsigned long long* key, int* counts, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t k = rings;
  if (i < n) {
    const float p = v.priority[i];
    if (!v.finished(i)) k = bucket_ring(p, main->cur_band, rings);
    key[i] = ring_sort_key(k, p, sorted);
  }
  const unsigned peers = __match_any_sync(0xffffffffu, k);
  if (k < rings && (threadIdx.x & 31u) == static_cast<uint32_t>(__ffs(peers) - 1))
    atomicAdd(&counts[k], __popc(peers));
}

/// Rebuild, every design: every ring at once (blockIdx.y = ring k of q.rings). `by_ring` holds the unfinished
/// tasks grouped by ring in ring order, ring k's counts[k] after those of the rings before it (one ring: the
/// live list and its count): fill_ring_slots and init_segment for ring k, and main's live count the sum of the
/// counts.
static __global__ void init_rings_kernel(QueueView q, const float* priority, const uint32_t* by_ring,
                                         const int* counts, bool sorted) {
  const uint32_t k = blockIdx.y;
  uint64_t first = 0, live = 0;
  for (uint32_t r = 0; r < q.rings; ++r) {
    if (r < k) first += static_cast<uint64_t>(counts[r]);
    live += static_cast<uint64_t>(counts[r]);
  }
  const QueueView ring = q.ring(k);
  fill_ring_slots(ring, priority, by_ring + first, static_cast<uint64_t>(counts[k]));
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < ring.segment_slots(); j += gridDim.x * blockDim.x) {
    init_segment(ring, static_cast<uint32_t>(counts[k]), sorted, j);
    if (k == 0 && j == 0) q.main->live = static_cast<int>(live);  // after ring 0's own count, same thread
  }
}

}  // namespace mk

}  // namespace mv
