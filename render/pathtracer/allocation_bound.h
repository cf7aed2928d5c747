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

#include <cstdint>

#include "render/film.h"

namespace mv {

struct AllocationBound {
  double patch_ratio = 1.0;    ///< r_patch: fewest samples (relative to uniform) for uniform's MSE, patch units
  double pixel_ratio = 1.0;    ///< r_pixel: the same with one sample count per pixel
  double mean_variance = 0.0;  ///< mean over pixels of σ²_i (one sample, r+g+b)
  uint32_t pixels_used = 0;    ///< pixels with at least 2 samples (the others are left out)
};

/// Estimates σ²_i from the film's sums and squared sums (unbiased sample variance, needs ≥ 2 samples per
/// pixel) and evaluates the bound. `host_film` must be a host view. A film whose variance is zero
/// everywhere gives ratios of 1.
AllocationBound allocation_bound(const FilmView& host_film);

}  // namespace mv
