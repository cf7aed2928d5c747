#include "render/gpu.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

namespace mv {

const GpuInfo& gpu_info() {
  static const GpuInfo info = [] {
    GpuInfo g;
    if (const char* f = std::getenv("MEGAVIEW_FORCE_CPU"); f && std::strcmp(f, "0") != 0 && *f) {
      g.reason = "MEGAVIEW_FORCE_CPU is set";
      return g;
    }
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      g.reason = err != cudaSuccess ? std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")"
                                    : std::string("no CUDA device");
      cudaGetLastError();  // clear the sticky-free error state
      return g;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaSetDevice(0) != cudaSuccess) {
      g.reason = "CUDA device 0 cannot be used";
      cudaGetLastError();
      return g;
    }
    g.available = true;
    g.name = prop.name;
    g.sm_count = prop.multiProcessorCount;
    g.compute_major = prop.major;
    g.compute_minor = prop.minor;
    if (cudaDeviceGetAttribute(&g.clock_khz, cudaDevAttrClockRate, 0) != cudaSuccess) {
      g.clock_khz = 0;  // unknown: cycle counts are then shown as cycles
      cudaGetLastError();
    }
    return g;
  }();
  return info;
}

}  // namespace mv
