// render/pathtracer/allocation_bound.h: the Neyman bound on hand-made films with known variances.
#include <gtest/gtest.h>

#include <vector>

#include "render/pathtracer/allocation_bound.h"

namespace mv {
namespace {

/// A host film of w × h pixels where pixel i has n samples, all of value ±a_i around 1 (variance a_i²·n/(n−1)
/// in each channel).
struct HandFilm {
  std::vector<Rgba32f> sum, sum_sq;
  std::vector<uint32_t> spp, patch_spp;
  FilmView view;
  HandFilm(int w, int h, const std::vector<float>& a, uint32_t n) {
    const size_t px = static_cast<size_t>(w) * h;
    sum.resize(px), sum_sq.resize(px), spp.assign(px, n);
    view.grid = PatchGrid(w, h);
    patch_spp.assign(view.grid.num_patches(), n);
    for (size_t i = 0; i < px; ++i) {
      // n/2 samples at 1 + a, n/2 at 1 − a: mean 1, sum of squares n(1 + a²).
      const float s = static_cast<float>(n), q = static_cast<float>(n) * (1.f + a[i] * a[i]);
      sum[i] = Rgba32f{s, s, s, 0.f};
      sum_sq[i] = Rgba32f{q, q, q, 0.f};
    }
    view.sum = sum.data(), view.sum_sq = sum_sq.data(), view.spp = spp.data(), view.patch_spp = patch_spp.data();
  }
};

TEST(AllocationBound, UniformVarianceNeedsUniformSampling) {
  HandFilm f(8, 8, std::vector<float>(64, 0.3f), 64);
  const AllocationBound b = allocation_bound(f.view);
  EXPECT_NEAR(b.patch_ratio, 1.0, 1e-9);
  EXPECT_NEAR(b.pixel_ratio, 1.0, 1e-9);
  EXPECT_EQ(b.pixels_used, 64u);
  EXPECT_NEAR(b.mean_variance, 3 * 0.09 * 64.0 / 63.0, 1e-5);
}

// Two patches, one noiseless: all samples go to the noisy one, which then needs half of uniform's
// budget for the same error: (sqrt(V·16))² / (32 V) = 1/2.
TEST(AllocationBound, HalfTheImageNoiselessNeedsHalfTheSamples) {
  std::vector<float> a(8 * 4, 0.f);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) a[y * 8 + x] = 0.5f;  // the left 4×4 patch
  HandFilm f(8, 4, a, 16);
  const AllocationBound b = allocation_bound(f.view);
  EXPECT_NEAR(b.patch_ratio, 0.5, 1e-6);
  EXPECT_NEAR(b.pixel_ratio, 0.5, 1e-6);
}

// Per-pixel allocation can only do better than per-patch: a patch mixing a noisy and a quiet pixel.
TEST(AllocationBound, PixelAllocationIsAtLeastAsGoodAsPatchAllocation) {
  std::vector<float> a(16, 0.01f);
  a[5] = 1.f;
  HandFilm f(4, 4, a, 8);
  const AllocationBound b = allocation_bound(f.view);
  EXPECT_NEAR(b.patch_ratio, 1.0, 1e-6);  // one patch: nothing to allocate between
  EXPECT_LT(b.pixel_ratio, 0.2);
}

TEST(AllocationBound, PixelsWithFewerThanTwoSamplesAreLeftOut) {
  HandFilm f(4, 4, std::vector<float>(16, 0.2f), 1);
  const AllocationBound b = allocation_bound(f.view);
  EXPECT_EQ(b.pixels_used, 0u);
  EXPECT_EQ(b.patch_ratio, 1.0);
}

// patch_variances gives the bound's own per-patch sums: with every sample costing the same per pixel
// (c_p ∝ m_p), both cost-aware ratios are allocation_bound's r_patch.
TEST(CostBound, EqualCostPerPixelGivesThePatchBound) {
  std::vector<float> a(12 * 8);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.05f + 0.1f * static_cast<float>(i % 7) + (i % 12 < 4 ? 1.f : 0.f);
  HandFilm f(12, 6, a, 16);  // 3 × 2 patches (the last row of patches partial: 6 = 4 + 2)
  const std::vector<PatchVariance> pv = patch_variances(f.view);
  ASSERT_EQ(pv.size(), 6u);
  EXPECT_EQ(pv[0].pixels, 16);
  EXPECT_EQ(pv[3].pixels, 8);
  CostBound cb;
  for (const PatchVariance& p : pv) cb.add(p.v, p.pixels, 3.0 * p.pixels);
  const double r = allocation_bound(f.view).patch_ratio;
  EXPECT_LT(r, 0.99);
  EXPECT_NEAR(cb.blind_samples(), r, 1e-6);
  EXPECT_NEAR(cb.blind_time(), r, 1e-6);
  EXPECT_NEAR(cb.weighted_time(), r, 1e-6);
  EXPECT_NEAR(cb.weighted_samples(), r, 1e-6);
}

// Two full patches, V = (4, 1), the second's samples 4× as dear (c = 16, 64). By hand, uniform at 1 spp:
// error 5 in time 80. Cost-blind n ∝ sqrt(V/m) = (0.5, 0.25)·λ, error 12/λ = 5 → n = (1.2, 0.6): time 57.6
// (0.72), samples 28.8 of 32 (0.9). Cost-weighted n ∝ sqrt(V/c) = (0.5, 0.125)·λ, error 16/λ = 5 →
// n = (1.6, 0.4): time 51.2 (0.64), samples 32 (1.0).
TEST(CostBound, HandComputedTwoPatches) {
  CostBound cb;
  cb.add(4.0, 16.0, 16.0);
  cb.add(1.0, 16.0, 64.0);
  cb.add(7.0, 0.0, 5.0);  // no pixels: ignored
  EXPECT_NEAR(cb.blind_samples(), 0.9, 1e-12);
  EXPECT_NEAR(cb.blind_time(), 0.72, 1e-12);
  EXPECT_NEAR(cb.weighted_time(), 0.64, 1e-12);
  EXPECT_NEAR(cb.weighted_samples(), 1.0, 1e-12);
  EXPECT_EQ(CostBound{}.weighted_time(), 1.0);  // nothing added
}

}  // namespace
}  // namespace mv
