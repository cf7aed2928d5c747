// GPU strategies `uniform` and `sorted-waves` (host-driven waves of warp-per-task kernels).
//
//  - uniform: every unfinished task once per pass, in task order, regardless of priority. The pass's
//    task list is compacted with cub::DeviceSelect::Flagged; a step launches the next budget's worth of
//    the list. The baseline of Kerbl 2012 Figs 8–9 ("distributing rays uniformly").
//  - sorted-waves: each wave sorts all task priorities on the GPU (cub::DeviceRadixSort, descending) and
//    runs the K highest. This is the host-driven priority scheduler that Kerbl 2012 §1–2 contrasts with
//    the megakernel: correct priorities, but a global sort and a launch per wave. Measured on an H100
//    (docs/perf.md): each wave costs about 55–110 µs beyond its tasks (the sort's dependent kernels and
//    the wave's tail), so throughput relative to uniform grows with K: 0.62 at K = 8192, 0.76 at 16384.
//    Running two interleaved task classes on two streams, and replaying each wave from a CUDA graph,
//    were tried and did not help (the cost is on the GPU, not in launches): removing this barrier is
//    what the priority megakernel is for.
// Both keep the GPU busy by launching all of a step's waves back to back without host synchronisation
// (one event pair and one counter read per step).
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "sched/gpu/gpu_common.cuh"
#include "sched/strategy.h"

namespace mv {

template <class View>
__global__ void unfinished_flags_kernel(View v, uint8_t* flags, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = v.finished(i) ? 0 : 1;
}

/// Shared step frame: zero counters, time the waves, read counters back.
template <class W, class Waves>
StepStats run_gpu_step(W& w, Waves&& waves) {
  WorkCounters* counters = w.device_counters();
  MV_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(WorkCounters)));
  GpuTimer timer;
  timer.start();
  const uint64_t launched = waves(w.view(Side::Device));
  timer.stop();
  StepStats st;
  st.busy_ms = timer.elapsed_ms();
  WorkCounters c;
  MV_CUDA_CHECK(cudaMemcpy(&c, counters, sizeof(c), cudaMemcpyDeviceToHost));
  st.work = c.work;
  st.tasks = c.tasks;
  st.finished = c.finished;
  (void)launched;
  return st;
}

template <class W>
class UniformStrategy final : public Strategy<W> {
 public:
  const StrategyInfo& info() const override { return info_; }
  void invalidate() override { list_size_ = cursor_ = 0; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    const uint32_t n = w.num_tasks();
    const uint64_t tasks_budget = std::max<uint64_t>(1, (budget_work + w.work_per_task() - 1) / w.work_per_task());
    return run_gpu_step(w, [&](const typename W::View& v) {
      uint64_t launched = 0;
      while (launched < tasks_budget) {
        if (cursor_ >= list_size_) {
          rebuild(v, n);
          if (list_size_ == 0) break;
        }
        const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(list_size_ - cursor_, tasks_budget - launched));
        launch_task_list(v, list_.data() + cursor_, count, s.block_size);
        cursor_ += count;
        launched += count;
      }
      return launched;
    });
  }

 private:
  void rebuild(const typename W::View& v, uint32_t n) {
    if (iota_.size() != n) {
      device_iota(iota_, n);
      flags_.resize(n);
      list_.resize(n);
      selected_.resize(1);
      size_t bytes = 0;
      MV_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, iota_.data(), flags_.data(), list_.data(),
                                               selected_.data(), static_cast<int>(n)));
      temp_.resize(bytes);
    }
    unfinished_flags_kernel<<<(n + 255) / 256, 256>>>(v, flags_.data(), n);
    MV_CUDA_CHECK_LAUNCH();
    size_t bytes = temp_.size();
    MV_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, iota_.data(), flags_.data(), list_.data(),
                                             selected_.data(), static_cast<int>(n)));
    int count = 0;
    MV_CUDA_CHECK(cudaMemcpy(&count, selected_.data(), sizeof(int), cudaMemcpyDeviceToHost));
    list_size_ = static_cast<uint32_t>(count);
    cursor_ = 0;
  }

  StrategyInfo info_{"uniform", "GPU: every unfinished patch once per pass, ignoring priorities",
                     "Kerbl 2012 §6.3 (uniform baseline)", Side::Device};
  DeviceBuffer<uint32_t> iota_, list_;
  DeviceBuffer<uint8_t> flags_, temp_;
  DeviceBuffer<int> selected_;
  uint32_t list_size_ = 0, cursor_ = 0;
};

template <class W>
class SortedWavesStrategy final : public Strategy<W> {
 public:
  const StrategyInfo& info() const override { return info_; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    const uint32_t n = w.num_tasks();
    ensure(n);
    const uint64_t tasks_budget = std::max<uint64_t>(1, (budget_work + w.work_per_task() - 1) / w.work_per_task());
    return run_gpu_step(w, [&](const typename W::View& v) {
      uint64_t launched = 0;
      while (launched < tasks_budget) {
        size_t bytes = temp_.size();
        MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp_.data(), bytes, v.priority, keys_.data(),
                                                                iota_.data(), order_.data(), static_cast<int>(n)));
        const uint32_t k = static_cast<uint32_t>(std::min<uint64_t>({s.wave_size, tasks_budget - launched, n}));
        launch_task_list(v, order_.data(), k, s.block_size);
        launched += k;
      }
      return launched;
    });
  }

 private:
  void ensure(uint32_t n) {
    if (iota_.size() == n) return;
    device_iota(iota_, n);
    keys_.resize(n);
    order_.resize(n);
    size_t bytes = 0;
    MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const float*>(nullptr),
                                                            keys_.data(), iota_.data(), order_.data(),
                                                            static_cast<int>(n)));
    temp_.resize(std::max<size_t>(bytes, 1));
  }

  StrategyInfo info_{"sorted-waves",
                     "GPU: each wave sorts all priorities (CUB radix sort) and runs the K highest",
                     "Kerbl 2012 §1–2 (host-sorted waves)", Side::Device, false, {}, true};
  DeviceBuffer<uint32_t> iota_, order_;
  DeviceBuffer<float> keys_;
  DeviceBuffer<uint8_t> temp_;
};

}  // namespace mv
