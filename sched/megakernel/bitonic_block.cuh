// The segment sort of sched/megakernel/bitonic.h run by one CUDA block (Kerbl et al. 2012, §4.3 and §6.1), and the
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
#include "sched/megakernel/bitonic.h"

namespace mv {

namespace bitonic_detail {

/// One compare-exchange of a stage with stride j ≤ 16 held in registers: this lane's element has index
/// `i` in the sub-array (partner i ^ j in lane ^ j, same register). Both lanes take the same decision
/// (the network's: swap iff descending ? lo < hi : hi < lo, strictly, so equal keys keep their values).
__device__ __forceinline__ void exchange_shfl(float& key, uint32_t& val, uint32_t i, uint32_t k, uint32_t j,
                                              bool ascending) {
  const float other = __shfl_xor_sync(0xffffffffu, key, static_cast<int>(j));
  const uint32_t other_val = __shfl_xor_sync(0xffffffffu, val, static_cast<int>(j));
  const bool is_lo = (i & j) == 0;
  const bool descending = (((i & ~j) & k) == 0) != ascending;
  const float lo = is_lo ? key : other, hi = is_lo ? other : key;
  if (descending ? lo < hi : hi < lo) {
    key = other;
    val = other_val;
  }
}

/// The stages (k, j) with j ≤ 32 on every aligned 64-element block of the sub-array keys/vals[0, n), for
/// k = k_first … k_last (powers of two; a k > 64 runs only its stages j = 32 … 1), by whole warps:
/// warp w takes blocks w, w + W, … (W = blockDim.x / 32), lane l holding elements l and l + 32 of a
/// block in registers, so the stride-32 stage is a swap within the lane and strides 16 … 1 are
/// shuffles. Needs n a multiple of 64 and blockDim.x a multiple of 32; the caller synchronises the block
/// before and after. (Blocks of 128 or 256 elements, 4 or 8 registers a lane, were measured slower on an
/// H100: 9.0 instead of 7.3 µs for 1024 keys.)
__device__ __forceinline__ void register_stages(float* keys, uint32_t* vals, uint32_t n, uint32_t k_first,
                                                uint32_t k_last, bool ascending) {
  const uint32_t lane = threadIdx.x & 31u, warps = blockDim.x >> 5;
  for (uint32_t b = threadIdx.x >> 5; b < n / 64; b += warps) {
    const uint32_t i0 = 64 * b + lane, i1 = i0 + 32;
    float k0 = keys[i0], k1 = keys[i1];
    uint32_t v0 = vals[i0], v1 = vals[i1];
    for (uint32_t k = k_first; k <= k_last; k <<= 1) {
      for (uint32_t j = (k >> 1) < 32u ? (k >> 1) : 32u; j > 0; j >>= 1) {
        if (j == 32) {  // elements i0 and i1 = i0 + 32 are both this lane's
          const bool descending = ((i0 & k) == 0) != ascending;
          if (descending ? k0 < k1 : k1 < k0) {
            const float tk = k0;
            k0 = k1;
            k1 = tk;
            const uint32_t tv = v0;
            v0 = v1;
            v1 = tv;
          }
        } else {
          exchange_shfl(k0, v0, i0, k, j, ascending);
          exchange_shfl(k1, v1, i1, k, j, ascending);
        }
      }
    }
    keys[i0] = k0;
    keys[i1] = k1;
    vals[i0] = v0;
    vals[i1] = v1;
  }
}

/// Merges k = k_first … k_last (each with strides k/2 … 1) of the bitonic network on the sub-array
/// keys/vals[0, n) (every thread of the block calls it; a barrier before is the caller's, one after is
/// done here): the stages with j ≥ 64 through shared memory with a block barrier each, every run of
/// stages with j ≤ 32 in one register pass (register_stages). A full sort of 1024 keys takes 15
/// shared-memory stages and 6 register passes instead of 55 barriers. Sub-arrays of fewer than 64
/// elements or blocks of a partial warp run stage by stage. The network is
/// for_each_bitonic_stage's, so the result is the CPU twin's, bit for bit.
__device__ __forceinline__ void run_merges(float* keys, uint32_t* vals, uint32_t n, uint32_t k_first, uint32_t k_last,
                                           bool ascending) {
  if (n < 64 || (blockDim.x & 31u) != 0) {
    for (uint32_t k = k_first; k <= k_last; k <<= 1)
      for (uint32_t j = k >> 1; j > 0; j >>= 1) {
        bitonic_stage(keys, vals, n, k, j, threadIdx.x, blockDim.x, ascending);
        __syncthreads();
      }
    return;
  }
  uint32_t k = k_first;
  if (k <= 64) {  // k = 2 … 64: every stage inside the 64-element blocks
    register_stages(keys, vals, n, k, k_last < 64 ? k_last : 64, ascending);
    __syncthreads();
    k = 128;
  }
  for (; k <= k_last; k <<= 1) {
    for (uint32_t j = k >> 1; j >= 64; j >>= 1) {
      bitonic_stage(keys, vals, n, k, j, threadIdx.x, blockDim.x, ascending);
      __syncthreads();
    }
    register_stages(keys, vals, n, k, k, ascending);
    __syncthreads();
  }
}

}  // namespace bitonic_detail

/// Block-level sort of a pair loaded canonically into s_keys/s_vals[0, 2S) (load_segment_pair, followed
/// by a __syncthreads()): every thread of the block must call it. Runs the network of `method`
/// (for_each_bitonic_stage's stages, in order), so on return the pair is sorted descending and visible to
/// the whole block. S: a power of two in [16, 512]. Each warp sorts register blocks of 64 elements
/// (shuffles and a register swap); only strides of 64 or more go through shared memory, with a block
/// barrier each (bitonic_detail::run_merges).
__device__ __forceinline__ void sort_segment_pair(float* s_keys, uint32_t* s_vals, uint32_t S, SortMethod method) {
  const uint32_t n = 2 * S;
  if (method == SortMethod::UnsortedUnsorted) {
    bitonic_detail::run_merges(s_keys, s_vals, n, 2, n, false);
    return;
  }
  if (method == SortMethod::OneSorted)  // [descending | unsorted] → [descending | ascending]: bitonic
    bitonic_detail::run_merges(s_keys + S, s_vals + S, S, 2, S, true);
  bitonic_detail::run_merges(s_keys, s_vals, n, n, n, false);  // the top-level merge
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
