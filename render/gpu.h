// Which CUDA device megaview uses, if any.
#pragma once

#include <string>

namespace mv {

struct GpuInfo {
  bool available = false;  ///< a CUDA device is present and usable
  std::string name;        ///< e.g. "NVIDIA H100 80GB HBM3"; empty without a device
  int sm_count = 0;
  int compute_major = 0, compute_minor = 0;
  int clock_khz = 0;       ///< peak SM clock (cudaDevAttrClockRate), kHz: converts clock64 cycles to time
  std::string reason;      ///< why no device is used (no driver, no device, MEGAVIEW_FORCE_CPU=1)
};

/// Probes once (cached). MEGAVIEW_FORCE_CPU=1 in the environment disables the GPU path.
const GpuInfo& gpu_info();
inline bool gpu_available() { return gpu_info().available; }

}  // namespace mv
