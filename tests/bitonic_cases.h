// Inputs and checks shared by the bitonic tests (tests/test_bitonic.cpp on the CPU twin,
// tests/test_bitonic_gpu.cu on the CUDA block): every segment size, block size, sorted-flag pairing and
// input shape of the controller's segment sort (sched/megakernel/bitonic.h).
#pragma once

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "sched/megakernel/bitonic.h"

namespace mv::test {

inline const std::vector<uint32_t> kSegmentSizes = {16, 32, 64, 128, 256, 512};
inline const std::vector<uint32_t> kBlockSizes = {32, 64, 128, 256, 512, 1024};

enum class KeyShape { Uniform, FewDistinct, AllEqual, Descending, Ascending };
inline const std::vector<KeyShape> kKeyShapes = {KeyShape::Uniform, KeyShape::FewDistinct, KeyShape::AllEqual,
                                                 KeyShape::Descending, KeyShape::Ascending};

/// One input: segments A = keys[0, S) and B = keys[S, 2S) with their sorted flags; vals[i] = i, so an
/// output value names the input position of its key.
struct PairInput {
  uint32_t S = 0;
  bool a_sorted = false, b_sorted = false;
  std::vector<float> keys;
  std::vector<uint32_t> vals;
  std::string describe() const {
    return "S=" + std::to_string(S) + " a_sorted=" + std::to_string(a_sorted) +
           " b_sorted=" + std::to_string(b_sorted);
  }
};

/// Fresh random keys of `shape` (FewDistinct: 5 values, so most keys are tied); each segment flagged
/// sorted is then sorted descending, as the controller guarantees.
inline PairInput make_pair_input(uint32_t S, bool a_sorted, bool b_sorted, KeyShape shape, std::mt19937& rng) {
  PairInput p;
  p.S = S;
  p.a_sorted = a_sorted;
  p.b_sorted = b_sorted;
  const uint32_t n = 2 * S;
  std::uniform_real_distribution<float> uniform(-100.f, 100.f);
  std::uniform_int_distribution<int> few(0, 4);
  const float equal = uniform(rng);
  for (uint32_t i = 0; i < n; ++i) {
    switch (shape) {
      case KeyShape::Uniform: p.keys.push_back(uniform(rng)); break;
      case KeyShape::FewDistinct: p.keys.push_back(0.5f * float(few(rng))); break;
      case KeyShape::AllEqual: p.keys.push_back(equal); break;
      case KeyShape::Descending:
      case KeyShape::Ascending: p.keys.push_back(uniform(rng)); break;
    }
    p.vals.push_back(i);
  }
  if (shape == KeyShape::Descending) std::sort(p.keys.begin(), p.keys.end(), std::greater<float>());
  if (shape == KeyShape::Ascending) std::sort(p.keys.begin(), p.keys.end());
  if (a_sorted) std::sort(p.keys.begin(), p.keys.begin() + S, std::greater<float>());
  if (b_sorted) std::sort(p.keys.begin() + S, p.keys.end(), std::greater<float>());
  return p;
}

/// Empty if keys/vals (the pair after sorting, [A | B]) are std::sort's descending key sequence of the
/// input and a permutation of its (key, value) pairs; otherwise what is wrong.
inline std::string check_sorted_pair(const PairInput& in, const std::vector<float>& keys,
                                     const std::vector<uint32_t>& vals) {
  const size_t n = in.keys.size();
  if (keys.size() != n || vals.size() != n) return "wrong output size";
  std::vector<float> expected = in.keys;
  std::sort(expected.begin(), expected.end(), std::greater<float>());
  std::vector<char> seen(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const std::string at = " at index " + std::to_string(i);
    if (!(keys[i] == expected[i]))
      return "key " + std::to_string(keys[i]) + at + ", std::sort has " + std::to_string(expected[i]);
    if (vals[i] >= n || seen[vals[i]]) return "value " + std::to_string(vals[i]) + " lost or duplicated" + at;
    if (!(in.keys[vals[i]] == keys[i])) return "value " + std::to_string(vals[i]) + " separated from its key" + at;
    seen[vals[i]] = 1;
  }
  return {};
}

/// The CPU twin's result for `in` with `threads` threads: the pair [A | B] after the controller pass.
inline void sort_on_host(const PairInput& in, uint32_t threads, std::vector<float>& keys,
                         std::vector<uint32_t>& vals, BitonicCounts* counts = nullptr) {
  keys = in.keys;
  vals = in.vals;
  const uint32_t S = in.S;
  const BitonicCounts c = sort_segments_host(keys.data(), vals.data(), keys.data() + S, vals.data() + S, S,
                                             in.a_sorted, in.b_sorted, threads);
  if (counts) *counts = c;
}

}  // namespace mv::test
