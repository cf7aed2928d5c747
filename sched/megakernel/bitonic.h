// The controller's segment sort (Kerbl et al. 2012, §4): a bitonic network over (key, value) pairs in
// shared memory that merges two adjacent work-queue segments A (front) and B (back) of S entries each,
// so that A receives the S highest keys and B the rest, both sorted DESCENDING (highest priority first;
// ties in any order).
//
// One source of truth (docs/architecture.md): everything here is MV_HD. A CUDA block runs each stage with
// its threads and a __syncthreads() between stages (sched/megakernel/bitonic_block.cuh); the CPU twin below runs
// each stage for tid = 0 .. threads-1 before the next one, which is exactly the block's execution.
//
// Shared-memory layout of a pair (n = 2S entries, S a power of two in [16, 512]): load_segment_pair puts
// a sorted segment (if any) in the front half and reverses a sorted segment loaded into the back half,
// so the three methods of §4.3 work on a canonical layout:
//   UnsortedUnsorted  [A | B]          full bitonic sort of 2S:  L(L+1)/2 stages of S compare-exchanges
//   OneSorted         [sorted | other] bitonic sort of the back half ascending (S/2 compare-exchanges a
//                                      stage), then the top-level merge of 2S (L stages)
//   SortedSorted      [A | reverse(B)] only the top-level merge of 2S: L stages
// with L = log2(2S). A stage of P compare-exchanges takes ceil(P / T) parallel steps with T threads:
// O(N/T log² N) for the full sort, O(N/T log N) for a merge (N = 2S). Note that OneSorted has as many
// stages (barriers) as the full sort, L(L-1)/2 + L = L(L+1)/2, with half the compare-exchanges in the
// first L(L-1)/2: it is faster only while T < S. Keys must not be NaN.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/enum_names.h"
#include "base/common.h"

