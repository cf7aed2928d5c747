// Lehmann 2023's run-to-completion GPU strategies on patch tasks (the progressive film): `cuda-batch` (§3.3)
// and `cuda-global-queue` (§3.4), the same algorithms that sched/gpu/strand_batch.cuh and
// sched/gpu/strand_global_queue.cuh run on strands, with a patch task as the work item (base/work.h: one
// update is one batch of samples, and the item is active until its target spp).
//
//  - cuda-batch: one launch of one full wave of resident warps; warp w takes tasks w, w + W, w + 2W, … and
//    runs each to its target before the next (bucket rendering, in index order).
//  - cuda-global-queue: one launch; each warp takes units of c consecutive tasks from an atomic counter and
//    runs each task of its unit to its target. c is the strategy's knob `work-unit` (base/params.h), the
//    same knob that the strand version reads.
//
// A progressive renderer must return within a frame, so a step is bounded by its work budget: before every
// batch a warp claims its samples from a shared budget counter, and stops when the budget is spent. The
// next step starts the assignment again from the first task; finished tasks are skipped with one read of
// their state, so the order across steps stays the index order. Priorities are ignored, as in the paper.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/params.h"
#include "sched/gpu/gpu_common.cuh"
#include "sched/gpu/gpu_strategies.cuh"
#include "sched/strand_grid.h"
#include "sched/strategy.h"

namespace mv {

/// The step's shared state on the device.
struct ToCompletionShared {
  unsigned long long spent;  ///< work claimed in this step
  unsigned int next;         ///< the global queue's next task
};

/// Runs the tasks of one warp's sequence to completion within the budget. `Queue`: units of `unit` tasks
/// from shared.next; otherwise the static sequence warp, warp + warps, …
template <class View, bool Queue>
__global__ void to_completion_kernel(View v, uint32_t n, uint32_t unit, uint32_t work_per_batch,
                                     unsigned long long budget, ToCompletionShared* shared) {
  constexpr unsigned kFull = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const uint32_t warps = (gridDim.x * blockDim.x) >> 5;
  uint32_t first = Queue ? 0u : warp, count = Queue ? 0u : 1u;
  for (;;) {
    if (Queue) {
      unsigned int base = 0;
      if (lane == 0) base = atomicAdd(&shared->next, unit);
      first = __shfl_sync(kFull, base, 0);
      count = unit;
    }
    if (first >= n) return;
    for (uint32_t t = first; t < n && t < first + count; ++t) {
      while (!v.finished(t)) {
        unsigned long long before = 0;
        if (lane == 0) before = atomicAdd(&shared->spent, static_cast<unsigned long long>(work_per_batch));
        if (__shfl_sync(kFull, before, 0) >= budget) return;  // the step's budget is spent
        v.run_task_warp(t);
      }
    }
    if (!Queue) first += warps;
  }
}

/// Knobs of the global queue on patch tasks.
struct ToCompletionSettings {
  uint32_t work_unit = 1;  ///< c: tasks per unit, [1, kMaxWorkUnit]
};

template <class W, bool Queue>
class ToCompletionStrategy final : public Strategy<W> {
 public:
  const StrategyInfo& info() const override { return info_; }
  Params* params() override { return Queue ? &params_ : nullptr; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    const uint32_t n = w.num_tasks();
    if (!shared_.size()) shared_.resize(1);
    MV_CUDA_CHECK(cudaMemsetAsync(shared_.data(), 0, sizeof(ToCompletionShared)));
    const uint32_t block = s.block_size;
    auto kernel = to_completion_kernel<typename W::View, Queue>;
    if (block != wave_block_size_) {  // one full wave of resident blocks, recomputed when the block size changes
      int per_sm = 0, device = 0, sms = 0;
      MV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block), 0));
      MV_CUDA_CHECK(cudaGetDevice(&device));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      wave_blocks_ = static_cast<uint32_t>(std::max(1, per_sm * sms));
      wave_block_size_ = block;
    }
    const uint32_t blocks = wave_blocks_;
    const uint64_t budget = std::max<uint64_t>(budget_work, w.work_per_task());
    return run_gpu_step(w, [&](const typename W::View& v) {
      kernel<<<blocks, block>>>(v, n, settings_.work_unit, w.work_per_task(), budget, shared_.data());
      MV_CUDA_CHECK_LAUNCH();
      return uint64_t{n};
    });
  }

 private:
  static const ParamTable<ToCompletionSettings>& table() {
    static const ParamTable<ToCompletionSettings> t = [] {
      ParamTable<ToCompletionSettings> p;
      p.add(work_unit_param("patch tasks"), &ToCompletionSettings::work_unit);
      return p;
    }();
    return t;
  }
  StrategyInfo info_{Queue ? "cuda-global-queue" : "cuda-batch",
                     Queue ? "GPU, Lehmann 2023 §3.4 on patch tasks: warps take units of c patches from an atomic "
                             "counter and run each to its target (bucket order); priorities are ignored"
                           : "GPU, Lehmann 2023 §3.3 on patch tasks: warp w runs patches w, w + W, … each to its "
                             "target (bucket order); priorities are ignored",
                     Queue ? "Lehmann 2023 §3.4" : "Lehmann 2023 §3.3", Side::Device};
  ToCompletionSettings settings_;
  BoundParams<ToCompletionSettings> params_{table(), settings_};
  DeviceBuffer<ToCompletionShared> shared_;
  uint32_t wave_block_size_ = 0, wave_blocks_ = 0;  ///< the block size the wave was computed for, and its blocks
};

}  // namespace mv
