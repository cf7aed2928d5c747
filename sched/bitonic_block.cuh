// The segment sort of sched/bitonic.h run by one CUDA block (Kerbl et al. 2012, §4.3 and §6.1), and the
// one-block CUB radix sort it is compared with (`megaview sort-bench`).
//
// Both kernels sort `batches` independent problems one after the other in a single block, problem b
// being the n = 2S (key, value) pairs at offset b·n: this is a sequence of controller passes, and the
// loop keeps launch overhead out of the per-sort time. The bitonic kernel uses 2S·8 bytes of dynamic
// shared memory; any block size of 1..1024 threads works (threads beyond S idle in the merges).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

#include "base/cuda_check.h"
#include "sched/bitonic.h"

namespace mv {

/// Block-level sort of a pair loaded canonically into s_keys/s_vals[0, 2S) (load_segment_pair, followed
/// by a __syncthreads()): every thread of the block must call it. Runs the stages of `method`
/// (for_each_bitonic_stage) with a barrier after each, so on return the pair is sorted descending and
/// visible to the whole block. S: a power of two in [16, 512]. Parallel steps: O(2S/T · log²(2S)) for
/// UnsortedUnsorted, O(2S/T · log(2S)) for SortedSorted (T = blockDim.x).
__device__ __forceinline__ void sort_segment_pair(float* s_keys, uint32_t* s_vals, uint32_t S, SortMethod method) {
  for_each_bitonic_stage(method, S, [&](const BitonicStage& stage) {
    run_bitonic_stage(stage, s_keys, s_vals, threadIdx.x, blockDim.x);
    __syncthreads();
  });
}

/// One block: for b in [0, batches), the pair A = in[b·2S, b·2S + S), B = in[b·2S + S, (b+1)·2S) with
/// the sorted flags kASorted / kBSorted is loaded, sorted by sort_segment_pair and stored to out at the
/// same offsets (front half: the S highest keys). Dynamic shared memory: 2S · (sizeof(float) +
/// sizeof(uint32_t)). The flags are template parameters: the method is fixed at compile time.
template <bool kASorted, bool kBSorted>
__global__ void segment_pair_sort_kernel(const float* __restrict__ keys_in, const uint32_t* __restrict__ vals_in,
                                         float* __restrict__ keys_out, uint32_t* __restrict__ vals_out, uint32_t S,
                                         uint32_t batches) {
  extern __shared__ uint32_t smem[];
  float* s_keys = reinterpret_cast<float*>(smem);
  uint32_t* s_vals = smem + 2 * S;
  constexpr SortMethod method = choose_sort_method(kASorted, kBSorted);
  for (uint32_t b = 0; b < batches; ++b) {
    const size_t a = size_t(b) * 2 * S;
    load_segment_pair(s_keys, s_vals, keys_in + a, vals_in + a, keys_in + a + S, vals_in + a + S, S, kASorted,
                      kBSorted, threadIdx.x, blockDim.x);
    __syncthreads();
    sort_segment_pair(s_keys, s_vals, S, method);
    store_segment_pair(s_keys, s_vals, keys_out + a, vals_out + a, keys_out + a + S, vals_out + a + S, S,
                       threadIdx.x, blockDim.x);
    __syncthreads();  // the next load overwrites what this store reads
  }
}

/// Launches segment_pair_sort_kernel as one block of `threads` (1..1024) on `stream`; S: a power of two
/// in [kMinSortSegment, kMaxSortSegment].
inline void launch_segment_pair_sort(const float* keys_in, const uint32_t* vals_in, float* keys_out,
                                     uint32_t* vals_out, uint32_t S, bool a_sorted, bool b_sorted, uint32_t threads,
                                     uint32_t batches, cudaStream_t stream = nullptr) {
  const size_t smem = size_t(2) * S * (sizeof(float) + sizeof(uint32_t));
  auto kernel = a_sorted ? (b_sorted ? segment_pair_sort_kernel<true, true> : segment_pair_sort_kernel<true, false>)
                         : (b_sorted ? segment_pair_sort_kernel<false, true> : segment_pair_sort_kernel<false, false>);
  kernel<<<1, threads, smem, stream>>>(keys_in, vals_in, keys_out, vals_out, S, batches);
  MV_CUDA_CHECK_LAUNCH();
}

/// One block of kThreads sorts `batches` problems of kThreads·kItems pairs descending with
/// cub::BlockRadixSort (all 32 key bits), problem b at offset b·n in and out.
template <int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads)
    cub_block_sort_kernel(const float* __restrict__ keys_in, const uint32_t* __restrict__ vals_in,
                          float* __restrict__ keys_out, uint32_t* __restrict__ vals_out, uint32_t batches) {
  using Sort = cub::BlockRadixSort<float, kThreads, kItems, uint32_t>;
  __shared__ typename Sort::TempStorage temp;
  constexpr size_t n = size_t(kThreads) * kItems;
  for (uint32_t b = 0; b < batches; ++b) {
    float keys[kItems];
    uint32_t vals[kItems];
    // The order of the input is irrelevant to a sort: load striped (coalesced), sort as if blocked.
    cub::LoadDirectStriped<kThreads>(threadIdx.x, keys_in + b * n, keys);
    cub::LoadDirectStriped<kThreads>(threadIdx.x, vals_in + b * n, vals);
    Sort(temp).SortDescendingBlockedToStriped(keys, vals);
    cub::StoreDirectStriped<kThreads>(threadIdx.x, keys_out + b * n, keys);
    cub::StoreDirectStriped<kThreads>(threadIdx.x, vals_out + b * n, vals);
    __syncthreads();  // temp is reused by the next problem
  }
}

/// The largest problem the one-block CUB comparison handles.
inline constexpr uint32_t kMaxCubBlockKeys = 1024;

namespace detail {
template <int kThreads, int kItems = 1>
bool launch_cub_block_sort_items(uint32_t n, const float* keys_in, const uint32_t* vals_in, float* keys_out,
                                 uint32_t* vals_out, uint32_t batches, cudaStream_t stream) {
  if constexpr (uint32_t(kThreads) * kItems > kMaxCubBlockKeys) {
    return false;
  } else {
    if (uint32_t(kThreads) * kItems != n)
      return launch_cub_block_sort_items<kThreads, kItems * 2>(n, keys_in, vals_in, keys_out, vals_out, batches,
                                                               stream);
    cub_block_sort_kernel<kThreads, kItems><<<1, kThreads, 0, stream>>>(keys_in, vals_in, keys_out, vals_out, batches);
    MV_CUDA_CHECK_LAUNCH();
    return true;
  }
}
}  // namespace detail

/// Launches cub_block_sort_kernel for n keys with a block of `threads`: both powers of two with
/// 32 <= threads <= n <= 1024 (n / threads items per thread). Returns false, launching nothing, for any
/// other combination (not instantiated).
inline bool launch_cub_block_sort(uint32_t threads, uint32_t n, const float* keys_in, const uint32_t* vals_in,
                                  float* keys_out, uint32_t* vals_out, uint32_t batches,
                                  cudaStream_t stream = nullptr) {
  switch (threads) {
    case 32: return detail::launch_cub_block_sort_items<32>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    case 64: return detail::launch_cub_block_sort_items<64>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    case 128: return detail::launch_cub_block_sort_items<128>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    case 256: return detail::launch_cub_block_sort_items<256>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    case 512: return detail::launch_cub_block_sort_items<512>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    case 1024:
      return detail::launch_cub_block_sort_items<1024>(n, keys_in, vals_in, keys_out, vals_out, batches, stream);
    default: return false;
  }
}

}  // namespace mv
