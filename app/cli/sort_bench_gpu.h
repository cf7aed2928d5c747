// The GPU side of `megaview sort-bench` (app/cli/cli_sort_bench.cpp): one-block sorts of n (key, value)
// pairs by the controller's bitonic network (sched/megakernel/bitonic_block.cuh) and by CUB, timed with CUDA events.
// Kept apart from the command so that only this file needs nvcc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mv {

enum class SortBenchMethod {
  BitonicFull,       ///< Kerbl §4.3 unsorted–unsorted: full bitonic sort of n
  BitonicOneSorted,  ///< sorted–unsorted: sort of the back half, then the top-level merge (front pre-sorted)
  BitonicMerge,      ///< sorted–sorted: only the top-level merge (both halves pre-sorted)
  CubBlockRadix,     ///< cub::BlockRadixSort, descending, keys + values, n / threads items per thread
  CubDeviceRadix,    ///< cub::DeviceRadixSort::SortPairsDescending, one call per problem
};
inline constexpr int kNumSortBenchMethods = 5;

const char* sort_bench_method_name(SortBenchMethod m);
/// Whether the front / back half of each problem must be sorted descending on input.
bool sort_bench_front_sorted(SortBenchMethod m);
bool sort_bench_back_sorted(SortBenchMethod m);
/// Whether `m` sorts n keys with a block of `threads` (n, threads: powers of two in [32, 1024]); the
/// device radix sort chooses its own launches and takes threads == 0 only.
bool sort_bench_supports(SortBenchMethod m, uint32_t n, uint32_t threads);

/// `batches` independent problems of n pairs each, problem b at [b·n, (b+1)·n).
struct SortBenchProblem {
  uint32_t n = 0, batches = 0;
  std::vector<float> keys;
  std::vector<uint32_t> vals;
};

/// Receives the output of all problems (same layout as the input); throws if it is wrong.
using SortBenchVerify = std::function<void(const std::vector<float>& keys, const std::vector<uint32_t>& vals)>;

/// Device buffers for one problem set. Requires a CUDA device; CUDA failures throw CudaError.
class SortBenchGpu {
 public:
  explicit SortBenchGpu(const SortBenchProblem& problem);  ///< uploads the problems
  ~SortBenchGpu();
  SortBenchGpu(const SortBenchGpu&) = delete;
  SortBenchGpu& operator=(const SortBenchGpu&) = delete;

  /// Sorts every problem once with `m` and `threads` and hands the output to `verify`; then times
  /// `repeat` more runs, each sorting all problems (bitonic and block radix: one launch of one block
  /// looping over the problems; device radix: one SortPairsDescending call per problem), between CUDA
  /// events. Returns the milliseconds of each timed run.
  std::vector<double> run(SortBenchMethod m, uint32_t threads, int repeat, const SortBenchVerify& verify);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> b_;
  uint32_t n_, batches_;
};

}  // namespace mv
