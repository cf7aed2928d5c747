// The best any sample allocation could do on a scene: a lower bound on the samples a priority scheduler
// needs to reach the MSE of uniform sampling (the time-to-MSE goal of Kerbl 2012 §6.3, Fig 9).
//
// With per-pixel variance σ²_i of one sample (summed over r, g, b), pixel i's squared error after n_i
// samples is σ²_i / n_i in expectation. A task unit of m_p pixels (a 4×4 patch, partial at the borders)
// gets one sample count n_p for all its pixels; with V_p = Σ_{i∈p} σ²_i the film's summed error is
// Σ_p V_p / n_p for a budget B = Σ_p m_p n_p. Lagrange (Neyman allocation) gives n_p ∝ sqrt(V_p / m_p)
// and the optimal error (Σ_p sqrt(V_p m_p))² / B, against Σ_p V_p · N / B for uniform sampling (N pixels).
// So, to reach uniform's MSE, any allocation needs at least
//     r_patch = (Σ_p sqrt(V_p m_p))² / (N Σ_p V_p)          (0 < r ≤ 1)
// times uniform's samples, and per-pixel allocation r_pixel = (Σ_i σ_i)² / (N Σ_i σ²_i) ≤ r_patch. The
// bound ignores the per-patch cap at the target spp and the cost of estimating V_p, which only raise it.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/common.h"
#include "render/film.h"

namespace mv {

struct AllocationBound {
  double patch_ratio = 1.0;    ///< r_patch: fewest samples (relative to uniform) for uniform's MSE, patch units
  double pixel_ratio = 1.0;    ///< r_pixel: the same with one sample count per pixel
  double mean_variance = 0.0;  ///< mean over pixels of σ²_i (one sample, r+g+b)
  uint32_t pixels_used = 0;    ///< pixels with at least 2 samples (the others are left out)
};

/// One patch's share of the bound: V_p, the summed one-sample variance (r+g+b) of its pixels that have at
/// least 2 samples, and m_p, the number of those pixels (0: the patch is left out).
struct PatchVariance {
  double v = 0.0;
  int pixels = 0;
};

/// V_p and m_p of every patch of the film (FilmView::grid order), from the same per-pixel estimates as
/// allocation_bound. `host_film` must be a host view.
std::vector<PatchVariance> patch_variances(const FilmView& host_film);

/// The bound when a sample's cost depends on the patch (paths through glass are longer than paths that
/// end on a dark wall). With c_p the time one sample per pixel of patch p costs (all its m_p pixels, > 0),
/// uniform sampling at N spp takes T_u = N Σ_p c_p for the error Σ_p V_p / N. At the same error:
///  - the allocation of allocation_bound (n_p ∝ sqrt(V_p / m_p), cost-blind) takes
///        blind_time = Σ_p sqrt(V_p m_p) · Σ_p sqrt(V_p / m_p) c_p / (Σ_p V_p · Σ_p c_p)   × T_u
///    (= r_patch when c_p ∝ m_p, i.e. when every sample costs the same);
///  - the cost-weighted Neyman allocation n_p ∝ sqrt(V_p / c_p), the fastest of all, takes
///        weighted_time = (Σ_p sqrt(V_p c_p))² / (Σ_p V_p · Σ_p c_p)   × T_u,
///    with weighted_samples = Σ_p sqrt(V_p c_p) · Σ_p m_p sqrt(V_p / c_p) / (Σ_p V_p · Σ_p m_p) × uniform's.
/// Same assumptions as allocation_bound (no cap at the target, V_p known). Accumulate patch by patch with
/// add(), then read the ratios (all 1 when Σ V_p = 0).
struct CostBound {
  double sum_v = 0, sum_m = 0, sum_c = 0;
  double sum_sqrt_vm = 0, sum_sqrt_v_m_c = 0, sum_sqrt_vc = 0, sum_m_sqrt_v_c = 0;

  /// Adds patch p: V_p ≥ 0, m_p ≥ 0 pixels (0: ignored), cost c_p > 0 per sample per pixel of the patch.
  MV_HD void add(double v, double m, double c) {
    if (m <= 0.0 || !(c > 0.0)) return;
    sum_v += v;
    sum_m += m;
    sum_c += c;
    sum_sqrt_vm += sqrt(v * m);
    sum_sqrt_v_m_c += sqrt(v / m) * c;
    sum_sqrt_vc += sqrt(v * c);
    sum_m_sqrt_v_c += m * sqrt(v / c);
  }
  /// Samples of the cost-blind allocation relative to uniform's: allocation_bound's r_patch.
  MV_HD double blind_samples() const { return sum_v > 0 ? sum_sqrt_vm * sum_sqrt_vm / (sum_v * sum_m) : 1.0; }
  MV_HD double blind_time() const { return sum_v > 0 ? sum_sqrt_vm * sum_sqrt_v_m_c / (sum_v * sum_c) : 1.0; }
  MV_HD double weighted_time() const { return sum_v > 0 ? sum_sqrt_vc * sum_sqrt_vc / (sum_v * sum_c) : 1.0; }
  MV_HD double weighted_samples() const { return sum_v > 0 ? sum_sqrt_vc * sum_m_sqrt_v_c / (sum_v * sum_m) : 1.0; }
};

/// Estimates σ²_i from the film's sums and squared sums (unbiased sample variance, needs ≥ 2 samples per
/// pixel) and evaluates the bound. `host_film` must be a host view. A film whose variance is zero
/// everywhere gives ratios of 1.
AllocationBound allocation_bound(const FilmView& host_film);

}  // namespace mv
