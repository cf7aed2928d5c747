// A CUDA graph captured once from a sequence of stream work and replayed while the inputs it bakes in
// stay the same. Launching many small kernels (a queue rebuild, say) costs several microseconds of host
// time per launch, and the GPU waits for the host in between; one graph launch issues them all at once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/cuda_check.h"

namespace mv {

/// The bytes a captured graph bakes in (kernel arguments, buffer addresses, flags), appended field by
/// field: two keys are equal exactly when every field is.
class GraphKey {
 public:
  template <class T>
  GraphKey& add(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "a graph key holds plain bytes");
    const auto* p = reinterpret_cast<const unsigned char*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  void clear() { bytes_.clear(); }
  bool operator==(const GraphKey& o) const { return bytes_ == o.bytes_; }
  bool operator!=(const GraphKey& o) const { return !(*this == o); }

 private:
  std::vector<unsigned char> bytes_;
};

/// Replays the work that a function enqueues on a stream, as one CUDA graph.
///
/// launch(key, enqueue, stream) captures `enqueue(capture_stream)` into a graph the first time and
/// whenever `key` differs from the key it was captured with, then launches the graph on `stream`, where it
/// runs after the stream's earlier work and before its later work. `enqueue` must only enqueue stream work
/// (kernels, cudaMemsetAsync, CUB device algorithms with the stream it is given): no synchronous copy, no
/// allocation, no synchronisation. The capture is thread-local: other threads' CUDA calls are unaffected.
///
/// Errors: every CUDA call is checked and throws mv::CudaError; an exception thrown by `enqueue` ends the
/// capture, drops the graph and propagates. Not copyable; not thread-safe.
class GraphReplay {
 public:
  GraphReplay() = default;
  ~GraphReplay() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (capture_) cudaStreamDestroy(capture_);
  }
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  template <class Enqueue>
  void launch(const GraphKey& key, Enqueue&& enqueue, cudaStream_t stream = nullptr) {
    if (!exec_ || key != key_) capture(key, enqueue);
    MV_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
  }

  /// Drops the graph: the next launch captures anew.
  void reset() {
    if (exec_) MV_CUDA_CHECK(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
  }

  /// Graphs captured so far (each a capture and an instantiation, on the host).
  uint64_t captures() const { return captures_; }

 private:
  template <class Enqueue>
  void capture(const GraphKey& key, Enqueue& enqueue) {
    reset();
    if (!capture_) MV_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_, cudaStreamNonBlocking));
    MV_CUDA_CHECK(cudaStreamBeginCapture(capture_, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      enqueue(capture_);
    } catch (...) {
      if (cudaStreamEndCapture(capture_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    MV_CUDA_CHECK(cudaStreamEndCapture(capture_, &graph));
    const cudaError_t err = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) exec_ = nullptr;
    MV_CUDA_CHECK(err);
    key_ = key;
    ++captures_;
  }

  cudaStream_t capture_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  GraphKey key_;
  uint64_t captures_ = 0;
};

}  // namespace mv
