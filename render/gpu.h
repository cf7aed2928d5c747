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
  /// Why no device is used, for people: "no CUDA GPU found" (no NVIDIA kernel driver loaded, or no
  /// device), "the NVIDIA driver is older than this CUDA runtime needs", "MEGAVIEW_FORCE_CPU is set", …
  std::string reason;
  /// The CUDA runtime's own error text when the probe failed (e.g. "CUDA driver version is insufficient
  /// for CUDA runtime version"), for the log; empty otherwise.
  std::string cuda_error;
};

/// Probes once (cached). MEGAVIEW_FORCE_CPU=1 in the environment disables the GPU path.
const GpuInfo& gpu_info();
inline bool gpu_available() { return gpu_info().available; }

}  // namespace mv
