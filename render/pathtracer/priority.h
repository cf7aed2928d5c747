// Priority functions of the patch task: how urgently a 4×4 patch wants more samples.
//
// A task computes its patch's new priority right after adding its samples (Kerbl 2012, §6.3). Larger is
// more urgent. Unsampled patches have kUnsampledPriority (they come first); finished patches have
// kFinishedPriority (they never run again). All but `adaptive` are sums or means over the patch's pixels of
// a per-pixel term computed from the pixel's film values before and after the task; `adaptive` is Cycles'
// stopping rule on top of the `none` order (see there).
#pragma once

#include <cfloat>

#include "base/work.h"
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
  /// Expected reduction of the patch's squared error from more samples: Σ over pixels of s²/n² (s² the
  /// unbiased sample variance summed over r, g, b; the error of a mean falls by s²·k/(n(n+k)) ≈ s²k/n²
  /// for k more samples). Ranking by it is the greedy form of the MSE-optimal (Neyman) allocation n ∝ s.
  /// Measured on room (64×48, CPU, 25 % of 64 spp, mean of 4 seeds): MSE 0.0066 against 0.0185 for
  /// `none` and 0.0080 for `convergence`; ranking by the relative standard error instead (RelativeError)
  /// gives n ∝ s², feeds patches that caught a firefly, and loses to `none` in linear MSE (0.043).
  /// Patches below variance_min_spp(target) rank first (see there).
  Variance = 3,
  /// Relative standard error of the pixel mean, sqrt(Σ_c s_c²/n) / (Σ_c mean_c + 0.01), averaged over
  /// the patch: the stopping criterion of production adaptive samplers (error relative to brightness, as
  /// the eye sees it after tone mapping). It lowers relative, not linear, error: compare with `variance`.
  RelativeError = 4,
  /// Adaptive sampling as Blender Cycles does it (a stopping rule, not an order): patches are sampled in
  /// the `none` order (least-sampled first, so the unconverged pixels are sampled uniformly) until they
  /// converge; a converged patch is finished (kFinishedPriority, PatchTaskView::finished) below the target.
  /// The rules, with their sources (the Cycles source code, named by function, and "Adaptive Sampling" in
  /// the Cycles manual):
  ///  - Error. Per pixel, e = Σ_c |I_c − A_c| / (10⁻⁴ + √(Σ_c I_c)) (adaptive_pixel_error), where I is the
  ///    mean of all samples and A the mean of the odd-indexed half of them (the film's half_sum; Cycles
  ///    writes every second sample ×2 into an auxiliary pass). This is the per-pixel error of Dammertz et
  ///    al. 2010, "A hierarchical automatic stopping condition for Monte Carlo global illumination", §2.1,
  ///    as Cycles' convergence check computes it (kernel_adaptive_sampling_convergence_check, later
  ///    film_adaptive_sampling_convergence_check; recent versions also scale I and A by the exposure and
  ///    divide by Σ_c I_c instead of its root where Σ_c I_c ≥ 1, which makes bright pixels stop sooner).
  ///  - Threshold. A pixel is converged when e < 5·t, t = PatchTaskParams::noise_threshold (the manual's
  ///    "Noise Threshold", default 0.01; Cycles' Integrator::get_adaptive_sampling scales the user's value
  ///    by 5 before the comparison).
  ///  - Min samples. No check before adaptive_min_spp(t, target) = max(4, ⌈16 / t^0.3⌉) samples per pixel
  ///    (the manual's automatic "Min Samples", same function: 64 for t = 0.01), capped at the target.
  ///  - Check interval. Convergence is checked every kAdaptiveCheckInterval = 16 samples, first after more
  ///    than min + 1 samples (Cycles' adaptive_step and AdaptiveSampling::need_filter; adaptive_check_due):
  ///    when an execution takes a patch's spp across a multiple of 16 (80, 96, … for min 64).
  ///  - Dilation. A pixel keeps sampling while any of its 8 neighbours is unconverged: Cycles filters the
  ///    converged flags with a 3-wide box in x, then in y (film_adaptive_sampling_filter_x/_y), which
  ///    together spread an unconverged pixel over its 3×3 neighbourhood. At patch granularity: at a check a
  ///    patch stops when its 16 pixels and the one-pixel ring around it (FilmView::ring_converged) are all
  ///    converged.
  /// Differences from Cycles, forced by independent patch tasks: a check is per patch, not one pass over the
  /// image. Every execution from min samples on records which of the patch's pixels are converged
  /// (FilmView::patch_state), and a check reads the ring from the neighbours' latest records (0 before they
  /// reach min samples), so a neighbour is seen as of its last execution, in the `none` order at most one
  /// execution behind. A stopped patch stays stopped (Cycles may reset a pixel when a neighbour turns
  /// unconverged later). When a patch stops thus depends on its neighbours' progress: with concurrent
  /// strategies it can vary from run to run; `sequential` and `sequential-priority` are deterministic.
  Adaptive = 5,
  /// The greedy Neyman allocation in the bound's units, trusted from the first batch: the expected drop of
  /// the film's summed squared error per sample of the next batch, V̂/n² with V̂ the patch's mean per-pixel
  /// one-sample variance (unbiased, summed over r, g, b) and n its spp; the same quantity whose square root
  /// render/pathtracer/allocation_bound.h allots samples in proportion to (a patch of m pixels and summed
  /// variance V gains V·k/(n(n+k)) ≈ V·k/n² for m·k samples, i.e. (V/m)/n² per sample). Unlike `variance`
  /// it ranks a patch as soon as it has kNeymanMinSpp samples per pixel (instead of variance_min_spp, 32 at
  /// 512 spp), so a scene whose error sits in a few patches (`caustic`) does not spend a uniform 32 spp
  /// first. A patch whose first samples all agree (a caustic missed so far) is kept from starving by a
  /// prior from its neighbours (caustics are spatially coherent; compare the dilation of Cycles' adaptive
  /// sampling): V̂ = (n·v + n₀·v_nb) / (n + n₀), v the patch's own estimate, v_nb the largest V̂ of its 8
  /// neighbour patches (neyman_neighbour_variance) and n₀ = kNeymanPriorSpp, a shrinkage (posterior-mean)
  /// estimate whose prior's weight decays as the patch's own samples grow.
  /// Measured on an H100 under the megakernel (docs/perf.md, the section on `neyman`): on `caustic` it
  /// reaches uniform's 128-spp MSE with about the samples of the Neyman bound (0.045–0.070× uniform's),
  /// against 0.30× for `variance`; on `room`, whose error is spread over the image, it needs 1.3–1.8×
  /// uniform's samples under the default `buckets` settings (its priorities span more octaves than the
  /// queue's band window, and the patches below it wait for the queue's ageing; `--age-period 4` brings it
  /// to 0.51–0.79× but costs caustic): use `variance` there.
  Neyman = 6,
};

