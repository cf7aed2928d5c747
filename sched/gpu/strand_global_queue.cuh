// Lehmann 2023's global-queue GPU strand strategies (§3.4, Algorithm 3): `cuda-global-queue` and
// `cuda-global-queue-unified-memory` (the strand arrays in managed memory, §4.2.3).
//
// One launch; work unit u is the strands [u·c, min(N, (u+1)·c)) (c: the knob work-unit, GridConfig). Thread
// t first runs unit t (the pre-assignment of §3.4: the first T units cost no atomic), then takes unit
// T + atomicAdd(counter, 1) until the units run out, each unit's strands to completion in order, keeping a
// strand's state in registers and storing it once. Memory, timed region and grid: sched/gpu/strand_gpu.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "base/cuda_check.h"
#include "sched/gpu/strand_gpu.cuh"
#include "sched/strand_strategy.h"

namespace mv {

namespace strand_detail {

/// Global queue (§3.4, Algorithm 3): units of c strands; unit t pre-assigned, then T + atomicAdd(next, 1).
/// *next starts at 0.
template <class W>
__global__ void strand_queue_kernel(W w, StrandArrays<W> a, uint32_t n, uint32_t c, unsigned long long* next,
                                    uint32_t max_steps) {
  const uint64_t units = (static_cast<uint64_t>(n) + c - 1) / c;
  const uint64_t threads = grid_threads();
  uint64_t u = thread_index();
  while (u < units) {
    const uint64_t first = u * c;
    const uint64_t last = first + c < n ? first + c : n;
    for (uint64_t i = first; i < last; ++i) run_to_completion(w, a, static_cast<uint32_t>(i), max_steps);
    u = threads + atomicAdd(next, 1ull);
  }
}

}  // namespace strand_detail

/// `cuda-global-queue` and `cuda-global-queue-unified-memory`: one launch, units of c strands from an
/// atomic counter.
template <class W>
class CudaGlobalQueueStrands final : public GpuStrandStrategy<W> {
 public:
  explicit CudaGlobalQueueStrands(StrandMemory memory)
      : GpuStrandStrategy<W>(StrandOrder::Index, memory, make_info(memory)) {}

  static StrategyInfo make_info(StrandMemory memory) {
    const bool managed = memory == StrandMemory::Managed;
    StrategyInfo i = strand_detail::gpu_strand_info(
        StrandOrder::Index, memory, managed ? "cuda-global-queue-unified-memory" : "cuda-global-queue",
        std::string("GPU, one launch: units of c strands, unit t pre-assigned to thread t, then an atomic counter; "
                    "each unit to completion") + (managed ? "; managed memory" : ""),
        managed ? "Lehmann 2023 §3.4, §4.2.3" : "Lehmann 2023 §3.4");
    i.knobs.insert(i.knobs.begin(), "work-unit");
    return i;
  }

  StrandRun<W> run(const W& w, const StrandRunSettings& s) override {
    using namespace strand_detail;
    auto resolve = [](const GridConfig& grid) {
      return resolve_strand_grid(grid, strand_queue_kernel<W>, "global-queue");
    };
    auto launch = [&](StrandGpuMemory<W>& m, dim3 grid, dim3 block, const GridConfig& g) {
      m.reset_counter();
      strand_queue_kernel<W><<<grid, block>>>(w, m.arrays(), w.num_strands(), g.work_unit, m.counter(), s.max_steps);
      MV_CUDA_CHECK_LAUNCH();
      return StrandLaunches{1, 0};
    };
    return this->run_on_gpu(w, s, resolve, launch);
  }
};

}  // namespace mv
