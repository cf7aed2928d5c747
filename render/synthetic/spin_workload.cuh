// Blocking spin tasks for the scheduler benchmark of Kerbl 2012 §6.2 (Figs 4 and 5): n tasks that
// each occupy their worker for a fixed wall-clock time and run exactly once, with static priorities.
// The megakernel runs them like patch tasks (the same View interface as PatchWorkload::View), so
// `megaview sched-bench` measures the real queue and controller, not a model of them.
//
// Priorities: task i has priority i. A rebuild in task order (MegakernelSettings::rebuild_sorted =
// false) therefore fills the queue in ascending priority — §6.2's worst case, where FIFO scores 0.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "base/common.h"
#include "base/cuda_check.h"
#include "base/device_buffer.h"

namespace mv {

/// Device view of a SpinWorkload (what megakernel_kernel calls).
struct SpinView {
  const float* priority = nullptr;  ///< n entries, static
  uint32_t* executions = nullptr;   ///< n counters: how often each task ran (must end at exactly 1)
  WorkCounters* counters = nullptr;
  unsigned long long spin_ns = 0;   ///< duration of one task

  __device__ bool finished(uint32_t task) const { return executions[task] >= 1u; }

  /// The calling warp executes `task`: lane 0 spins on the global timer (ns) for spin_ns while the
  /// other lanes wait at the warp barrier, so the whole warp (one worker) is blocked, as in §6.2.
  /// Returns 1 (the megakernel treats 0 as "already finished").
  __device__ uint32_t run_task_warp(uint32_t task) const {
    if ((threadIdx.x & 31u) == 0) {
      const unsigned long long t0 = global_ns();
      while (global_ns() - t0 < spin_ns) {
      }
      ++executions[task];  // one executor at a time: the queue hands a task to one warp
      atomicAdd(&counters->work, 1ull);
      atomicAdd(&counters->tasks, 1u);
      atomicAdd(&counters->finished, 1u);
    }
    __syncwarp();
    return 1;
  }

  __device__ static unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }
};

/// n spin tasks of `spin_us` µs each, priorities 0 … n−1, on the device. Throws CudaError.
class SpinWorkload {
 public:
  using View = SpinView;

  SpinWorkload(uint32_t n, double spin_us) : n_(n), spin_ns_(static_cast<unsigned long long>(spin_us * 1000.0)) {
    std::vector<float> p(n);
    for (uint32_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
    priority_.resize(n);
    priority_.upload(p.data(), n);
    executions_.resize(n);
    executions_.zero();
    counters_.resize(1);
    counters_.zero();
  }

  uint32_t num_tasks() const { return n_; }
  uint32_t work_per_task() const { return 1; }
  WorkCounters* device_counters() { return counters_.data(); }
  View view(Side) { return View{priority_.data(), executions_.data(), counters_.data(), spin_ns_}; }

  /// How often each task ran (host copy).
  std::vector<uint32_t> executions() const {
    std::vector<uint32_t> e(n_);
    executions_.download(e.data(), n_);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    return e;
  }

 private:
  uint32_t n_;
  unsigned long long spin_ns_;
  DeviceBuffer<float> priority_;
  DeviceBuffer<uint32_t> executions_;
  DeviceBuffer<WorkCounters> counters_;
};

}  // namespace mv
