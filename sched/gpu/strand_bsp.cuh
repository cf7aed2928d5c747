// Lehmann 2023's BSP GPU strand strategies (§3.1, Algorithm 1): `cuda`, `cuda-permute` (over the
// permutation of §3.2) and `cuda-unified-memory` (the strand arrays in managed memory, §4.2.3).
//
// One launch initialises every strand, then one launch per super-step: thread t visits the slots k = t,
// t + T, t + 2T, … < N (a grid-stride loop; the slot → strand map of sched/gpu/strand_gpu.cuh) and gives the
// strand at slot k one update if it is still Active. Each warp adds its count of strands left Active to a
// counter; the host reads it after every super-step and stops at 0 (or after max_steps super-steps). The
// kernels load and store a strand's state every super-step. Memory, timed region and grid:
// sched/gpu/strand_gpu.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "base/cuda_check.h"
#include "sched/gpu/strand_gpu.cuh"
#include "sched/strand_strategy.h"

namespace mv {

namespace strand_detail {

/// BSP init: every strand's state from init(i), Active, 0 steps (same slot mapping as the steps).
template <class W>
__global__ void strand_init_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n) {
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) {
    const uint32_t i = slot_strand(perm, k);
    a.state[i] = w.init(i);
    a.status[i] = WorkStatus::Active;
    a.steps[i] = 0;
  }
}

/// One BSP super-step: one update of every Active strand; adds the strands left Active to *active.
/// blockDim.x is a multiple of 32, so every warp is full for the reduction.
template <class W>
__global__ void strand_bsp_step_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n,
                                       unsigned long long* active) {
  uint32_t still = 0;
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) {
    const uint32_t i = slot_strand(perm, k);
    if (a.status[i] != WorkStatus::Active) continue;
    typename W::State s = a.state[i];
    const WorkStatus st = w.update(s);
    a.state[i] = s;
    a.steps[i] += 1;
    a.status[i] = st;
    if (st != WorkStatus::Active) a.finish.stamp(i);
    still += st == WorkStatus::Active ? 1u : 0u;
  }
  for (int offset = 16; offset > 0; offset >>= 1) still += __shfl_down_sync(0xffffffffu, still, offset);
  if ((threadIdx.x & 31u) == 0 && still) atomicAdd(active, static_cast<unsigned long long>(still));
}

}  // namespace strand_detail

/// `cuda`, `cuda-permute` and `cuda-unified-memory`: BSP super-steps, one launch each.
template <class W>
class CudaBspStrands final : public GpuStrandStrategy<W> {
 public:
  /// Throws std::invalid_argument for the permuted order in managed memory (not one of Lehmann's).
  CudaBspStrands(StrandOrder order, StrandMemory memory)
      : GpuStrandStrategy<W>(order, memory, make_info(order, memory)) {}

  static StrategyInfo make_info(StrandOrder order, StrandMemory memory) {
    const bool permute = order == StrandOrder::Permuted;
    if (memory == StrandMemory::Device)
      return strand_detail::gpu_strand_info(
          order, memory, permute ? "cuda-permute" : "cuda",
          permute ? "GPU BSP over a random permutation: one launch per super-step, thread t updates strands "
                    "perm[t], perm[t+nb], ... once each"
                  : "GPU BSP: one launch per super-step, thread t updates strands t, t+nb, ... once each",
          permute ? "Lehmann 2023 §3.2" : "Lehmann 2023 §3.1");
    if (permute) throw std::invalid_argument("CudaBspStrands: not one of Lehmann's strategies");
    return strand_detail::gpu_strand_info(
        order, memory, "cuda-unified-memory",
        "cuda with the strand arrays and the active counter in managed memory (hints, optional prefetch)",
        "Lehmann 2023 §3.1, §4.2.3");
  }

  StrandRun<W> run(const W& w, const StrandRunSettings& s) override {
    using namespace strand_detail;
    const uint32_t n = w.num_strands();
    // The grid, resolved for the step kernel; the init kernel runs with it too.
    auto resolve = [](const GridConfig& grid) {
      const GridConfig g = resolve_strand_grid(grid, strand_bsp_step_kernel<W>, "BSP step");
      resolve_strand_grid(g, strand_init_kernel<W>, "BSP init");
      return g;
    };
    auto launch = [&](StrandGpuMemory<W>& m, dim3 grid, dim3 block, const GridConfig&) {
      StrandLaunches l;
      strand_init_kernel<W><<<grid, block>>>(w, m.arrays(), m.perm(), n);
      MV_CUDA_CHECK_LAUNCH();
      ++l.launches;
      while (l.super_steps < s.max_steps) {
        m.reset_counter();
        strand_bsp_step_kernel<W><<<grid, block>>>(w, m.arrays(), m.perm(), n, m.counter());
        MV_CUDA_CHECK_LAUNCH();
        ++l.launches;
        ++l.super_steps;
        if (m.read_counter() == 0) break;
      }
      return l;
    };
    return this->run_on_gpu(w, s, resolve, launch);
  }
};

}  // namespace mv
