// Priority functions of the patch task: how urgently a 4×4 patch wants more samples.
//
// A task computes its patch's new priority right after adding its samples (Kerbl 2012, §6.3). Larger is
// more urgent. Unsampled patches have kUnsampledPriority (they come first); finished patches have
// kFinishedPriority (they never run again). All are sums or means over the patch's pixels of a per-pixel
// term computed from the pixel's film values before and after the task.
#pragma once

#include <cfloat>

#include "render/math.h"

namespace mv {

enum class PriorityFunction : uint32_t {
  /// No preference: -(samples per pixel done), so the least-sampled patch comes first (uniform order).
  None = 0,
  /// Kerbl's first case: Σ over pixels of the colour (r+g+b) — here of the pixel mean, so a patch's
  /// priority does not grow with its sample count; bright patches (lights, white walls) come first.
  Intensity = 1,
  /// Kerbl's second case: Σ over pixels of |colour − colour_old| (summed over r, g, b) on the normalised
  /// output (pixel means before and after the task): patches whose image still changes come first.
  Convergence = 2,
  /// Estimated relative standard error of the pixel mean, sqrt(Σ_c s_c²/n) / (Σ_c mean_c + 1e-2),
  /// from the second moments (s_c² the unbiased sample variance of channel c), averaged over the
  /// patch's pixels: the criterion of production adaptive samplers.
  Variance = 3,
};

inline constexpr int kNumPriorityFunctions = 4;
inline constexpr float kFinishedPriority = -FLT_MAX;
inline constexpr float kUnsampledPriority = FLT_MAX;

/// Name used in the GUI, the CLI and sidecars ("none", "intensity", "convergence", "variance").
const char* priority_name(PriorityFunction f);
/// Parses a name; throws InputError listing the allowed names.
PriorityFunction parse_priority(const char* name);

/// Per-pixel term. `old_sum`/`old_n`: the pixel before the task; `sum`, `sum_sq`, `n`: after (n > old_n).
MV_HD MV_INLINE float pixel_priority_term(PriorityFunction f, Vec3 old_sum, uint32_t old_n, Vec3 sum, Vec3 sum_sq,
                                          uint32_t n) {
  const float inv_n = 1.f / static_cast<float>(n);
  const Vec3 mean = sum * inv_n;
  switch (f) {
    case PriorityFunction::Intensity:
      return mean.x + mean.y + mean.z;
    case PriorityFunction::Convergence: {
      const Vec3 old_mean = old_n > 0 ? old_sum / static_cast<float>(old_n) : Vec3{0.f};
      return fabsf(mean.x - old_mean.x) + fabsf(mean.y - old_mean.y) + fabsf(mean.z - old_mean.z);
    }
    case PriorityFunction::Variance: {
      if (n < 2) return FLT_MAX / 65536.f;  // no variance estimate yet: as urgent as can be, still summable
      const float bessel = static_cast<float>(n) / static_cast<float>(n - 1);
      const Vec3 var = vmax(Vec3{0.f}, (sum_sq * inv_n - mean * mean) * bessel);
      const float se = sqrtf((var.x + var.y + var.z) * inv_n);
      return se / (mean.x + mean.y + mean.z + 1e-2f);
    }
    case PriorityFunction::None:
    default:
      return 0.f;
  }
}

/// Patch priority from the summed per-pixel terms, the pixel count and the patch's new spp.
MV_HD MV_INLINE float patch_priority(PriorityFunction f, float term_sum, int pixels, uint32_t spp, uint32_t target) {
  if (spp >= target) return kFinishedPriority;
  switch (f) {
    case PriorityFunction::None:
      return -static_cast<float>(spp);
    case PriorityFunction::Variance:
      return term_sum / static_cast<float>(pixels);
    default:
      return term_sum;
  }
}

}  // namespace mv
