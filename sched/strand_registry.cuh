// The strand strategy registry of one workload type: Appendix A's nine strategies, in the paper's order
// (Lehmann 2023, §4.1.2 and Appendix A), then the patch-task strategies running the strands in
// groups of 32 (sched/adapters/strand_task_strategy.cuh). Include from a CUDA translation unit: it instantiates
// the GPU kernels for W.
#pragma once

#include <memory>

#include "sched/cpu/exact_priority.h"
#include "sched/gpu/gpu_strategies.cuh"
#include "sched/megakernel/megakernel.cuh"
#include "sched/cpu/strand_cpu.h"
#include "sched/gpu/strand_gpu.cuh"
#include "sched/strand_strategy.h"
#include "sched/adapters/strand_task_strategy.cuh"

namespace mv {

template <class W>
StrandStrategyRegistry<W> make_strand_registry() {
  StrandStrategyRegistry<W> r;
  auto add = [&r](auto make) {
    const StrandStrategyInfo info = make()->info();
    r.add(info, [make] { return std::unique_ptr<StrandStrategy<W>>(make()); });
  };
  auto gpu = [&add](StrandGpuMode mode, bool permute, bool managed) {
    add([=] { return std::make_unique<CudaStrands<W>>(StrandGpuVariant{mode, permute, managed}); });
  };
  add([] { return std::make_unique<SequentialStrands<W>>(); });
  add([] { return std::make_unique<CpuParallelStrands<W>>(); });
  gpu(StrandGpuMode::Bsp, false, false);          // cuda
  gpu(StrandGpuMode::Bsp, true, false);           // cuda-permute
  gpu(StrandGpuMode::Batch, false, false);        // cuda-batch
  gpu(StrandGpuMode::Batch, true, false);         // cuda-batch-permute
  gpu(StrandGpuMode::Bsp, false, true);           // cuda-unified-memory
  gpu(StrandGpuMode::GlobalQueue, false, false);  // cuda-global-queue
  gpu(StrandGpuMode::GlobalQueue, false, true);   // cuda-global-queue-unified-memory
  using B = StrandTaskBudget;
  add([] { return std::make_unique<StrandTaskStrategy<W, ExactPriorityStrategy>>(B::Unfinished, "Kerbl 2012 §6.2 (exact priority queue, CPU model)"); });
  add([] { return std::make_unique<StrandTaskStrategy<W, UniformStrategy>>(B::Unbounded, "Kerbl 2012 §6.3 (uniform baseline)"); });
  add([] { return std::make_unique<StrandTaskStrategy<W, SortedWavesStrategy>>(B::Unfinished, "Kerbl 2012 §1–2 (host-sorted waves)"); });
  add([] { return std::make_unique<StrandTaskStrategy<W, MegakernelStrategy>>(B::Unbounded, "Kerbl 2012 §3–5 (priority megakernel)"); });
  return r;
}

}  // namespace mv
