// Priorities as the megakernel's queue designs `buckets` and `quanta` see them (their workers and table
// controller: sched/megakernel/megakernel_workers.cuh, sched/megakernel/megakernel_controller.cuh), in plain
// host/device code so that the CPU tests run exactly what the GPU runs.
//
// Both read a priority through its bin: kPriorityBins bins over the float's order-preserving bit pattern
// (sign, 8 exponent bits and the top 4 mantissa bits), so a bin spans a factor of at most 1 + 1/16 of
// |priority| over the whole float range, negative values (priority `none` is −spp) included.
//  - `buckets`: K FIFO rings are a calendar queue over priority bands of kBinsPerBand bins (bucket_ring)
//    between a ring of urgent tasks and one of far ones; workers serve the most urgent non-empty band,
//    so a task that stays urgent runs again before the less urgent ones get their next turn: the greedy order of a priority queue within a factor 1.25, at
//    FIFO cost per operation. Bands are absolute, not ranks, so a waiting task keeps its place while the
//    others' priorities fall past it.
//  - `quanta` (one FIFO ring): every live task's priority is counted in a histogram over the bins, which
//    workers update after each execution; every ~2 µs the controller block turns it into a table
//    bin → mean quantum. A bin's *mid-rank* u ∈ [0, 1) is the fraction of live tasks with a higher
//    priority plus half of those in the bin (u ≈ 0 most urgent), and a task draws q(u) = Q^(1 − 2u) sample
//    batches per visit on average (Q the largest quantum: q = 1 at the median, 1/Q for the least urgent)
//    through a per-task credit, so that fractional quanta accumulate (stride scheduling, Waldspurger &
//    Weihl 1995); a visit with no whole batch yields.
#pragma once

#include <cstdint>
#include <cstring>

#include "base/common.h"

