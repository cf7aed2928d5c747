#include "app/cli/sort_bench_gpu.h"

#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>
#include <string>

#include "base/device_buffer.h"
#include "base/errors.h"
#include "sched/megakernel/bitonic_block.cuh"
#include "sched/gpu/gpu_common.cuh"

namespace mv {

const char* sort_bench_method_name(SortBenchMethod m) {
  switch (m) {
    case SortBenchMethod::BitonicFull: return "bitonic-full";
    case SortBenchMethod::BitonicOneSorted: return "bitonic-one-sorted";
    case SortBenchMethod::BitonicMerge: return "bitonic-merge";
    case SortBenchMethod::CubBlockRadix: return "cub-block-radix";
    case SortBenchMethod::CubDeviceRadix: return "cub-device-radix";
  }
  return "?";
}

bool sort_bench_front_sorted(SortBenchMethod m) {
  return m == SortBenchMethod::BitonicOneSorted || m == SortBenchMethod::BitonicMerge;
}
bool sort_bench_back_sorted(SortBenchMethod m) { return m == SortBenchMethod::BitonicMerge; }

bool sort_bench_supports(SortBenchMethod m, uint32_t n, uint32_t threads) {
  if (m == SortBenchMethod::CubDeviceRadix) return threads == 0;
  if (threads < 32 || threads > 1024 || (threads & (threads - 1))) return false;
  return m != SortBenchMethod::CubBlockRadix || threads <= n;
}

struct SortBenchGpu::Buffers {
  DeviceBuffer<float> keys_in, keys_out;
  DeviceBuffer<uint32_t> vals_in, vals_out;
  DeviceBuffer<unsigned char> temp;  ///< cub::DeviceRadixSort's temporary storage
};

SortBenchGpu::SortBenchGpu(const SortBenchProblem& p)
    : b_(std::make_unique<Buffers>()), n_(p.n), batches_(p.batches) {
  const size_t count = size_t(p.n) * p.batches;
  if (p.n < 2 * kMinSortSegment || p.n > 2 * kMaxSortSegment || (p.n & (p.n - 1)) || p.batches == 0 ||
      p.keys.size() != count || p.vals.size() != count)
    throw std::invalid_argument("SortBenchGpu: n must be a power of two in [32, 1024] with batches·n keys and values");
  b_->keys_in.upload(p.keys);
  b_->vals_in.upload(p.vals);
  b_->keys_out.resize(count);
  b_->vals_out.resize(count);
  size_t temp_bytes = 0;
  MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, temp_bytes, b_->keys_in.data(),
                                                          b_->keys_out.data(), b_->vals_in.data(),
                                                          b_->vals_out.data(), int(p.n)));
  b_->temp.resize(temp_bytes);
}

SortBenchGpu::~SortBenchGpu() = default;

std::vector<double> SortBenchGpu::run(SortBenchMethod m, uint32_t threads, int repeat, const SortBenchVerify& verify) {
  if (!sort_bench_supports(m, n_, threads))
    throw std::invalid_argument(std::string("sort-bench: ") + sort_bench_method_name(m) + " does not run " +
                                std::to_string(n_) + " keys with " + std::to_string(threads) + " threads");
  Buffers& b = *b_;
  auto launch = [&] {
    switch (m) {
      case SortBenchMethod::BitonicFull:
      case SortBenchMethod::BitonicOneSorted:
      case SortBenchMethod::BitonicMerge:
        launch_segment_pair_sort(b.keys_in.data(), b.vals_in.data(), b.keys_out.data(), b.vals_out.data(), n_ / 2,
                                 sort_bench_front_sorted(m), sort_bench_back_sorted(m), threads, batches_);
        break;
      case SortBenchMethod::CubBlockRadix:
        if (!launch_cub_block_sort(threads, n_, b.keys_in.data(), b.vals_in.data(), b.keys_out.data(),
                                   b.vals_out.data(), batches_))
          throw std::logic_error("sort-bench: cub-block-radix is not instantiated for this size");
        break;
      case SortBenchMethod::CubDeviceRadix:
        for (uint32_t k = 0; k < batches_; ++k) {
          const size_t o = size_t(k) * n_;
          size_t bytes = b.temp.size();
          MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(b.temp.data(), bytes, b.keys_in.data() + o,
                                                                  b.keys_out.data() + o, b.vals_in.data() + o,
                                                                  b.vals_out.data() + o, int(n_)));
        }
        break;
    }
  };

  MV_CUDA_CHECK(cudaMemset(b.keys_out.data(), 0xff, b.keys_out.bytes()));  // NaN: stale output cannot pass
  MV_CUDA_CHECK(cudaMemset(b.vals_out.data(), 0xff, b.vals_out.bytes()));
  launch();
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> keys(b.keys_out.size());
  std::vector<uint32_t> vals(b.vals_out.size());
  b.keys_out.download(keys.data(), keys.size());
  b.vals_out.download(vals.data(), vals.size());
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  verify(keys, vals);

  std::vector<double> ms;
  GpuTimer timer;
  for (int r = 0; r < repeat; ++r) {
    timer.start();
    launch();
    timer.stop();
    ms.push_back(timer.elapsed_ms());
  }
  return ms;
}

}  // namespace mv
