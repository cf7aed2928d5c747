// Kerbl's order-accuracy score S(n) of an execution order (Kerbl 2012, §6.2, Figs 4–5).
//
// L holds the priorities of the executed tasks in execution order (L[0] ran first). Ideally L descends,
// so every entry i has i predecessors of at least its priority. The score is the mean, over i = 1..n−1,
// of the fraction of earlier entries whose priority is at least L[i]:
//
//   S(n) = ( Σ_{i=1}^{n−1} Σ_{j=0}^{i−1} f(i, j) ) / (n − 1),   f(i, j) = 1/i if L[j] ≥ L[i], else 0.
//
// S is in [0, 1]: 1 for a non-increasing L (every entry equal included), 0 for a strictly increasing L.
#pragma once

#include <cstddef>
#include <vector>

namespace mv {

/// S(n) of `L[0..n)` (priorities in execution order, larger = more urgent), in O(n log n) time and O(n)
/// memory (coordinate compression + a Fenwick tree counting earlier entries ≥ L[i]); n up to 10^7.
/// For n < 2 there is no pair to be out of order and the formula's 0/0 is defined as 1 (perfectly
/// ordered). Throws std::invalid_argument if an entry is NaN (it has no place in an order).
double order_score(const float* L, size_t n);
inline double order_score(const std::vector<float>& L) { return order_score(L.data(), L.size()); }

/// The best S(n) reachable from an ascending queue (§6.2's worst case) when its first `held` entries
/// can never be sorted (the segments the workers hold at the start, §3.2): those run first and hold the
/// lowest priorities, so each contributes 0, and the rest at best descends, each later entry i seeing
/// i − held higher ones before it:
///   bound = (1 / (n − 1)) Σ_{i=held}^{n−1} (i − held) / i      (held ≥ 1; held = 0 gives 1).
/// O(n); n < 2 gives 1 like order_score. `held` is clamped to n.
double ascending_held_prefix_bound(size_t n, size_t held);

/// Entries the workers hold at t = 0 (the argument `held` above): `workers` warps each hold one entry,
/// rounded up to whole segments of `segment` entries (segment ≥ 1).
inline size_t held_segment_entries(size_t workers, size_t segment) { return (workers + segment - 1) / segment * segment; }

}  // namespace mv
