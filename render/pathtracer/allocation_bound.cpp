#include "render/pathtracer/allocation_bound.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace mv {

namespace {

/// Unbiased one-sample variance of pixel i, summed over r, g, b (needs ≥ 2 samples).
double pixel_variance(const FilmView& f, size_t i) {
  const uint32_t n = f.spp[i];
  const Rgba32f s = f.sum[i], q = f.sum_sq[i];
  double v = 0.0;
  for (const auto& [sc, qc] : {std::pair{s.r, q.r}, std::pair{s.g, q.g}, std::pair{s.b, q.b}}) {
    const double mean = static_cast<double>(sc) / n;
    v += std::max(0.0, (static_cast<double>(qc) - n * mean * mean) / (n - 1));
  }
  return v;
}

}  // namespace

std::vector<PatchVariance> patch_variances(const FilmView& f) {
  const PatchGrid& g = f.grid;
  std::vector<PatchVariance> out(g.num_patches());
  for (uint32_t p = 0; p < g.num_patches(); ++p) {
    for (int k = 0; k < kPatchPixels; ++k) {
      int x = 0, y = 0;
      if (!g.pixel(p, k, x, y)) continue;
      const size_t i = static_cast<size_t>(y) * g.width + x;
      if (f.spp[i] < 2) continue;
      out[p].v += pixel_variance(f, i);
      ++out[p].pixels;
    }
  }
  return out;
}

AllocationBound allocation_bound(const FilmView& f) {
  const PatchGrid& g = f.grid;
  const size_t n_pix = static_cast<size_t>(g.width) * g.height;
  std::vector<double> var(n_pix, 0.0);
  AllocationBound b;
  double sum_var = 0.0, sum_sigma = 0.0;
  for (size_t i = 0; i < n_pix; ++i) {
    if (f.spp[i] < 2) continue;
    const double v = pixel_variance(f, i);
    var[i] = v;
    sum_var += v;
    sum_sigma += std::sqrt(v);
    ++b.pixels_used;
  }
  if (b.pixels_used == 0 || sum_var <= 0.0) return b;
  const double n_used = static_cast<double>(b.pixels_used);
  b.mean_variance = sum_var / n_used;
  b.pixel_ratio = sum_sigma * sum_sigma / (n_used * sum_var);
  double sum_patch = 0.0;
  for (uint32_t p = 0; p < g.num_patches(); ++p) {
    double v_p = 0.0;
    int m_p = 0;
    for (int k = 0; k < kPatchPixels; ++k) {
      int x = 0, y = 0;
      if (!g.pixel(p, k, x, y)) continue;
      const size_t i = static_cast<size_t>(y) * g.width + x;
      if (f.spp[i] < 2) continue;
      v_p += var[i];
      ++m_p;
    }
    sum_patch += std::sqrt(v_p * m_p);
  }
  b.patch_ratio = sum_patch * sum_patch / (n_used * sum_var);
  return b;
}

}  // namespace mv
