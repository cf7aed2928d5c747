// The deep-halo stencil's update rule: one Jacobi iteration of the Laplace equation on a 2D float32 grid
// with the five-point difference star (Valen 2023, §2.5 Eq. 2.1 and Fig 2.3; §3.2.1 Listing 2 applies a
// five-point stencil the same way).
//
// Update (per site, float32):   u'(x, y) = ((u(x, y-1) + u(x, y+1)) + (u(x-1, y) + u(x+1, y))) * 0.25
// i.e. the point where the discrete Laplacian of Eq. 2.1 vanishes; the sum order is fixed (north + south,
// west + east, then their sum, then one multiply by 0.25, which is exact), so the CPU reference, the GPU
// kernels and every partitioning give the same bits. Nothing here can be contracted into an FMA.
//
// Boundary conditions: as in the document (Valen 2023, §3.1.3), the domain is periodic in both the
// north-south and east-west directions — there is no boundary, site (N, y) is site (0, y). Jacobi on a
// periodic domain conserves the mean and relaxes the field towards it: heat flows from the hot spots
// into the cold background.
//
// Initial field (the document initialises every value to one, §3.1.5 Listing 1, which would show
// nothing): a cold background (0) with four smooth hot spots (peak 1) at fixed fractions of the domain,
// each (1 - r²/R²)² inside radius R = N/8 (its own radius per spot, see stencil_initial). The value is
// computed from integers with one rounded division and one rounded multiply, so host and device agree
// bitwise and a partition can fill its own tile from global coordinates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/common.h"

namespace mv {

/// The five-point Jacobi/Laplace rule: `c` (the site's own value) is not read by Jacobi but is passed so
/// that any five-point rule fits the halo engine's interface (sched/lattice/halo_plan.h).
struct JacobiRule {
  MV_HD MV_INLINE float operator()(float c, float n, float s, float w, float e) const {
    (void)c;
    return ((n + s) + (w + e)) * 0.25f;
  }
  /// Bytes read and written per site update at the DRAM (one float read, one float written: the
  /// neighbours come from cache) — what the bench's GB/s counts.
  static constexpr double kBytesPerUpdate = 8.0;
};

/// The initial value of global site (x, y) of an n × n periodic grid, in [0, 1] (see the file comment).
MV_HD MV_INLINE float stencil_initial(int64_t x, int64_t y, int64_t n) {
  // Spot centres at fractions (num/16) of n and radii n*rad/32.
  const int cx[4] = {4, 11, 8, 13}, cy[4] = {5, 4, 11, 12}, rad[4] = {4, 3, 3, 2};
  float best = 0.0f;
  for (int k = 0; k < 4; ++k) {
    int64_t dx = x - n * cx[k] / 16, dy = y - n * cy[k] / 16;
    // Minimum image: the domain is periodic.
    if (dx > n / 2) dx -= n;
    if (dx < -n / 2) dx += n;
    if (dy > n / 2) dy -= n;
    if (dy < -n / 2) dy += n;
    const int64_t r = n * rad[k] / 32 > 0 ? n * rad[k] / 32 : 1;
    const int64_t r2 = dx * dx + dy * dy;
    if (r2 >= r * r) continue;
    const float t = static_cast<float>(r * r - r2) / static_cast<float>(r * r);
    const float v = t * t;
    best = v > best ? v : best;
  }
  return best;
}

/// stencil_initial of an n × n grid as a functor of (x, y), host and device (HaloGpu::fill).
struct StencilInitial {
  int64_t n;
  MV_HD float operator()(int64_t x, int64_t y) const { return stencil_initial(x, y, n); }
};

/// The whole initial n × n field, row-major (host).
inline std::vector<float> stencil_initial_field(int n) {
  std::vector<float> f(static_cast<size_t>(n) * n);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) f[static_cast<size_t>(y) * n + x] = stencil_initial(x, y, n);
  return f;
}

}  // namespace mv
