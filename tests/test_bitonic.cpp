// The controller's segment sort (sched/megakernel/bitonic.h, Kerbl 2012 §4) through its CPU twin, which runs the
// block's stages thread by thread: every segment size, block size, method and input shape sorts exactly
// like std::sort, loses no (key, value) pair, and runs the number of stages its method promises.
// Also: `megaview sort-bench` without a GPU says so in one line.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <random>

#include "bitonic_cases.h"
#include "test_support.h"

namespace mv {
namespace {

using test::KeyShape;
using test::PairInput;

constexpr bool kFlagPairs[4][2] = {{false, false}, {true, false}, {false, true}, {true, true}};

uint32_t log2u(uint32_t x) {
  uint32_t l = 0;
  while ((1u << l) < x) ++l;
  return l;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

TEST(Bitonic, ChoosesKerblsThreeMethodsFromTheSortedFlags) {
  EXPECT_EQ(choose_sort_method(false, false), SortMethod::UnsortedUnsorted);
  EXPECT_EQ(choose_sort_method(true, false), SortMethod::OneSorted);
  EXPECT_EQ(choose_sort_method(false, true), SortMethod::OneSorted);
  EXPECT_EQ(choose_sort_method(true, true), SortMethod::SortedSorted);
}

TEST(Bitonic, StageVisitsEveryElementOnceAndIdleThreadsDoNothing) {
  for (uint32_t n : {4u, 32u, 1024u})
    for (uint32_t k = 2; k <= n; k <<= 1)
      for (uint32_t j = k / 2; j > 0; j >>= 1) {
        std::vector<int> hits(n, 0);
        for (uint32_t p = 0; p < n / 2; ++p) {
          const uint32_t lo = bitonic_pair_lo(p, j);
          ASSERT_LT(lo + j, n);
          ASSERT_EQ(lo & j, 0u) << "lo must be the lower element of its pair";
          ++hits[lo];
          ++hits[lo + j];
        }
        for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "n=" << n << " k=" << k << " j=" << j << " i=" << i;
      }
  float keys[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint32_t vals[8] = {};
  EXPECT_EQ(bitonic_stage(keys, vals, 8, 8, 4, 4, 64), 0u);  // thread 4 of 64: 4 pairs, no work
  EXPECT_EQ(bitonic_stage(keys, vals, 8, 8, 4, 3, 64), 1u);
  EXPECT_EQ(bitonic_stage(keys, vals, 8, 8, 4, 0, 1), 4u);
}

TEST(Bitonic, LoadPutsTheSortedSegmentInFrontAndReversesASortedBack) {
  const uint32_t S = 16;
  std::vector<float> a(S), b(S);
  std::vector<uint32_t> av(S), bv(S);
  for (uint32_t i = 0; i < S; ++i) a[i] = float(100 - i), b[i] = float(50 - i), av[i] = i, bv[i] = S + i;
  float keys[2 * S];
  uint32_t vals[2 * S];
  auto load = [&](bool as, bool bs) {
    for (uint32_t tid = 0; tid < 32; ++tid)
      load_segment_pair(keys, vals, a.data(), av.data(), b.data(), bv.data(), S, as, bs, tid, 32);
  };
  load(false, true);  // B sorted: B in front, A behind
  EXPECT_EQ(keys[0], 50.f);
  EXPECT_EQ(vals[S], 0u);
  load(true, true);  // [A | reverse(B)]
  EXPECT_EQ(keys[0], 100.f);
  EXPECT_EQ(keys[S], b[S - 1]);
  EXPECT_EQ(vals[2 * S - 1], S);
  load(true, false);  // [A | B]
  EXPECT_EQ(keys[S], 50.f);
}

// The brief's central property: exact std::sort order and no lost pair, for all sizes, block sizes,
// methods (all four flag pairings) and input shapes, with fresh random inputs per case.
TEST(Bitonic, CpuTwinMatchesStdSortForEverySizeBlockSizeMethodAndInput) {
  std::mt19937 rng(20120501);
  int cases = 0, failures = 0;
  for (uint32_t S : test::kSegmentSizes)
    for (uint32_t T : test::kBlockSizes)
      for (const auto& flags : kFlagPairs)
        for (KeyShape shape : test::kKeyShapes) {
          const PairInput in = test::make_pair_input(S, flags[0], flags[1], shape, rng);
          std::vector<float> keys;
          std::vector<uint32_t> vals;
          test::sort_on_host(in, T, keys, vals);
          const std::string err = test::check_sorted_pair(in, keys, vals);
          ++cases;
          if (!err.empty() && ++failures <= 5)
            ADD_FAILURE() << in.describe() << " T=" << T << " shape=" << int(shape) << ": " << err;
        }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  EXPECT_EQ(cases, 6 * 6 * 4 * 5);
}

// Kerbl §4.2: a sorted–sorted pair needs only the top-level merge, log2(2S) stages, against the full
// sort's log2(2S)(log2(2S)+1)/2; one sorted segment saves half of the compare-exchanges before the merge.
TEST(Bitonic, MethodsRunTheStagesAndCompareExchangesTheyPromise) {
  std::mt19937 rng(7);
  for (uint32_t S : test::kSegmentSizes)
    for (uint32_t T : test::kBlockSizes)
      for (const auto& flags : kFlagPairs) {
        const PairInput in = test::make_pair_input(S, flags[0], flags[1], KeyShape::Uniform, rng);
        std::vector<float> keys;
        std::vector<uint32_t> vals;
        BitonicCounts c;
        test::sort_on_host(in, T, keys, vals, &c);
        const uint64_t L = log2u(2 * S), full = L * (L + 1) / 2, half_sort = (L - 1) * L / 2;
        const std::string what = in.describe() + " T=" + std::to_string(T);
        switch (choose_sort_method(flags[0], flags[1])) {
          case SortMethod::UnsortedUnsorted:
            EXPECT_EQ(c.stages, full) << what;
            EXPECT_EQ(c.compare_exchanges, S * full) << what;
            EXPECT_EQ(c.parallel_steps, ceil_div(S, T) * full) << what;
            break;
          case SortMethod::OneSorted:
            EXPECT_EQ(c.stages, half_sort + L) << what;
            EXPECT_EQ(c.compare_exchanges, S / 2 * half_sort + S * L) << what;
            EXPECT_EQ(c.parallel_steps, ceil_div(S / 2, T) * half_sort + ceil_div(S, T) * L) << what;
            break;
          case SortMethod::SortedSorted:
            EXPECT_EQ(c.stages, L) << what;
            EXPECT_EQ(c.compare_exchanges, S * L) << what;
            EXPECT_EQ(c.parallel_steps, ceil_div(S, T) * L) << what;
            break;
        }
      }
}

TEST(Bitonic, CpuTwinRejectsSizesOutsideThePairStorage) {
  std::vector<float> k(2048);
  std::vector<uint32_t> v(2048);
  EXPECT_THROW(sort_segments_host(k.data(), v.data(), k.data() + 1024, v.data() + 1024, 1024, false, false, 32),
               std::invalid_argument);
  EXPECT_THROW(sort_segments_host(k.data(), v.data(), k.data() + 24, v.data() + 24, 24, false, false, 32),
               std::invalid_argument);
  EXPECT_THROW(sort_segments_host(k.data(), v.data(), k.data() + 16, v.data() + 16, 16, false, false, 0),
               std::invalid_argument);
}

/// Runs `env megaview sort-bench` (test_support.h).
test::CliResult sort_bench_cli(const std::string& env) {
  test::TempDir dir("sort-bench");
  return test::run_megaview(dir, "sort-bench", env);
}

TEST(SortBenchCli, WithoutAGpuSaysSoInOneLine) {
  const test::CliResult forced = sort_bench_cli("MEGAVIEW_FORCE_CPU=1");  // runs everywhere
  EXPECT_EQ(forced.code, 1);
  EXPECT_EQ(forced.err, "megaview: sort-bench needs a CUDA GPU (MEGAVIEW_FORCE_CPU is set)\n");
  EXPECT_EQ(forced.out, "");
  if (gpu_available()) GTEST_SKIP() << "a CUDA GPU is present: the unforced no-GPU message cannot be seen";
  const test::CliResult plain = sort_bench_cli("");  // inherits this process's environment
  EXPECT_EQ(plain.code, 1);
  EXPECT_EQ(plain.err, "megaview: sort-bench needs a CUDA GPU (" + gpu_info().reason + ")\n");
}

}  // namespace
}  // namespace mv
