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
#include "sched/gpu/strand_batch.cuh"
#include "sched/gpu/strand_bsp.cuh"
#include "sched/gpu/strand_global_queue.cuh"
#include "sched/strand_strategy.h"
#include "sched/adapters/strand_task_strategy.cuh"

namespace mv {

template <class W>
StrandStrategyRegistry<W> make_strand_registry() {
  StrandStrategyRegistry<W> r;
  auto add = [&r](auto make) {
    const StrategyInfo info = make()->info();
    r.add(info, [make] { return std::unique_ptr<StrandStrategy<W>>(make()); });
  };
  using O = StrandOrder;
  using M = StrandMemory;
  add([] { return std::make_unique<SequentialStrands<W>>(); });
  add([] { return std::make_unique<CpuParallelStrands<W>>(); });
  add([] { return std::make_unique<CudaBspStrands<W>>(O::Index, M::Device); });        // cuda
  add([] { return std::make_unique<CudaBspStrands<W>>(O::Permuted, M::Device); });     // cuda-permute
  add([] { return std::make_unique<CudaBatchStrands<W>>(O::Index); });                 // cuda-batch
  add([] { return std::make_unique<CudaBatchStrands<W>>(O::Permuted); });              // cuda-batch-permute
  add([] { return std::make_unique<CudaBspStrands<W>>(O::Index, M::Managed); });       // cuda-unified-memory
  add([] { return std::make_unique<CudaGlobalQueueStrands<W>>(M::Device); });          // cuda-global-queue
  add([] { return std::make_unique<CudaGlobalQueueStrands<W>>(M::Managed); });         // cuda-global-queue-unified-memory
  using B = StrandTaskBudget;
  add([] { return std::make_unique<StrandTaskStrategy<W, ExactPriorityStrategy>>(B::Unfinished); });
  add([] { return std::make_unique<StrandTaskStrategy<W, UniformStrategy>>(B::Unbounded); });
  add([] { return std::make_unique<StrandTaskStrategy<W, SortedWavesStrategy>>(B::Unfinished); });
  add([] { return std::make_unique<StrandTaskStrategy<W, MegakernelStrategy>>(B::Unbounded); });
  return r;
}

}  // namespace mv
