#include "render/gpu.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

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
      // Without a GPU the runtime usually answers "driver version is insufficient" (no libcuda at all),
      // which reads like advice to upgrade a driver that does not exist: say what it means here. The
      // NVIDIA kernel driver announces itself in /proc/driver/nvidia.
      std::error_code ec;
      const bool nvidia_driver = std::filesystem::exists("/proc/driver/nvidia/version", ec);
      if (err != cudaSuccess) g.cuda_error = cudaGetErrorString(err);
      if (err == cudaErrorInsufficientDriver && nvidia_driver)
        g.reason = "the NVIDIA driver is older than this CUDA runtime needs (" + g.cuda_error + ")";
      else if (err == cudaSuccess || err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        g.reason = "no CUDA GPU found";
      else
        g.reason = "no usable CUDA device (" + g.cuda_error + ")";
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
