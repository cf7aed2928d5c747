// The controller's segment sort on the GPU (sched/megakernel/bitonic_block.cuh): one CUDA block gives exactly the
// CPU twin's (key, value) sequence for every segment size, block size, method and input shape, and the
// one-block CUB radix sort of `megaview sort-bench` sorts correctly. Skipped without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "base/device_buffer.h"
#include "bitonic_cases.h"
#include "sched/megakernel/bitonic_block.cuh"
#include "test_support.h"

namespace mv {
namespace {

using test::KeyShape;
using test::PairInput;

constexpr bool kFlagPairs[4][2] = {{false, false}, {true, false}, {false, true}, {true, true}};

/// The pairs of `inputs` (same S and flags) sorted by one launch of one block of `threads`.
void sort_on_device(const std::vector<PairInput>& inputs, uint32_t threads, std::vector<float>& keys,
                    std::vector<uint32_t>& vals) {
  std::vector<float> k;
  std::vector<uint32_t> v;
  for (const PairInput& in : inputs) {
    k.insert(k.end(), in.keys.begin(), in.keys.end());
    v.insert(v.end(), in.vals.begin(), in.vals.end());
  }
  DeviceBuffer<float> keys_in, keys_out(k.size());
  DeviceBuffer<uint32_t> vals_in, vals_out(v.size());
  keys_in.upload(k);
  vals_in.upload(v);
  const PairInput& first = inputs.front();
  launch_segment_pair_sort(keys_in.data(), vals_in.data(), keys_out.data(), vals_out.data(), first.S, first.a_sorted,
                           first.b_sorted, threads, uint32_t(inputs.size()));
  keys.resize(k.size());
  vals.resize(v.size());
  keys_out.download(keys.data(), keys.size());
  vals_out.download(vals.data(), vals.size());
  MV_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(BitonicGpu, OneBlockMatchesTheCpuTwinExactly) {
  MV_REQUIRE_GPU();
  std::mt19937 rng(20120502);
  int failures = 0;
  for (uint32_t S : test::kSegmentSizes)
    for (uint32_t T : test::kBlockSizes)
      for (const auto& flags : kFlagPairs)
        for (KeyShape shape : test::kKeyShapes) {
          const PairInput in = test::make_pair_input(S, flags[0], flags[1], shape, rng);
          std::vector<float> gk, ck;
          std::vector<uint32_t> gv, cv;
          sort_on_device({in}, T, gk, gv);
          test::sort_on_host(in, T, ck, cv);
          const std::string err = test::check_sorted_pair(in, gk, gv);
          const bool same = gk == ck && gv == cv;  // the same network: ties land in the same places
          if ((!err.empty() || !same) && ++failures <= 5)
            ADD_FAILURE() << in.describe() << " T=" << T << " shape=" << int(shape) << ": "
                          << (err.empty() ? "differs from the CPU twin" : err);
        }
  EXPECT_EQ(failures, 0);
}

TEST(BitonicGpu, OneBlockSortsManyPairsInOneLaunch) {
  MV_REQUIRE_GPU();
  std::mt19937 rng(3);
  for (const auto& flags : kFlagPairs) {
    std::vector<PairInput> inputs;
    for (int b = 0; b < 7; ++b)
      inputs.push_back(test::make_pair_input(128, flags[0], flags[1], KeyShape::Uniform, rng));
    std::vector<float> keys;
    std::vector<uint32_t> vals;
    sort_on_device(inputs, 96, keys, vals);  // 96: not a power of two, fewer threads than pairs
    for (size_t b = 0; b < inputs.size(); ++b) {
      const size_t n = 256, o = b * n;
      const std::vector<float> k(keys.begin() + o, keys.begin() + o + n);
      const std::vector<uint32_t> v(vals.begin() + o, vals.begin() + o + n);
      EXPECT_EQ(test::check_sorted_pair(inputs[b], k, v), "") << inputs[b].describe() << " problem " << b;
    }
  }
}

TEST(BitonicGpu, CubBlockRadixSortOfTheBenchSortsDescending) {
  MV_REQUIRE_GPU();
  std::mt19937 rng(4);
  for (uint32_t n = 32; n <= 1024; n *= 2)
    for (uint32_t T : test::kBlockSizes) {
      if (T > n) {
        EXPECT_FALSE(launch_cub_block_sort(T, n, nullptr, nullptr, nullptr, nullptr, 1));
        continue;
      }
      const PairInput in = test::make_pair_input(n / 2, false, false, KeyShape::FewDistinct, rng);
      DeviceBuffer<float> keys_in, keys_out(n);
      DeviceBuffer<uint32_t> vals_in, vals_out(n);
      keys_in.upload(in.keys);
      vals_in.upload(in.vals);
      ASSERT_TRUE(launch_cub_block_sort(T, n, keys_in.data(), vals_in.data(), keys_out.data(), vals_out.data(), 1));
      std::vector<float> keys(n);
      std::vector<uint32_t> vals(n);
      keys_out.download(keys.data(), n);
      vals_out.download(vals.data(), n);
      MV_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(test::check_sorted_pair(in, keys, vals), "") << "n=" << n << " T=" << T;
    }
}

}  // namespace
}  // namespace mv
