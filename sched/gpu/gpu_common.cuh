// Pieces shared by the GPU strategies: event timing and the task-list kernel.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "base/work.h"

namespace mv {

/// RAII pair of CUDA events timing a region of the default stream.
class GpuTimer {
 public:
  GpuTimer() {
    MV_CUDA_CHECK(cudaEventCreate(&start_));
    MV_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  void start(cudaStream_t s = nullptr) { MV_CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s = nullptr) { MV_CUDA_CHECK(cudaEventRecord(stop_, s)); }
  /// Waits for the stop event; milliseconds between start and stop.
  float elapsed_ms() {
    MV_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.f;
    MV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

/// Copies the first n entries of a strand run's device arrays (state, status, steps) into host vectors,
/// resized to n, and waits for the copies (the default stream).
template <class State>
void download_strand_arrays(const DeviceBuffer<State>& d_state, const DeviceBuffer<WorkStatus>& d_status,
                            const DeviceBuffer<uint32_t>& d_steps, uint32_t n, std::vector<State>& state,
                            std::vector<WorkStatus>& status, std::vector<uint32_t>& steps) {
  d_state.download(state, n);
  d_status.download(status, n);
  d_steps.download(steps, n);
  MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

/// One warp per entry of `tasks[0, count)`: the warp executes that task.
template <class View>
__global__ void run_task_list_kernel(View v, const uint32_t* __restrict__ tasks, uint32_t count) {
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp >= count) return;  // whole warps leave together: blockDim is a multiple of 32
  v.run_task_warp(tasks[warp]);
}

template <class View>
void launch_task_list(const View& v, const uint32_t* tasks, uint32_t count, uint32_t block_size) {
  if (count == 0) return;
  const uint32_t warps_per_block = block_size / 32;
  const uint32_t blocks = (count + warps_per_block - 1) / warps_per_block;
  run_task_list_kernel<<<blocks, block_size>>>(v, tasks, count);
  MV_CUDA_CHECK_LAUNCH();
}

/// 0, 1, ..., n-1 on the device.
inline void device_iota(DeviceBuffer<uint32_t>& buf, uint32_t n) {
  std::vector<uint32_t> h(n);
  for (uint32_t i = 0; i < n; ++i) h[i] = i;
  buf.upload(h);
}

}  // namespace mv
