// Helpers of the strand strategies and their bench: step statistics (Lehmann 2023, Fig 3.2), the
// index-space permutation (§3.2) and an image checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mv {

/// Count, mean μ, population standard deviation σ and CV = σ/μ of per-strand step counts, as
/// Lehmann 2023 Fig 3.2 reports them; min, max and the total number of updates.
struct StepStatistics {
  uint64_t count = 0;
  uint64_t total = 0;  ///< Σ steps (update calls)
  uint32_t min = 0, max = 0;
  double mean = 0.0, sigma = 0.0, cv = 0.0;  ///< cv = 0 when mean = 0; all 0 for an empty input
};

/// Exact sums (integers), so the result does not depend on the order or the size (up to 2^32 strands).
StepStatistics step_statistics(const uint32_t* steps, size_t n);
inline StepStatistics step_statistics(const std::vector<uint32_t>& s) { return step_statistics(s.data(), s.size()); }

/// A uniformly random permutation of 0..n−1 (Fisher–Yates driven by SplitMix64 with Lemire's unbiased
/// bounded draws): the same `seed` gives the same permutation on every platform. perm[i] is the strand
/// that position i of the index space runs (Lehmann 2023, §3.2). O(n) time.
std::vector<uint32_t> strand_permutation(uint32_t n, uint64_t seed);

/// 64-bit FNV-1a of `bytes` bytes (offset basis 14695981039346656037, prime 1099511628211).
uint64_t fnv1a64(const void* data, size_t bytes);

}  // namespace mv
