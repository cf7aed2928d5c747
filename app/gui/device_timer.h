// Timing of device work with a pair of CUDA events (the display's GPU cost per frame).
#pragma once

#include <cuda_runtime.h>

namespace mv::gui {

/// Two CUDA events bracketing work on a stream. Create only when a CUDA device is in use. Not copyable.
class DeviceTimer {
 public:
  DeviceTimer();  ///< throws CudaError
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void begin(cudaStream_t stream = nullptr);
  void end(cudaStream_t stream = nullptr);
  /// Milliseconds between the last begin() and end() on the device; waits for end() to complete.
  float elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace mv::gui
