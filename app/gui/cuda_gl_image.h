// CUDA-GL interop for the display texture: CUDA writes the tone-mapped film straight into a GL texture,
// without a round trip through host memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

namespace mv::gui {

/// A GL texture (GL_TEXTURE_2D, GL_RGBA8) registered with CUDA as write-discard: CUDA overwrites all of
/// it, GL only samples it. The registration must be destroyed before the texture is deleted, while the
/// GL context is current. Not copyable or movable.
class CudaGlImage {
 public:
  /// Registers `texture` with the current CUDA device (cudaGraphicsGLRegisterImage). Returns null and
  /// sets `why` to a one-line reason when the GL context cannot be shared with CUDA (Mesa/llvmpipe, a
  /// remote display, GL on a non-NVIDIA device); that is an expected outcome, not an exception.
  static std::unique_ptr<CudaGlImage> try_register(unsigned texture, std::string& why);
  ~CudaGlImage();
  CudaGlImage(const CudaGlImage&) = delete;
  CudaGlImage& operator=(const CudaGlImage&) = delete;

  /// Copies `d_rgba` (device memory, width × height packed RGBA8, rows top to bottom, no padding) into
  /// the texture, ordered on `stream`: map, get the mapped array, copy device → array, unmap. The texture
  /// must be width × height. Throws CudaError.
  void copy_from(const uint32_t* d_rgba, int width, int height, cudaStream_t stream = nullptr);

 private:
  explicit CudaGlImage(cudaGraphicsResource_t resource) : resource_(resource) {}
  cudaGraphicsResource_t resource_;
};

}  // namespace mv::gui
