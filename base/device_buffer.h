// RAII owner of a typed device allocation (cudaMalloc / cudaFree). Move-only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "base/cuda_check.h"

namespace mv {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  /// Reallocates to `count` elements (contents undefined). No-op if the size is unchanged.
  void resize(size_t count) {
    if (count == count_) return;
    release();
    if (count > 0) MV_CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
    count_ = count;
  }
  void upload(const T* src, size_t count, cudaStream_t stream = nullptr) {
    resize(count);
    if (count) MV_CUDA_CHECK(cudaMemcpyAsync(ptr_, src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void upload(const std::vector<T>& v, cudaStream_t stream = nullptr) { upload(v.data(), v.size(), stream); }
  void download(T* dst, size_t count, cudaStream_t stream = nullptr) const {
    if (count) MV_CUDA_CHECK(cudaMemcpyAsync(dst, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
  /// Resizes `dst` to `count` and copies the first `count` elements into it (asynchronous on `stream`, like
  /// the pointer form: synchronise before reading `dst`).
  void download(std::vector<T>& dst, size_t count, cudaStream_t stream = nullptr) const {
    dst.resize(count);
    download(dst.data(), count, stream);
  }
  void zero(cudaStream_t stream = nullptr) {
    if (count_) MV_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, count_ * sizeof(T), stream));
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);  // destructor path: errors cannot be reported here
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace mv
