#include "app/gui/cuda_gl_image.h"

#include <glad/gl.h>  // before cuda_gl_interop.h, which needs the GL types
#include <cuda_gl_interop.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/cuda_check.h"

namespace mv::gui {

namespace {

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

/// Unmaps on scope exit unless released (the error path of copy_from; the normal path unmaps checked).
class MappedResource {
 public:
  MappedResource(cudaGraphicsResource_t& r, cudaStream_t s) : resource_(r), stream_(s) {
    MV_CUDA_CHECK(cudaGraphicsMapResources(1, &resource_, stream_));
  }
  ~MappedResource() {
    if (mapped_) cudaGraphicsUnmapResources(1, &resource_, stream_);  // unwinding: already reporting an error
  }
  MappedResource(const MappedResource&) = delete;
  MappedResource& operator=(const MappedResource&) = delete;
  void unmap() {
    mapped_ = false;
    MV_CUDA_CHECK(cudaGraphicsUnmapResources(1, &resource_, stream_));
  }

 private:
  cudaGraphicsResource_t& resource_;
  cudaStream_t stream_;
  bool mapped_ = true;
};

}  // namespace

std::unique_ptr<CudaGlImage> CudaGlImage::try_register(unsigned texture, std::string& why) {
  constexpr unsigned kMaxDevices = 16;
  unsigned count = 0;
  int gl_devices[kMaxDevices] = {};
  cudaError_t err = cudaGLGetDevices(&count, gl_devices, kMaxDevices, cudaGLDeviceListAll);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the (non-sticky) error so later checked calls do not report it
    why = "the GL context does not run on a CUDA device (cudaGLGetDevices: " +
          (err != cudaSuccess ? describe(err) : std::string("no device")) + ")";
    return nullptr;
  }
  int render_device = 0;
  MV_CUDA_CHECK(cudaGetDevice(&render_device));
  const int* listed = gl_devices;
  const int* listed_end = listed + std::min(count, kMaxDevices);
  if (std::find(listed, listed_end, render_device) == listed_end)
    spdlog::warn("display: GL runs on CUDA device {}, rendering on device {}: interop copies cross devices",
                 gl_devices[0], render_device);
  cudaGraphicsResource_t resource = nullptr;
  err = cudaGraphicsGLRegisterImage(&resource, texture, GL_TEXTURE_2D, cudaGraphicsRegisterFlagsWriteDiscard);
  if (err != cudaSuccess) {
    cudaGetLastError();
    why = "cudaGraphicsGLRegisterImage failed (" + describe(err) + ")";
    return nullptr;
  }
  return std::unique_ptr<CudaGlImage>(new CudaGlImage(resource));
}

CudaGlImage::~CudaGlImage() {
  const cudaError_t err = cudaGraphicsUnregisterResource(resource_);
  if (err != cudaSuccess) spdlog::warn("display: cudaGraphicsUnregisterResource failed ({})", describe(err));
}

void CudaGlImage::copy_from(const uint32_t* d_rgba, int width, int height, cudaStream_t stream) {
  MappedResource mapped(resource_, stream);
  cudaArray_t array = nullptr;
  MV_CUDA_CHECK(cudaGraphicsSubResourceGetMappedArray(&array, resource_, 0, 0));
  const size_t row_bytes = static_cast<size_t>(width) * sizeof(uint32_t);
  MV_CUDA_CHECK(cudaMemcpy2DToArrayAsync(array, 0, 0, d_rgba, row_bytes, row_bytes, static_cast<size_t>(height),
                                         cudaMemcpyDeviceToDevice, stream));
  mapped.unmap();
}

}  // namespace mv::gui
