#include "app/gui/device_timer.h"

#include "base/cuda_check.h"

namespace mv::gui {

DeviceTimer::DeviceTimer() {
  MV_CUDA_CHECK(cudaEventCreate(&start_));
  const cudaError_t err = cudaEventCreate(&stop_);
  if (err != cudaSuccess) {
    cudaEventDestroy(start_);
    MV_CUDA_CHECK(err);
  }
}

DeviceTimer::~DeviceTimer() {
  cudaEventDestroy(stop_);  // destructor: nothing useful to do with a failure here
  cudaEventDestroy(start_);
}

void DeviceTimer::begin(cudaStream_t stream) { MV_CUDA_CHECK(cudaEventRecord(start_, stream)); }

void DeviceTimer::end(cudaStream_t stream) { MV_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

float DeviceTimer::elapsed_ms() {
  MV_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.f;
  MV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

}  // namespace mv::gui