namespace mv {

/// Smallest and largest segment size S of a pair (the paper's maximum is 512: pairs of up to 1024).
inline constexpr uint32_t kMinSortSegment = 16;
inline constexpr uint32_t kMaxSortSegment = 512;

/// Which of Kerbl's three sorting methods (§4.3) a pair of segments needs.
enum class SortMethod : uint8_t { UnsortedUnsorted, OneSorted, SortedSorted };

/// The method for a front segment A and a back segment B with the given sorted flags (sorted =
/// already in descending order, e.g. revisited since the controller last sorted it).
MV_HD constexpr SortMethod choose_sort_method(bool a_sorted, bool b_sorted) {
  if (a_sorted && b_sorted) return SortMethod::SortedSorted;
  return a_sorted || b_sorted ? SortMethod::OneSorted : SortMethod::UnsortedUnsorted;
}

/// "unsorted-unsorted", "one-sorted", "sorted-sorted" (tables, sidecars, the Megakernel panel).
inline const char* sort_method_name(SortMethod m) {
  static constexpr EnumNames<SortMethod, 3> kNames{{"unsorted-unsorted", "one-sorted", "sorted-sorted"}};
  return kNames(m);
}

/// One stage of the network: compare-exchanges over the sub-array [offset, offset + n) for merge size
/// k and stride j (powers of two, j < k <= n).
struct BitonicStage {
  uint32_t offset, n, k, j;
  bool ascending;  ///< direction of the sub-array's final order (false: descending)
};

/// The element pair (lo, lo + j) of compare-exchange `pair` (in [0, n/2)) of a stage with stride j.
MV_HD MV_INLINE uint32_t bitonic_pair_lo(uint32_t pair, uint32_t j) {
  return ((pair & ~(j - 1u)) << 1) | (pair & (j - 1u));
}

/// One thread's share of one stage on keys[0, n) / vals[0, n): compare-exchanges pair = tid, tid +
/// threads, ... < n/2. Blocks of k elements alternate direction so that the stages with k = n leave the
/// sub-array in descending order (ascending if `ascending`). Returns the compare-exchanges this thread did.
MV_HD MV_INLINE uint32_t bitonic_stage(float* keys, uint32_t* vals, uint32_t n, uint32_t k, uint32_t j,
                                       uint32_t tid, uint32_t threads, bool ascending = false) {
  uint32_t done = 0;
  for (uint32_t pair = tid; pair < n / 2; pair += threads, ++done) {
    const uint32_t lo = bitonic_pair_lo(pair, j), hi = lo + j;
    const bool descending = ((lo & k) == 0) != ascending;
    const float a = keys[lo], b = keys[hi];
    if (descending ? a < b : b < a) {
      keys[lo] = b;
      keys[hi] = a;
      const uint32_t v = vals[lo];
      vals[lo] = vals[hi];
      vals[hi] = v;
    }
  }
  return done;
}

/// Calls f(BitonicStage) for every stage of `method` on a pair of segments of size S, in order.
/// Stages must run one after the other (a barrier between them); the stages of one call are the whole
/// sort of a canonically loaded pair (see load_segment_pair).
template <class F>
MV_HD MV_INLINE void for_each_bitonic_stage(SortMethod method, uint32_t S, F&& f) {
  const uint32_t n = 2 * S;
  if (method == SortMethod::UnsortedUnsorted) {
    for (uint32_t k = 2; k <= n; k <<= 1)
      for (uint32_t j = k >> 1; j > 0; j >>= 1) f(BitonicStage{0, n, k, j, false});
    return;
  }
  if (method == SortMethod::OneSorted)  // [descending | unsorted] -> [descending | ascending]: bitonic
    for (uint32_t k = 2; k <= S; k <<= 1)
      for (uint32_t j = k >> 1; j > 0; j >>= 1) f(BitonicStage{S, S, k, j, true});
  for (uint32_t j = S; j > 0; j >>= 1) f(BitonicStage{0, n, n, j, false});  // top-level merge
}

/// Runs `stage` on a pair held at keys/vals (the shared-memory base) as thread tid of `threads`.
MV_HD MV_INLINE uint32_t run_bitonic_stage(const BitonicStage& stage, float* keys, uint32_t* vals, uint32_t tid,
                                           uint32_t threads) {
  return bitonic_stage(keys + stage.offset, vals + stage.offset, stage.n, stage.k, stage.j, tid, threads,
                       stage.ascending);
}

/// Thread tid's share of loading segments A and B (S entries each) into pair storage keys/vals[0, 2S)
/// in the canonical layout of choose_sort_method(a_sorted, b_sorted): a sorted segment goes to the front
/// half; if the back half holds a sorted segment it is stored reversed (ascending). Without sorted
/// segments, or with only A sorted, the layout is [A | B].
MV_HD MV_INLINE void load_segment_pair(float* keys, uint32_t* vals, const float* a_keys, const uint32_t* a_vals,
                                       const float* b_keys, const uint32_t* b_vals, uint32_t S, bool a_sorted,
                                       bool b_sorted, uint32_t tid, uint32_t threads) {
  const bool swap = b_sorted && !a_sorted;  // front half: the sorted segment B
  const bool reverse_back = a_sorted && b_sorted;
  const float* fk = swap ? b_keys : a_keys;
  const uint32_t* fv = swap ? b_vals : a_vals;
  const float* bk = swap ? a_keys : b_keys;
  const uint32_t* bv = swap ? a_vals : b_vals;
  for (uint32_t i = tid; i < S; i += threads) {
    keys[i] = fk[i];
    vals[i] = fv[i];
    const uint32_t src = reverse_back ? S - 1 - i : i;
    keys[S + i] = bk[src];
    vals[S + i] = bv[src];
  }
}

/// Thread tid's share of writing a sorted pair back: the front half (the S highest keys, descending) to
/// A, the back half (descending) to B. Both segments are then sorted.
MV_HD MV_INLINE void store_segment_pair(const float* keys, const uint32_t* vals, float* a_keys, uint32_t* a_vals,
                                        float* b_keys, uint32_t* b_vals, uint32_t S, uint32_t tid,
                                        uint32_t threads) {
  for (uint32_t i = tid; i < S; i += threads) {
    a_keys[i] = keys[i];
    a_vals[i] = vals[i];
    b_keys[i] = keys[S + i];
    b_vals[i] = vals[S + i];
  }
}

/// What the CPU twin executed: stages (barriers), compare-exchanges, and parallel steps = the sum over
/// stages of the most compare-exchanges one thread did (= ceil(pairs / threads)).
struct BitonicCounts {
  uint32_t stages = 0;
  uint64_t compare_exchanges = 0;
  uint64_t parallel_steps = 0;
};

/// CPU twin of the block-level sort_segment_pair (sched/megakernel/bitonic_block.cuh): runs the same stages on a
/// canonically loaded pair keys/vals[0, 2S), each stage for tid = 0 .. threads-1 before the next.
/// S: a power of two in [kMinSortSegment, kMaxSortSegment]; threads >= 1.
inline BitonicCounts sort_segment_pair_host(float* keys, uint32_t* vals, uint32_t S, SortMethod method,
                                            uint32_t threads) {
  BitonicCounts c;
  for_each_bitonic_stage(method, S, [&](const BitonicStage& stage) {
    uint32_t most = 0;
    for (uint32_t tid = 0; tid < threads; ++tid) {
      const uint32_t done = run_bitonic_stage(stage, keys, vals, tid, threads);
      c.compare_exchanges += done;
      most = done > most ? done : most;
    }
    c.parallel_steps += most;
    ++c.stages;
  });
  return c;
}

/// CPU twin of a whole controller pass on segments A and B (S entries each, flags as in
/// choose_sort_method): load, sort, store, each step emulated for `threads` threads. Afterwards A holds
/// the S highest keys and B the rest, both descending. Returns what the sort executed.
inline BitonicCounts sort_segments_host(float* a_keys, uint32_t* a_vals, float* b_keys, uint32_t* b_vals, uint32_t S,
                                        bool a_sorted, bool b_sorted, uint32_t threads) {
  if (S < kMinSortSegment || S > kMaxSortSegment || (S & (S - 1)) || threads == 0)
    throw std::invalid_argument("sort_segments_host: S = " + std::to_string(S) + ", threads = " +
                                std::to_string(threads) + " (S: a power of two in [16, 512]; threads >= 1)");
  float keys[2 * kMaxSortSegment];
  uint32_t vals[2 * kMaxSortSegment];
  for (uint32_t tid = 0; tid < threads; ++tid)
    load_segment_pair(keys, vals, a_keys, a_vals, b_keys, b_vals, S, a_sorted, b_sorted, tid, threads);
  const BitonicCounts c = sort_segment_pair_host(keys, vals, S, choose_sort_method(a_sorted, b_sorted), threads);
  for (uint32_t tid = 0; tid < threads; ++tid)
    store_segment_pair(keys, vals, a_keys, a_vals, b_keys, b_vals, S, tid, threads);
  return c;
}

}  // namespace mv