inline constexpr int kNumPriorityFunctions = 7;

/// Samples per pixel from which PriorityFunction::Neyman ranks a patch by its variance (one batch of the
/// default 2 paths per pixel; the least that gives a sample variance). Below it a patch is urgent.
inline constexpr uint32_t kNeymanMinSpp = 2;
/// Weight n₀ of PriorityFunction::Neyman's neighbour prior, in samples per pixel: the prior counts as much
/// as n₀ of the patch's own samples (half of the estimate at n = n₀, a tenth at 9·n₀).
inline constexpr float kNeymanPriorSpp = 4.f;

/// Name used in the GUI, the CLI and sidecars ("none", "intensity", "convergence", "variance",
/// "relative-error", "adaptive", "neyman").
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
    case PriorityFunction::Variance:
    case PriorityFunction::RelativeError:
    case PriorityFunction::Neyman: {
      if (n < 2) return 0.f;  // no variance estimate yet; patch_priority ranks such patches first
      const float bessel = static_cast<float>(n) / static_cast<float>(n - 1);
      const Vec3 var = vmax(Vec3{0.f}, (sum_sq * inv_n - mean * mean) * bessel);
      const float var_sum = var.x + var.y + var.z;
      if (f == PriorityFunction::Neyman) return var_sum;
      if (f == PriorityFunction::Variance) return var_sum * inv_n * inv_n;
      return sqrtf(var_sum * inv_n) / (mean.x + mean.y + mean.z + 1e-2f);
    }
    case PriorityFunction::None:
    case PriorityFunction::Adaptive:  // a stopping rule, not a priority term (adaptive_pixel_error)
    default:
      return 0.f;
  }
}

/// Samples per pixel before the variance estimate is trusted (Variance, RelativeError): target / 16 clamped
/// to [4, 32] (32 at the experiments' 512 spp; a long progressive target does not delay the priorities). Below it a patch is ranked
/// above every adaptive priority, least-sampled first. Without this floor a pixel whose first samples
/// happen to agree (a rare caustic missed twice) has an estimated variance of 0 and is starved forever;
/// production samplers guard the same way ("adaptive min samples" in Cycles).
MV_HD MV_INLINE uint32_t variance_min_spp(uint32_t target) {
  const uint32_t m = target / 16u;
  return m < 4u ? 4u : (m > 32u ? 32u : m);
}

/// PriorityFunction::Neyman's variance estimate of a patch (same units as its arguments: mean per-pixel
/// one-sample variance, r+g+b): the shrinkage (n·own + n₀·prior) / (n + n₀), n ≥ 0 its spp, n₀ =
/// kNeymanPriorSpp; own and prior ≥ 0.
MV_HD MV_INLINE float neyman_variance(float own, uint32_t n, float prior) {
  const float nf = static_cast<float>(n);
  return (nf * own + kNeymanPriorSpp * prior) / (nf + kNeymanPriorSpp);
}

/// PriorityFunction::Neyman's ranked priority of a patch with variance estimate v (neyman_variance) at n ≥ 1
/// spp: v / n², the expected error drop per sample of its next batch (to first order in the batch size).
MV_HD MV_INLINE float neyman_rank(float v, uint32_t n) {
  const float nf = static_cast<float>(n);
  return v / (nf * nf);
}

