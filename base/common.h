// Common definitions shared by CPU and GPU code and by every folder (render/, sched/, app/).
//
// Every per-pixel, per-sample and per-task function of megaview is written once and marked MV_HD, so the
// CPU strategies, the tests and the CUDA kernels run the same code (docs/architecture.md, "One source of truth").
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MV_HD __host__ __device__
#define MV_INLINE __forceinline__
#else
#define MV_HD
#define MV_INLINE inline
#endif

namespace mv {

/// Where data lives or code runs.
enum class Side { Host, Device };

/// Side length of a patch task in pixels (Kerbl 2012, §6.3: pixels are grouped as 4x4 patches).
inline constexpr int kPatchSize = 4;
/// Pixels in a full patch.
inline constexpr int kPatchPixels = kPatchSize * kPatchSize;

}  // namespace mv
