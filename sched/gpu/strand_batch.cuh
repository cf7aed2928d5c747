// Lehmann 2023's batching GPU strand strategies (§3.3, Algorithm 2): `cuda-batch` and `cuda-batch-permute`
// (over the permutation of §3.2).
//
// One launch: thread t takes the slots k = t, t + T, t + 2T, … < N (the slot → strand map of
// sched/gpu/strand_gpu.cuh) and runs each slot's strand from init to completion before the next, keeping
// its state in registers and storing it once. Memory, timed region and grid: sched/gpu/strand_gpu.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/cuda_check.h"
#include "sched/gpu/strand_gpu.cuh"
#include "sched/strand_strategy.h"

namespace mv {

namespace strand_detail {

/// Batching (§3.3): each thread runs its slots' strands to completion, one after the other.
template <class W>
__global__ void strand_batch_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n,
                                    uint32_t max_steps) {
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) run_to_completion(w, a, slot_strand(perm, k), max_steps);
}

}  // namespace strand_detail

/// `cuda-batch` and `cuda-batch-permute`: one launch, each thread's strands to completion in turn.
template <class W>
class CudaBatchStrands final : public GpuStrandStrategy<W> {
 public:
  explicit CudaBatchStrands(StrandOrder order)
      : GpuStrandStrategy<W>(order, StrandMemory::Device, make_info(order)) {}

  static StrategyInfo make_info(StrandOrder order) {
    const bool permute = order == StrandOrder::Permuted;
    return strand_detail::gpu_strand_info(
        order, StrandMemory::Device, permute ? "cuda-batch-permute" : "cuda-batch",
        permute ? "GPU, one launch: thread t runs strands perm[t], perm[t+nb], ... each to completion"
                : "GPU, one launch: thread t runs strands t, t+nb, ... each to completion",
        permute ? "Lehmann 2023 §3.2, §3.3" : "Lehmann 2023 §3.3");
  }

  StrandRun<W> run(const W& w, const StrandRunSettings& s) override {
    using namespace strand_detail;
    auto resolve = [](const GridConfig& grid) { return resolve_strand_grid(grid, strand_batch_kernel<W>, "batch"); };
    auto launch = [&](StrandGpuMemory<W>& m, dim3 grid, dim3 block, const GridConfig&) {
      strand_batch_kernel<W><<<grid, block>>>(w, m.arrays(), m.perm(), w.num_strands(), s.max_steps);
      MV_CUDA_CHECK_LAUNCH();
      return StrandLaunches{1, 0};
    };
    return this->run_on_gpu(w, s, resolve, launch);
  }
};

}  // namespace mv
