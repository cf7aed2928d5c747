// RAII owner of a typed CUDA managed (unified-memory) allocation (cudaMallocManaged / cudaFree), the
// twin of DeviceBuffer for code that lets the driver migrate pages between host and GPU. Move-only.
// Hints and prefetches (cudaMemAdvise / cudaMemPrefetchAsync) go through the helpers below, which
// speak both the CUDA 12 (device ordinal) and the CUDA 13 (cudaMemLocation) signatures.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "base/cuda_check.h"

namespace mv {

template <class T>
class ManagedBuffer {
 public:
  ManagedBuffer() = default;
  /// `count` elements attached globally (any stream, any processor may access them); contents undefined.
  explicit ManagedBuffer(size_t count) {
    if (count) MV_CUDA_CHECK(cudaMallocManaged(&ptr_, count * sizeof(T), cudaMemAttachGlobal));
    count_ = count;
  }
  ~ManagedBuffer() {
    if (ptr_) cudaFree(ptr_);  // destructor path: errors cannot be reported here
  }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  ManagedBuffer(ManagedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  ManagedBuffer& operator=(ManagedBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

/// cudaMemAdvise on `bytes` at `ptr` for `device` (a device ordinal, or cudaCpuDeviceId for the host).
inline void managed_advise(const void* ptr, size_t bytes, cudaMemoryAdvise advice, int device) {
  if (!bytes) return;
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device == cudaCpuDeviceId ? 0 : device;
  MV_CUDA_CHECK(cudaMemAdvise(ptr, bytes, advice, loc));
#else
  MV_CUDA_CHECK(cudaMemAdvise(ptr, bytes, advice, device));
#endif
}

/// cudaMemPrefetchAsync of `bytes` at `ptr` to `device` (ordinal or cudaCpuDeviceId) on `stream`.
inline void managed_prefetch(const void* ptr, size_t bytes, int device, cudaStream_t stream = nullptr) {
  if (!bytes) return;
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device == cudaCpuDeviceId ? 0 : device;
  MV_CUDA_CHECK(cudaMemPrefetchAsync(ptr, bytes, loc, 0, stream));
#else
  MV_CUDA_CHECK(cudaMemPrefetchAsync(ptr, bytes, device, stream));
#endif
}

}  // namespace mv
