// A host array and its device copy, for data that is worked on on one side at a time (Side): the Film's
// buffers (render/film.h) and the strand arrays of a patch-task strategy's run
// (sched/adapters/strand_task_strategy.cuh). MirroredBuffer keeps both copies and moves the whole array
// between them; resize_on allocates the copy of one side only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "base/common.h"
#include "base/device_buffer.h"

namespace mv {

/// Resizes the copy on `side` only, `host` or `device`, to `count` elements and returns it (host: new
/// elements are value-initialised; device: contents undefined). Throws CudaError for a failed device
/// allocation.
template <class T>
T* resize_on(Side side, std::vector<T>& host, DeviceBuffer<T>& device, size_t count) {
  if (side == Side::Host) {
    host.resize(count);
    return host.data();
  }
  device.resize(count);
  return device.data();
}

/// Both copies of one array; `data(side)` is the one on `side`.
template <class T>
struct MirroredBuffer {
  std::vector<T> host;
  DeviceBuffer<T> device;

  /// The copy on `side` (null while that side has none).
  T* data(Side side) { return side == Side::Host ? host.data() : device.data(); }

  /// `count` value-initialised elements on the host, and `count` (contents undefined) on the device when
  /// `with_device`, else no device copy.
  void assign(size_t count, bool with_device) {
    host.assign(count, T{});
    if (with_device)
      device.resize(count);
    else
      device = DeviceBuffer<T>{};
  }

  /// Sets every element to T{} on the host, and to zero bytes on the device when `with_device`
  /// (asynchronous on the default stream).
  void zero(bool with_device) {
    std::fill(host.begin(), host.end(), T{});
    if (with_device) device.zero();
  }

  /// Host → device, the whole host array (asynchronous on `stream`).
  void upload(cudaStream_t stream = nullptr) { device.upload(host, stream); }
  /// Device → host, host.size() elements (asynchronous on `stream`).
  void download(cudaStream_t stream = nullptr) { device.download(host.data(), host.size(), stream); }
};

}  // namespace mv