namespace mv {

/// Bins of the priority histogram (the top 13 bits of the order-preserving key).
inline constexpr uint32_t kPriorityBins = 8192;

/// Order-preserving key of a float: a < b ⇔ key(a) < key(b) for all non-NaN floats (−0 < +0).
MV_HD MV_INLINE uint32_t priority_key(float p) {
  uint32_t u;
#if defined(__CUDA_ARCH__)
  u = __float_as_uint(p);
#else
  std::memcpy(&u, &p, sizeof(u));
#endif
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/// Histogram bin of a priority, in [0, kPriorityBins); larger bins hold larger priorities.
MV_HD MV_INLINE uint32_t priority_bin(float p) { return priority_key(p) >> 19; }

/// Mid-rank of a bin: (tasks above + half the bin's own) / live, in [0, 1); 0 when nothing is live.
MV_HD MV_INLINE float priority_mid_rank(uint32_t above, uint32_t in_bin, uint32_t live) {
  if (live == 0) return 0.f;
  const float u = (static_cast<float>(above) + 0.5f * static_cast<float>(in_bin)) / static_cast<float>(live);
  return u < 0.f ? 0.f : (u >= 1.f ? 0.99999994f : u);
}

/// Bins per priority band of the `buckets` design: four bands an octave, each a quarter of the mantissa
/// range ([1, 1.25), [1.25, 1.5), … × 2^e), so a band spans a factor of at most 1.25 of |priority| (a greedy
/// order within that factor equalises the variance priority's n within ≈ 1.12).
inline constexpr uint32_t kBinsPerBand = 4;
/// Priorities at or above this are *urgent*: the `buckets` design serves them before every band, in FIFO
/// order (the priority functions mark unsampled patches and patches below their minimum samples this way,
/// render/pathtracer/priority.h: FLT_MAX and 1e30 / (1 + spp)).
inline constexpr float kUrgentPriority = 1e27f;
/// `buckets`: no band seen yet (the calendar window opens at the first ranked priority).
inline constexpr uint32_t kNoBand = 0xffffffffu;

/// Absolute band of a priority, 0 for the largest priorities, in [0, kPriorityBins / kBinsPerBand).
MV_HD MV_INLINE uint32_t priority_band(float p) { return (kPriorityBins - 1u - priority_bin(p)) / kBinsPerBand; }

/// The `buckets` design is a calendar queue over bands: of its K ≥ 3 rings, ring 0 holds the urgent tasks,
/// rings 1 … K − 2 the window of W = K − 2 bands [cur, cur + W − 1] (cur the most urgent band with waiting
/// tasks), band j in ring 1 + j mod W, and ring K − 1 the *far* tasks, whose band lies below the window
/// (served FIFO once the window is empty; with patch_lanes > 1 also at a bounded rate, far_drain_due). A
/// band above the window joins cur (the megakernel first moves cur up to it; then the window's last bands
/// share rings with its new first ones until they drain: those entries run early, none is lost, and the
/// far ring never takes part). An entry whose band the window moves past while it is being enqueued moves
/// the window back up to it (the enqueuer's check after enqueue_ranked and the claim's recheck_passed_bands),
/// so no entry waits in a ring that has come to stand for the window's last band.
MV_HD MV_INLINE uint32_t window_width(uint32_t rings) { return rings - 2u; }

/// The ring of priority p when the window starts at band `cur` (kNoBand: at p's own band), for K ≥ 3 rings.
MV_HD MV_INLINE uint32_t bucket_ring(float p, uint32_t cur, uint32_t rings) {
  if (p >= kUrgentPriority) return 0;
  const uint32_t width = window_width(rings), band = priority_band(p);
  const uint32_t c = cur == kNoBand ? band : cur;
  if (band >= c && band - c >= width) return rings - 1u;  // far
  return 1u + (band < c ? c : band) % width;
}

/// Whether a claim of the `buckets` design drains the far ring (MegakernelSettings::far_drain): with
/// probability min(1/2, batches · waiting / drain_batches), `draw` a uniform 32-bit random number, `batches`
/// the batches the claiming warp ran since its previous claim, `waiting` the far ring's waiting entries and
/// `drain_batches` (> 0; 0: never) the batches of the whole grid within which each of them should be
/// claimed again. Over all warps that is waiting / drain_batches drains per batch run, the rate that
/// claims the ring's current entries within drain_batches, decided by each warp alone (no shared counter);
/// capped at every other claim, so that the window keeps at least half of them: re-enqueued far tasks
/// refill the far ring, and without the cap a ring larger than drain_batches would take every claim and
/// starve the window.
MV_HD MV_INLINE bool far_drain_due(uint32_t draw, uint32_t batches, int waiting, unsigned long long drain_batches) {
  if (drain_batches == 0 || waiting <= 0 || draw >= 0x80000000u) return false;
  return static_cast<unsigned long long>(draw) * drain_batches <
         (static_cast<unsigned long long>(batches) * static_cast<unsigned long long>(waiting)) << 32;
}

/// Mean quantum (sample batches per visit) of a mid-rank for largest quantum Q ≥ 1: Q^(1 − 2u), in [1/Q, Q].
MV_HD MV_INLINE float priority_quantum(float u, uint32_t quantum_max) {
  return exp2f((1.f - 2.f * u) * log2f(static_cast<float>(quantum_max)));
}

/// One credit step of the `quanta` design: adds `quantum` to `credit`, returns the whole batches to run
/// now (at most quantum_max) and leaves the fraction (and any excess over quantum_max, capped at one
/// more visit's worth) in `credit`. 0 means the task yields this visit.
MV_HD MV_INLINE uint32_t draw_quantum(float& credit, float quantum, uint32_t quantum_max) {
  float c = credit + quantum;
  const float qmax = static_cast<float>(quantum_max);
  uint32_t k = c >= qmax ? quantum_max : static_cast<uint32_t>(c);
  c -= static_cast<float>(k);
  credit = c > qmax ? qmax : c;
  return k;
}

}  // namespace mv