/// A neighbour patch's contribution to PriorityFunction::Neyman's prior: its variance estimate V̂ =
/// priority · n² recovered from its ranked priority (neyman_rank) and spp n; 0 where the neighbour is not
/// ranked (below kNeymanMinSpp, at the target, or holding another function's priority: negative or ≥ 1e27).
MV_HD MV_INLINE float neyman_neighbour_variance(float priority, uint32_t n, uint32_t target) {
  if (n < kNeymanMinSpp || n >= target || !(priority >= 0.f) || priority >= 1e27f) return 0.f;
  const float nf = static_cast<float>(n);
  return priority * nf * nf;
}

/// Default noise threshold t of PriorityFunction::Adaptive (the Cycles manual's default "Noise Threshold").
inline constexpr float kDefaultNoiseThreshold = 0.01f;
/// Samples per pixel between two convergence checks of PriorityFunction::Adaptive (Cycles' adaptive_step).
inline constexpr uint32_t kAdaptiveCheckInterval = 16;
/// Cycles compares the pixel error with 5 × the user's noise threshold (Integrator::get_adaptive_sampling).
inline constexpr float kAdaptiveThresholdScale = 5.f;

/// Samples per pixel before PriorityFunction::Adaptive checks convergence: Cycles' automatic "Min Samples",
/// max(4, ⌈16 / t^0.3⌉) for noise threshold t in (0, 1] (0.1 → 32, 0.01 → 64, 0.001 → 128), capped at
/// `target` (≥ 1).
MV_HD MV_INLINE uint32_t adaptive_min_spp(float threshold, uint32_t target) {
  const uint32_t m = static_cast<uint32_t>(ceilf(16.f / powf(threshold, 0.3f)));
  const uint32_t min_spp = m > 4u ? m : 4u;
  return min_spp < target ? min_spp : target;
}

/// Cycles' per-pixel error of adaptive sampling (Dammertz et al. 2010, §2.1), dimensionless, ≥ 0:
/// Σ_c |I_c − A_c| / (10⁻⁴ + √(Σ_c I_c)), with I = sum / n the mean of all n samples and A the mean of the
/// odd-indexed ones, half_sum / (n rounded down to even) (half_sum = Σ 2·radiance over them). FLT_MAX for
/// n < 2 (no odd-indexed sample yet).
MV_HD MV_INLINE float adaptive_pixel_error(Vec3 sum, Vec3 half_sum, uint32_t n) {
  if (n < 2) return FLT_MAX;
  const Vec3 i = sum / static_cast<float>(n);
  const Vec3 a = half_sum / static_cast<float>(n & ~1u);
  const float diff = fabsf(i.x - a.x) + fabsf(i.y - a.y) + fabsf(i.z - a.z);
  return diff / (1e-4f + sqrtf(fmaxf(0.f, i.x + i.y + i.z)));
}

/// True if a pixel with this error counts as converged under noise threshold t (error < 5·t, as Cycles).
MV_HD MV_INLINE bool adaptive_pixel_converged(float error, float threshold) {
  return error < kAdaptiveThresholdScale * threshold;
}

/// True if a patch task that took a patch from n_old to n_new samples per pixel ends with a convergence
/// check: n_new crossed (or reached) a multiple of kAdaptiveCheckInterval and n_new > min_spp + 1 (Cycles'
/// AdaptiveSampling::need_filter: the 0-based index of the last sample exceeds the min samples).
MV_HD MV_INLINE bool adaptive_check_due(uint32_t n_old, uint32_t n_new, uint32_t min_spp) {
  return n_new > min_spp + 1 && n_new / kAdaptiveCheckInterval > n_old / kAdaptiveCheckInterval;
}

/// Patch priority from the summed per-pixel terms, the pixel count and the patch's new spp. (Adaptive: the
/// order of `none`; the patch task itself gives a converged patch kFinishedPriority.) `neighbour_variance`:
/// Neyman's prior, the largest neyman_neighbour_variance of the patch's 8 neighbours (ignored by the others).
MV_HD MV_INLINE float patch_priority(PriorityFunction f, float term_sum, int pixels, uint32_t spp, uint32_t target,
                                     float neighbour_variance = 0.f) {
  if (spp >= target) return kFinishedPriority;
  switch (f) {
    case PriorityFunction::None:
    case PriorityFunction::Adaptive:
      return -static_cast<float>(spp);
    case PriorityFunction::Variance:
      return spp < variance_min_spp(target) ? 1e30f / static_cast<float>(1 + spp) : term_sum;
    case PriorityFunction::RelativeError:
      return spp < variance_min_spp(target) ? 1e30f / static_cast<float>(1 + spp) : term_sum / static_cast<float>(pixels);
    case PriorityFunction::Neyman:
      if (spp < kNeymanMinSpp) return 1e30f / static_cast<float>(1 + spp);
      return neyman_rank(neyman_variance(term_sum / static_cast<float>(pixels), spp, neighbour_variance), spp);
    default:
      return term_sum;
  }
}

}  // namespace mv
