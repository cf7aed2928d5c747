// Continuous fields (render/field/): reconstruction kernels (kernel.h), probing value, gradient and
// Hessian in index and world space (field.h), Diderot's `inside`, principal curvatures (curvature.h) and
// the analytic volumes they are checked on (analytic.h). CPU only: the GPU runs
// the same MV_HD code (tests/test_field_gpu.cu compares the two).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/errors.h"
#include "render/field/analytic.h"
#include "render/field/curvature.h"
#include "render/field/field.h"
#include "render/field/kernel.h"
#include "render/field/volume.h"

namespace mv {
namespace {

constexpr int kTaps = 2 * kMaxKernelRadius;

std::string name(KernelKind k) { return kernel_name(k); }

/// Tap weights of derivative order d at fraction f.
std::vector<float> taps(KernelKind k, int d, float f) {
  std::vector<float> w(kTaps, 0.f);
  kernel_weights(k, d, f, w.data());
  w.resize(2 * kernel_radius(k));
  return w;
}

/// Fractions f ∈ [0, 1) to test at: a regular grid, both ends and points next to them.
std::vector<float> fractions() {
  std::vector<float> f;
  for (int i = 0; i < 1000; ++i) f.push_back(i / 1000.f);
  for (float x : {1e-6f, 0.25f, 0.5f, 0.75f, 0.999f, 0.99999f}) f.push_back(x);
  return f;
}

float max_abs_diff(Vec3 a, Vec3 b) { return fmaxf(fabsf(a.x - b.x), fmaxf(fabsf(a.y - b.y), fabsf(a.z - b.z))); }
float max_abs(Vec3 a) { return fmaxf(fabsf(a.x), fmaxf(fabsf(a.y), fabsf(a.z))); }
float max_abs_diff(const Sym3& a, const Sym3& b) {
  float m = 0.f;
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) m = fmaxf(m, fabsf(a(r, c) - b(r, c)));
  return m;
}
float max_abs(const Sym3& a) { return max_abs_diff(a, Sym3{}); }

/// Largest |sample|: float rounding in a probe scales with it (derivative weights cancel, so the error of
/// a derivative is ≈ Σ|w| · max|sample| · 2⁻²⁴, not relative to the derivative).
float max_sample(const Volume& v) {
  float m = 0.f;
  for (float x : v.data) m = fmaxf(m, fabsf(x));
  return m;
}

std::string str(Vec3 v) {
  return "(" + std::to_string(v.x) + ", " + std::to_string(v.y) + ", " + std::to_string(v.z) + ")";
}

// ---------------------------------------------------------------------------------------------------
// Kernels

TEST(Kernel, WeightsArePartitionOfUnityAndDerivativeWeightsSumToZero) {
  for (KernelKind k : all_kernels()) {
    for (float f : fractions()) {
      for (int d = 0; d <= 2; ++d) {
        double sum = 0.0;
        for (float w : taps(k, d, f)) sum += w;
        EXPECT_NEAR(sum, d == 0 ? 1.0 : 0.0, 2e-6) << name(k) << " order " << d << " f=" << f;
      }
    }
  }
}

TEST(Kernel, DerivativeWeightsMatchCentralFiniteDifferences) {
  // Each tap weight is a polynomial in f, so the central difference is valid at both ends of [0, 1) too.
  // Float weights and h = 1e-3: rounding ≈ 1e-7/h = 1e-4, truncation h²·|w'''|/6 < 1e-6.
  const float h = 1e-3f;
  for (KernelKind k : all_kernels()) {
    for (float f : fractions()) {
      for (int d = 1; d <= 2; ++d) {
        const std::vector<float> lo = taps(k, d - 1, f - h), hi = taps(k, d - 1, f + h), w = taps(k, d, f);
        for (size_t t = 0; t < w.size(); ++t)
          EXPECT_NEAR(w[t], (hi[t] - lo[t]) / (2.f * h), 3e-4f) << name(k) << " order " << d << " tap " << t << " f=" << f;
      }
    }
  }
}

TEST(Kernel, TapPolynomialsMatchThePiecewiseKernel) {
  // Tap t of a kernel of radius R at fraction f is h(f − j) with j = t − R + 1 (kernel.h).
  for (KernelKind k : all_kernels()) {
    const int R = kernel_radius(k);
    for (float f : fractions()) {
      for (int d = 0; d <= 2; ++d) {
        const std::vector<float> w = taps(k, d, f);
        for (int t = 0; t < 2 * R; ++t) {
          const int j = t - R + 1;
          EXPECT_NEAR(w[t], kernel_eval(k, f - j, d), 2e-6f) << name(k) << " order " << d << " tap " << t << " f=" << f;
        }
      }
    }
  }
}

TEST(Kernel, PiecewiseKernelShapeSupportAndDerivatives) {
  for (KernelKind k : all_kernels()) {
    const float R = static_cast<float>(kernel_radius(k));
    // Support: zero from R on, on both sides.
    for (float x : {R, R + 0.01f, R + 1.f, 10.f})
      for (int d = 0; d <= 2; ++d) {
        EXPECT_EQ(kernel_eval(k, x, d), 0.f) << name(k) << " x=" << x;
        EXPECT_EQ(kernel_eval(k, -x - 0.01f, d), 0.f) << name(k) << " x=" << -x;
      }
    // Even kernel: h and h'' even, h' odd (away from knots, where the one-sided choice differs).
    // h = 1e-2: the cubic pieces cancel to ~1e-6 near |x| = 2, so rounding/h ≈ 1e-4; truncation
    // h²·|h'''|/6 ≤ 1.5e-4 (ctmr's |h'''| ≤ 9).
    const float h = 1e-2f;
    for (int i = 0; i * 0.0137f <= 2 * R + 1; ++i) {
      const float x = -R - 0.5f + i * 0.0137f;
      if (fabsf(x - std::round(x)) < 3 * h) continue;  // knots: h' (tent) or h'' (ctmr, tent) jump there
      EXPECT_NEAR(kernel_eval(k, -x, 0), kernel_eval(k, x, 0), 1e-6f) << name(k) << " x=" << x;
      EXPECT_NEAR(kernel_eval(k, -x, 1), -kernel_eval(k, x, 1), 1e-6f) << name(k) << " x=" << x;
      EXPECT_NEAR(kernel_eval(k, -x, 2), kernel_eval(k, x, 2), 1e-5f) << name(k) << " x=" << x;
      for (int d = 1; d <= 2; ++d) {
        const float xp = x + h, xm = x - h;
        const float fd = (kernel_eval(k, xp, d - 1) - kernel_eval(k, xm, d - 1)) / (xp - xm);
        EXPECT_NEAR(kernel_eval(k, x, d), fd, 3e-4f) << name(k) << " order " << d << " x=" << x;
      }
    }
  }
  // Values at the knots: tent and ctmr interpolate (1 at 0, 0 at other integers); bspln3 does not.
  for (KernelKind k : {KernelKind::Tent, KernelKind::Ctmr}) {
    EXPECT_FLOAT_EQ(kernel_eval(k, 0.f, 0), 1.f) << name(k);
    for (float x : {-2.f, -1.f, 1.f, 2.f}) EXPECT_FLOAT_EQ(kernel_eval(k, x, 0), 0.f) << name(k) << " x=" << x;
  }
  EXPECT_FLOAT_EQ(kernel_eval(KernelKind::Bspln3, 0.f, 0), 2.f / 3.f);
  EXPECT_FLOAT_EQ(kernel_eval(KernelKind::Bspln3, 1.f, 0), 1.f / 6.f);
  EXPECT_FLOAT_EQ(kernel_eval(KernelKind::Bspln3, -1.f, 0), 1.f / 6.f);
  // Continuity class: bspln3 has a continuous h'' at the knots, ctmr does not (jump 9·1−5 = 4 vs −3+5 = 2).
  EXPECT_NEAR(kernel_eval(KernelKind::Bspln3, 1.f - 1e-4f, 2), kernel_eval(KernelKind::Bspln3, 1.f + 1e-4f, 2), 1e-3f);
  EXPECT_GT(fabsf(kernel_eval(KernelKind::Ctmr, 1.f - 1e-4f, 2) - kernel_eval(KernelKind::Ctmr, 1.f + 1e-4f, 2)), 1.f);
}

TEST(Kernel, ReproducesPolynomialsOfItsOrder) {
  // 1-D: Σ_t w_t^(d)(f) · p(n + j_t) against p^(d)(n + f) for p = 1, x, x².
  const int n = 7;
  for (KernelKind k : all_kernels()) {
    const int R = kernel_radius(k);
    for (float f : fractions()) {
      const double x = n + f;
      double m[3][3] = {};  // m[d][e] = Σ w^(d) · (n + j)^e
      for (int d = 0; d <= 2; ++d) {
        const std::vector<float> w = taps(k, d, f);
        for (int t = 0; t < 2 * R; ++t) {
          const double p = n + t - R + 1;
          m[d][0] += w[t];
          m[d][1] += w[t] * p;
          m[d][2] += w[t] * p * p;
        }
      }
      const double tol = 2e-5;
      // Linear functions: every kernel.
      EXPECT_NEAR(m[0][1], x, tol * x) << name(k) << " f=" << f;
      EXPECT_NEAR(m[1][1], 1.0, tol) << name(k) << " f=" << f;
      if (k == KernelKind::Tent) continue;
      // Quadratics: ctmr exactly; bspln3 up to the kernel's variance 1/3 in the value.
      const double offset = k == KernelKind::Bspln3 ? 1.0 / 3.0 : 0.0;
      EXPECT_NEAR(m[0][2], x * x + offset, tol * x * x) << name(k) << " f=" << f;
      EXPECT_NEAR(m[1][2], 2.0 * x, tol * x * x) << name(k) << " f=" << f;
      EXPECT_NEAR(m[2][2], 2.0, tol * x * x) << name(k) << " f=" << f;
      EXPECT_NEAR(m[2][1], 0.0, tol * x) << name(k) << " f=" << f;
    }
  }
  // And tent does not reproduce x² (it interpolates linearly: error f(1 − f) at mid-cell).
  const std::vector<float> w = taps(KernelKind::Tent, 0, 0.5f);
  EXPECT_NEAR(w[0] * 0.0 + w[1] * 1.0, 0.5, 1e-7);
  EXPECT_NEAR(w[0] * 0.0 + w[1] * 1.0 - 0.25, 0.25, 1e-7);
}

TEST(Kernel, NamesParseAndUnknownNamesAreInputErrors) {
  for (KernelKind k : all_kernels()) EXPECT_EQ(parse_kernel(kernel_name(k)), k);
  EXPECT_EQ(kernel_radius(KernelKind::Tent), 1);
  EXPECT_EQ(kernel_radius(KernelKind::Ctmr), 2);
  EXPECT_EQ(kernel_radius(KernelKind::Bspln3), 2);
  try {
    parse_kernel("cubic", "render.kernel");
    FAIL() << "no error for an unknown kernel";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "render.kernel");
    EXPECT_NE(std::string(e.what()).find("'cubic'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tent, ctmr, bspln3"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// Probing

/// A random symmetric Q with entries in [−a, a], b in [−a, a]³ and c.
Quadratic random_quadratic(std::mt19937& rng, float a) {
  std::uniform_real_distribution<float> u(-a, a);
  Quadratic q;
  q.Q.xx = u(rng), q.Q.xy = u(rng), q.Q.xz = u(rng), q.Q.yy = u(rng), q.Q.yz = u(rng), q.Q.zz = u(rng);
  q.b = {u(rng), u(rng), u(rng)};
  q.c = u(rng);
  return q;
}

/// A random index position where every kernel is `inside`.
Vec3 random_inside_index(std::mt19937& rng, const Volume& v) {
  auto in = [&](int n) { return std::uniform_real_distribution<float>(1.f, n - 2.001f)(rng); };
  return {in(v.nx), in(v.ny), in(v.nz)};
}

TEST(Field, QuadraticInIndexSpace_CtmrExact_Bspln3OffsetByTraceOverThree_TentLinear) {
  std::mt19937 rng(5);
  const Quadratic q = random_quadratic(rng, 0.3f);
  const Volume vol = sample_volume(q, 12, 13, 14, Affine3{});  // world = index
  const VolumeView v = make_view(vol);
  Quadratic lin = q;
  lin.Q = Sym3{};
  const Volume lin_vol = sample_volume(lin, 12, 13, 14, Affine3{});
  const VolumeView lv = make_view(lin_vol);
  const float offset = q.Q.trace() / 3.f;  // bspln3: Σ h(f − j)(n + j)² = x² + 1/3 per axis
  const float tol = 2e-6f * max_sample(vol), ltol = 2e-6f * max_sample(lin_vol);
  for (int s = 0; s < 300; ++s) {
    const Vec3 p = random_inside_index(rng, vol);
    const FieldSample e = q.eval(p);
    const FieldSample c = probe(v, KernelKind::Ctmr, p, 2);
    EXPECT_NEAR(c.value, e.value, tol) << str(p);
    EXPECT_LT(max_abs_diff(c.gradient, e.gradient), tol) << str(p);
    EXPECT_LT(max_abs_diff(c.hessian, e.hessian), 4 * tol) << str(p);
    const FieldSample b = probe(v, KernelKind::Bspln3, p, 2);
    EXPECT_NEAR(b.value, e.value + offset, tol) << str(p);
    EXPECT_LT(max_abs_diff(b.gradient, e.gradient), tol) << str(p);
    EXPECT_LT(max_abs_diff(b.hessian, e.hessian), 4 * tol) << str(p);
    // tent: linear functions exactly (value and gradient). Its pure second derivatives are zero; the
    // mixed ones are the trilinear interpolant's (zero for a linear function, up to rounding).
    const FieldSample le = lin.eval(p), t = probe(lv, KernelKind::Tent, p, 2);
    EXPECT_NEAR(t.value, le.value, ltol) << str(p);
    EXPECT_LT(max_abs_diff(t.gradient, le.gradient), ltol) << str(p);
    EXPECT_EQ(t.hessian.xx, 0.f);
    EXPECT_EQ(t.hessian.yy, 0.f);
    EXPECT_EQ(t.hessian.zz, 0.f);
    EXPECT_LT(max_abs(t.hessian), ltol);
  }
  // Orders not requested stay zero.
  const FieldSample only_value = probe(v, KernelKind::Ctmr, Vec3{5.5f, 6.25f, 7.75f}, 0);
  EXPECT_EQ(max_abs(only_value.gradient), 0.f);
  EXPECT_EQ(max_abs(only_value.hessian), 0.f);
  const FieldSample no_hessian = probe(v, KernelKind::Ctmr, Vec3{5.5f, 6.25f, 7.75f}, 1);
  EXPECT_GT(max_abs(no_hessian.gradient), 0.f);
  EXPECT_EQ(max_abs(no_hessian.hessian), 0.f);
}

TEST(Field, InterpolatingKernelsReturnTheSamplesAtGridPoints) {
  std::mt19937 rng(11);
  Volume vol;
  vol.source = "random";
  vol.nx = 6, vol.ny = 5, vol.nz = 7;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int i = 0; i < vol.nx * vol.ny * vol.nz; ++i) vol.data.push_back(u(rng));
  const VolumeView v = make_view(vol);
  for (int k = 1; k < vol.nz - 2; ++k)
    for (int j = 1; j < vol.ny - 2; ++j)
      for (int i = 1; i < vol.nx - 2; ++i) {
        const Vec3 p{float(i), float(j), float(k)};
        EXPECT_FLOAT_EQ(probe(v, KernelKind::Tent, p, 0).value, v.at(i, j, k));
        EXPECT_NEAR(probe(v, KernelKind::Ctmr, p, 0).value, v.at(i, j, k), 1e-6f);
        // bspln3 blurs: (1/6, 2/3, 1/6) per axis.
        double blur = 0.0;
        const double w[3] = {1.0 / 6, 2.0 / 3, 1.0 / 6};
        for (int c = -1; c <= 1; ++c)
          for (int b = -1; b <= 1; ++b)
            for (int a = -1; a <= 1; ++a) blur += w[a + 1] * w[b + 1] * w[c + 1] * v.at(i + a, j + b, k + c);
        EXPECT_NEAR(probe(v, KernelKind::Bspln3, p, 0).value, blur, 1e-6);
      }
}

/// Index → world with anisotropic spacing, a rotation about an oblique axis and an offset origin.
Affine3 oblique_grid(int nx, int ny, int nz, Vec3 centre) {
  return centred_grid(nx, ny, nz, {0.7f, 1.3f, 0.9f}, centre, {1.f, 2.f, 3.f}, 0.6f);
}

TEST(Field, WorldSpaceQuadraticOnAnisotropicRotatedGrid) {
  // A quadratic in world is a quadratic in index space, so ctmr (and bspln3 for derivatives) must give the
  // analytic world gradient 2Qx + b and Hessian 2Q exactly: this checks g_w = Aᵀg_i and H_w = AᵀH_iA.
  std::mt19937 rng(7);
  const Quadratic q = random_quadratic(rng, 0.2f);
  const int n = 16;
  const Affine3 m = oblique_grid(n, n, n, {1.f, -2.f, 3.f});
  const Volume vol = sample_volume(q, n, n, n, m);
  const VolumeView v = make_view(vol);
  // bspln3's value offset: trace(MᵀQM)/3 for the index-space quadratic.
  double offset = 0.0;
  for (int c = 0; c < 3; ++c) {
    const Vec3 col{m.m[c], m.m[3 + c], m.m[6 + c]};
    offset += dot(col, q.Q * col) / 3.0;
  }
  const float tol = 2e-6f * max_sample(vol);
  for (int s = 0; s < 300; ++s) {
    const Vec3 w = m.apply(random_inside_index(rng, vol));
    ASSERT_TRUE(inside(v, KernelKind::Ctmr, w));
    const FieldSample e = q.eval(w);
    for (KernelKind k : {KernelKind::Ctmr, KernelKind::Bspln3}) {
      const FieldSample f = probe(v, k, w, 2);
      const double expect = e.value + (k == KernelKind::Bspln3 ? offset : 0.0);
      EXPECT_NEAR(f.value, expect, tol) << name(k) << " " << str(w);
      EXPECT_LT(max_abs_diff(f.gradient, e.gradient), 2 * tol) << name(k) << " " << str(w);
      EXPECT_LT(max_abs_diff(f.hessian, e.hessian), 8 * tol) << name(k) << " " << str(w);
      // The compile-time-kernel variant is the same code.
      const FieldSample g = k == KernelKind::Ctmr ? probe<KernelKind::Ctmr, 2>(v, w) : probe<KernelKind::Bspln3, 2>(v, w);
      EXPECT_EQ(g.value, f.value);
      EXPECT_EQ(max_abs_diff(g.gradient, f.gradient), 0.f);
      EXPECT_EQ(max_abs_diff(g.hessian, f.hessian), 0.f);
    }
    const FieldSample l = probe(v, KernelKind::Tent, w, 1);  // tent is only first order: no exactness
    EXPECT_TRUE(std::isfinite(l.value) && std::isfinite(l.gradient.x));
  }
}

TEST(Field, WorldDerivativesMatchFiniteDifferencesAlongWorldAxes) {
  // A non-polynomial field (torus distance) on the oblique grid: the probed gradient against central
  // differences of probed values along world x, y, z, and the probed Hessian against central differences
  // of probed gradients. h = 1e-2 world units; the field is a piecewise cubic (truncation ~ h²·|F'''|) and
  // float values (rounding ~ 1e-7·|F|/h), so 2e-3 relative is ample; bspln3 (C2) for the Hessian check,
  // ctmr's Hessian jumps at the knots.
  const TorusDistance t{{0.5f, 0.f, -0.5f}, {0.3f, -0.2f, 1.f}, 5.f, 2.f};
  const int n = 24;
  const Affine3 m = oblique_grid(n, n, n, t.centre);
  const Volume vol = sample_volume(t, n, n, n, m);
  const VolumeView v = make_view(vol);
  std::mt19937 rng(17);
  const float h = 1e-2f;
  const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  int checked = 0;
  for (int s = 0; s < 400; ++s) {
    const Vec3 w = m.apply(random_inside_index(rng, vol));
    bool ok = true;
    for (const Vec3& a : axes) ok = ok && inside(v, KernelKind::Bspln3, w + a * h) && inside(v, KernelKind::Bspln3, w - a * h);
    if (!ok) continue;
    ++checked;
    for (KernelKind k : {KernelKind::Ctmr, KernelKind::Bspln3}) {
      const FieldSample f = probe(v, k, w, 2);
      for (int c = 0; c < 3; ++c) {
        const FieldSample hi = probe(v, k, w + axes[c] * h, 1), lo = probe(v, k, w - axes[c] * h, 1);
        EXPECT_NEAR(f.gradient[c], (hi.value - lo.value) / (2.f * h), 2e-3f) << name(k) << " axis " << c << " " << str(w);
        if (k != KernelKind::Bspln3) continue;
        const Vec3 dg = (hi.gradient - lo.gradient) * (1.f / (2.f * h));  // column c of the Hessian
        for (int r = 0; r < 3; ++r)
          EXPECT_NEAR(f.hessian(r, c), dg[r], 2e-3f) << name(k) << " H(" << r << "," << c << ") " << str(w);
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(Field, InsideMeansEveryTapIsInTheGrid) {
  // Index-space bounds R − 1 ≤ p < n − R per axis.
  Volume vol = sample_volume(SphereDistance{{0, 0, 0}, 1.f}, 10, 8, 6, grid_transform({0.5f, 2.f, 1.f}, {3, 2, 1}));
  const VolumeView v = make_view(vol);
  const float eps = 1e-3f;
  for (KernelKind k : all_kernels()) {
    const float R = kernel_radius(k);
    const Vec3 lo{R - 1, R - 1, R - 1}, hi{10 - R, 8 - R, 6 - R};
    EXPECT_TRUE(inside_index(v, k, lo)) << name(k);
    EXPECT_TRUE(inside_index(v, k, hi - Vec3{eps})) << name(k);
    for (int a = 0; a < 3; ++a) {
      Vec3 p = lo;
      p[a] -= eps;
      EXPECT_FALSE(inside_index(v, k, p)) << name(k) << " axis " << a;
      p = hi - Vec3{eps};
      p[a] = hi[a];
      EXPECT_FALSE(inside_index(v, k, p)) << name(k) << " axis " << a;
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(inside_index(v, k, {nan, 3.f, 3.f}));
    EXPECT_FALSE(inside(v, k, {nan, nan, nan}));
    // World positions go through world_to_index.
    EXPECT_TRUE(inside(v, k, vol.index_to_world.apply(lo + Vec3{eps})));
    EXPECT_FALSE(inside(v, k, vol.index_to_world.apply(lo - Vec3{0.f, 0.f, 0.1f})));
  }
}

TEST(Field, ProbesInsideNeverDependOnSamplesBeyondTheGrid) {
  // Embed a random volume in a larger one with garbage around it: wherever `inside` holds for the small
  // one, both give bit-identical samples (so no tap was clamped); just outside, they differ.
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int n = 8, pad = 3, N = n + 2 * pad;
  Volume small, big;
  small.source = "small", big.source = "big";
  small.nx = small.ny = small.nz = n;
  big.nx = big.ny = big.nz = N;
  big.data.assign(size_t(N) * N * N, 0.f);
  for (float& x : big.data) x = 100.f + 50.f * u(rng);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const float s = u(rng);
        small.data.push_back(s);
        big.data[(size_t(k + pad) * N + j + pad) * N + i + pad] = s;
      }
  small.index_to_world = grid_transform({0.5f, 0.5f, 0.5f}, {0, 0, 0});
  big.index_to_world = grid_transform({0.5f, 0.5f, 0.5f}, Vec3{-pad * 0.5f});
  const VolumeView vs = make_view(small), vb = make_view(big);
  for (KernelKind k : all_kernels()) {
    int in = 0, out_differs = 0, out = 0;
    for (int s = 0; s < 2000; ++s) {
      // Index −0.5 … 7.5 in the small grid, on a dyadic grid so both index transforms are exact.
      Vec3 w = Vec3{u(rng), u(rng), u(rng)} * 2.f + Vec3{1.75f};
      for (int a = 0; a < 3; ++a) w[a] = std::round(w[a] * 1024.f) / 1024.f;
      const FieldSample a = probe(vs, k, w, 2), b = probe(vb, k, w, 2);
      if (inside(vs, k, w)) {
        ++in;
        EXPECT_EQ(a.value, b.value) << name(k) << " " << str(w);
        EXPECT_EQ(max_abs_diff(a.gradient, b.gradient), 0.f) << name(k) << " " << str(w);
        EXPECT_EQ(max_abs_diff(a.hessian, b.hessian), 0.f) << name(k) << " " << str(w);
      } else {
        ++out;
        out_differs += a.value != b.value;
      }
    }
    EXPECT_GT(in, 100) << name(k);
    EXPECT_GT(out_differs, out * 9 / 10) << name(k);
  }
}

TEST(Field, ProbesFarOutsideOrAtNonFinitePositionsStayFinite) {
  const Volume vol = sample_volume(SphereDistance{{0, 0, 0}, 1.f}, 5, 5, 5, grid_transform({1, 1, 1}, {-2, -2, -2}));
  const VolumeView v = make_view(vol);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (KernelKind k : all_kernels())
    for (Vec3 w : {Vec3{1e30f, -1e30f, 0.f}, Vec3{inf, -inf, nan}, Vec3{nan}, Vec3{-7.f, 9.f, 100.f}}) {
      const FieldSample s = probe(v, k, w, 2);
      EXPECT_TRUE(std::isfinite(s.value) && std::isfinite(length(s.gradient)) && std::isfinite(s.hessian.trace()))
          << name(k) << " " << str(w);
      EXPECT_FALSE(inside(v, k, w));
    }
}

TEST(Volume, MakeViewChecksSizesAndTransform) {
  Volume vol = sample_volume(SphereDistance{}, 4, 4, 4, Affine3{});
  const VolumeView v = make_view(vol);
  EXPECT_EQ(v.data, vol.data.data());
  EXPECT_EQ(v.nx * v.ny * v.nz, 64);
  // world_to_index inverts index_to_world.
  vol.index_to_world = oblique_grid(4, 4, 4, {1, 2, 3});
  const VolumeView o = make_view(vol);
  const Vec3 p{1.25f, 2.5f, 0.75f};
  EXPECT_LT(max_abs_diff(o.world_to_index.apply(o.index_to_world.apply(p)), p), 1e-5f);

  auto expect_error = [](const Volume& bad, const std::string& field) {
    try {
      make_view(bad);
      ADD_FAILURE() << "no error for " << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_EQ(e.file(), bad.source) << e.what();
    }
  };
  Volume bad = vol;
  bad.source = "short.nrrd";
  bad.data.pop_back();
  expect_error(bad, "data");
  bad = vol;
  bad.source = "flat.nii";
  bad.index_to_world.m[8] = 0.f, bad.index_to_world.m[7] = 0.f, bad.index_to_world.m[6] = 0.f;
  expect_error(bad, "index_to_world");
  bad = vol;
  bad.source = "nan.nii";
  bad.index_to_world.origin.y = std::numeric_limits<float>::quiet_NaN();
  expect_error(bad, "index_to_world");
  bad = vol;
  bad.source = "empty.nrrd";
  bad.nz = 0;
  bad.data.clear();
  expect_error(bad, "dimensions");
}

// ---------------------------------------------------------------------------------------------------
// Analytic functions

TEST(Analytic, ExactDerivativesMatchFiniteDifferences) {
  // The references themselves: eval's gradient and Hessian against central differences of value().
  std::mt19937 rng(3);
  Quadratic q = random_quadratic(rng, 1.f);
  const SphereDistance sphere{{0.5f, -1.f, 2.f}, 1.5f};
  const TorusDistance torus{{0.f, 1.f, 0.f}, {1.f, 1.f, 0.f}, 3.f, 1.f};
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  const double h = 1e-4;
  auto check = [&](const auto& f, const char* what) {
    for (int s = 0; s < 200; ++s) {
      const Vec3 x{u(rng), u(rng), u(rng)};
      const FieldSample e = f.eval(x);
      EXPECT_NEAR(e.value, f.value(x.x, x.y, x.z), 1e-5 * (1 + fabsf(e.value))) << what;
      for (int c = 0; c < 3; ++c) {
        double p[3] = {x.x, x.y, x.z}, m[3] = {x.x, x.y, x.z};
        p[c] += h, m[c] -= h;
        EXPECT_NEAR(e.gradient[c], (f.value(p[0], p[1], p[2]) - f.value(m[0], m[1], m[2])) / (2 * h), 1e-4) << what;
        for (int r = 0; r < 3; ++r) {
          // d/dx_c of ∂f/∂x_r, by second differences of value().
          double pp[3] = {p[0], p[1], p[2]}, pm[3] = {p[0], p[1], p[2]}, mp[3] = {m[0], m[1], m[2]},
                 mm[3] = {m[0], m[1], m[2]};
          const double hr = 1e-3;
          pp[r] += hr, pm[r] -= hr, mp[r] += hr, mm[r] -= hr;
          const double fd = (f.value(pp[0], pp[1], pp[2]) - f.value(pm[0], pm[1], pm[2]) - f.value(mp[0], mp[1], mp[2]) +
                             f.value(mm[0], mm[1], mm[2])) /
                            (4 * h * hr);
          EXPECT_NEAR(e.hessian(r, c), fd, 2e-3 * (1 + fabs(fd))) << what << " H(" << r << "," << c << ")";
        }
      }
    }
  };
  check(q, "quadratic");
  check(sphere, "sphere");
  check(torus, "torus");
}

TEST(Analytic, GridTransformsAndSampledVolumes) {
  const Affine3 a = grid_transform({2.f, 3.f, 4.f}, {1, 2, 3}, {0, 0, 1}, 0.5f * kPi);
  // A quarter turn about z: index x → world +y (scaled 2), index y → world −x (scaled 3).
  EXPECT_LT(max_abs_diff(a.linear({1, 0, 0}), {0, 2, 0}), 1e-6f);
  EXPECT_LT(max_abs_diff(a.linear({0, 1, 0}), {-3, 0, 0}), 1e-6f);
  EXPECT_LT(max_abs_diff(a.apply({0, 0, 1}), {1, 2, 7}), 1e-6f);
  const Affine3 c = centred_grid(5, 7, 9, {0.5f, 0.5f, 0.5f}, {10, 20, 30}, {1, 1, 1}, 1.f);
  EXPECT_LT(max_abs_diff(c.apply({2, 3, 4}), {10, 20, 30}), 1e-5f);
  EXPECT_NEAR(c.determinant(), 0.125f, 1e-6f);
  const SphereDistance s{{10, 20, 30}, 1.f};
  const Volume v = sample_volume(s, 5, 7, 9, c);
  EXPECT_EQ(v.data.size(), 5u * 7u * 9u);
  EXPECT_NEAR(v.data[(4 * 7 + 3) * 5 + 2], -1.f, 1e-5f);  // the centre sample
  EXPECT_NE(v.source.find("sphere"), std::string::npos);
  EXPECT_THROW(sample_volume(s, 0, 7, 9, c), InputError);
}

// ---------------------------------------------------------------------------------------------------
// Curvature

TEST(Curvature, FormulaGivesPrescribedPrincipalCurvatures) {
  // H = |g|(κa t1t1ᵀ + κb t2t2ᵀ) + normal terms (projected away) must give κ1 = max, κ2 = min.
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int s = 0; s < 200; ++s) {
    const Vec3 n = normalize({u(rng), u(rng), u(rng)});
    Vec3 t1, t2;
    onb(n, t1, t2);
    const float ka = 2.f * u(rng), kb = 2.f * u(rng), g = 0.1f + 3.f * fabsf(u(rng)), al = u(rng), be = u(rng);
    Sym3 H;
    auto add = [&](Vec3 a, Vec3 b, float w) {  // H += w (a bᵀ + b aᵀ)/2
      H.xx += w * a.x * b.x, H.yy += w * a.y * b.y, H.zz += w * a.z * b.z;
      H.xy += 0.5f * w * (a.x * b.y + a.y * b.x), H.xz += 0.5f * w * (a.x * b.z + a.z * b.x);
      H.yz += 0.5f * w * (a.y * b.z + a.z * b.y);
    };
    add(t1, t1, g * ka);
    add(t2, t2, g * kb);
    add(n, n, al);
    add(n, t1, 2.f * be);
    const Curvature c = principal_curvatures(n * g, H);
    ASSERT_TRUE(c.valid);
    EXPECT_NEAR(c.k1, fmaxf(ka, kb), 1e-4f);
    EXPECT_NEAR(c.k2, fminf(ka, kb), 1e-4f);
    EXPECT_NEAR(c.mean(), 0.5f * (ka + kb), 1e-4f);
    EXPECT_NEAR(c.gaussian(), ka * kb, 2e-4f);
    // Kindlmann's convention is megaview's applied to −F.
    const Curvature k = principal_curvatures_kindlmann(n * g, H);
    EXPECT_NEAR(k.k1, -fminf(ka, kb), 1e-4f);
    EXPECT_NEAR(k.k2, -fmaxf(ka, kb), 1e-4f);
  }
}

TEST(Curvature, ExactSphereAndTorusDerivativesGiveTheirCurvatures) {
  const SphereDistance s{{1, 2, 3}, 2.f};
  for (float rho : {0.5f, 1.f, 2.f, 7.f}) {
    const Curvature c = principal_curvatures(s.eval(s.centre + normalize({1, -2, 0.5f}) * rho).gradient,
                                             s.eval(s.centre + normalize({1, -2, 0.5f}) * rho).hessian);
    EXPECT_NEAR(c.k1, 1.f / rho, 1e-5f / rho);
    EXPECT_NEAR(c.k2, 1.f / rho, 1e-5f / rho);
    // A bright ball (F = −d, values decreasing outward) is convex in Kindlmann's convention too.
    const FieldSample e = s.eval(s.centre + Vec3{0, rho, 0});
    const Sym3 minus_h{-e.hessian.xx, -e.hessian.xy, -e.hessian.xz, -e.hessian.yy, -e.hessian.yz, -e.hessian.zz};
    const Curvature k = principal_curvatures_kindlmann(-e.gradient, minus_h);
    EXPECT_NEAR(k.k1, 1.f / rho, 1e-5f / rho);
    EXPECT_NEAR(k.k2, 1.f / rho, 1e-5f / rho);
  }
  const TorusDistance t{{0, 0, 0}, {0, 0, 1}, 3.f, 1.f};
  const FieldSample outer = t.eval({0.f, 4.f, 0.f}), inner = t.eval({2.f, 0.f, 0.f});
  Curvature c = principal_curvatures(outer.gradient, outer.hessian);
  EXPECT_NEAR(c.k1, 1.f, 1e-5f);
  EXPECT_NEAR(c.k2, 0.25f, 1e-5f);
  c = principal_curvatures(inner.gradient, inner.hessian);  // saddle
  EXPECT_NEAR(c.k1, 1.f, 1e-5f);
  EXPECT_NEAR(c.k2, -0.5f, 1e-5f);
}

// Reconstruction error of curvature. A Hessian reconstructed with ctmr (which reproduces quadratics only)
// is first-order accurate, with bspln3 second-order (its blur is ≈ h²/6·∇²F, smooth), so at a point
// whose largest principal curvature is κ and grid spacing h (the largest of the three) we allow
//     ctmr:    |Δκ| ≤ 1.5 · h·κ²              (relative error 1.5·h/ρ on a sphere of radius ρ = 1/κ)
//     bspln3:  |Δκ| ≤ 0.5 · h²·κ³ + 1e-3·κ    (relative 0.5·(h/ρ)² + 1e-3, the last term for float)
// Measured (isotropic h = 0.25, ρ/h = 6, 10, 16, 22, 26 directions each): ctmr relative errors
// 0.13, 0.12, 0.06, 0.04 (≈ 0.8–1.2·h/ρ); bspln3 about 0.2·(h/ρ)² (≤ 0.0053); the oblique grid alike.
// Torus below (h = 0.2, κ1 = 1): ctmr 0.15, bspln3 0.009.
float curvature_tolerance(KernelKind k, float h, float kappa) {
  return k == KernelKind::Ctmr ? 1.5f * h * kappa * kappa : 0.5f * h * h * kappa * kappa * kappa + 1e-3f * kappa;
}

std::vector<Vec3> directions() {
  std::vector<Vec3> d;
  for (int z = -1; z <= 1; ++z)
    for (int y = -1; y <= 1; ++y)
      for (int x = -1; x <= 1; ++x)
        if (x || y || z) d.push_back(normalize({x + 0.13f * y, y + 0.07f * z, z + 0.11f * x}));
  return d;
}

/// κ1 = κ2 = 1/ρ at 26 points at each distance ρ from the centre of a sphere's distance field.
void check_sphere_curvature(const Affine3& grid, int n, float h, const char* grid_name) {
  const Vec3 centre{0.1f, -0.2f, 0.05f};
  const Volume vol = sample_volume(SphereDistance{centre, 2.f}, n, n, n, grid);
  const VolumeView v = make_view(vol);
  for (KernelKind k : {KernelKind::Bspln3, KernelKind::Ctmr}) {
    for (float rho : {1.5f, 2.5f, 4.f, 5.5f}) {
      const float tol = curvature_tolerance(k, h, 1.f / rho);
      float worst = 0.f;
      for (const Vec3& d : directions()) {
        const Vec3 w = centre + d * rho;
        ASSERT_TRUE(inside(v, k, w)) << grid_name << " " << str(w);
        const FieldSample f = probe(v, k, w, 2);
        EXPECT_NEAR(length(f.gradient), 1.f, 0.01f) << grid_name;
        const Curvature c = principal_curvatures(f.gradient, f.hessian);
        ASSERT_TRUE(c.valid);
        EXPECT_NEAR(c.k1, 1.f / rho, tol) << grid_name << " " << name(k) << " rho=" << rho << " at " << str(w);
        EXPECT_NEAR(c.k2, 1.f / rho, tol) << grid_name << " " << name(k) << " rho=" << rho << " at " << str(w);
        worst = fmaxf(worst, fmaxf(fabsf(c.k1 * rho - 1.f), fabsf(c.k2 * rho - 1.f)));
      }
      ::testing::Test::RecordProperty(std::string(grid_name) + "_" + name(k) + "_rho" + std::to_string(int(rho * 10)) +
                                          "_relerr",
                                      std::to_string(worst));
    }
  }
}

TEST(Curvature, SphereDistanceFieldHasKappaOneOverRho) {
  const int n = 53;  // 13 world units at spacing 1/4: ρ up to 5.5 keeps the taps in the grid
  check_sphere_curvature(centred_grid(n, n, n, {0.25f, 0.25f, 0.25f}, {0, 0, 0}), n, 0.25f, "isotropic");
}

TEST(Curvature, SphereDistanceFieldHasKappaOneOverRhoOnAnObliqueGrid) {
  const int n = 67;
  check_sphere_curvature(centred_grid(n, n, n, {0.25f, 0.2f, 0.22f}, {0, 0, 0}, {1.f, 2.f, 3.f}, 0.6f), n, 0.25f, "oblique");
}

TEST(Curvature, TorusOuterEquatorHasKappaOneOverRAndOneOverBigRPlusR) {
  // Torus R = 3, r = 1 about an oblique axis, spacing 0.2; on the outer equator κ1 = 1/r = 1,
  // κ2 = 1/(R + r) = 0.25; on the inner equator κ1 = 1, κ2 = −1/(R − r) = −0.5 (a saddle). Tolerance:
  // curvature_tolerance with κ = κ1 = 1 and h = 0.2: 0.3 (ctmr), 0.021 (bspln3).
  const Vec3 axis = normalize({0.2f, -0.3f, 1.f});
  const TorusDistance t{{0.3f, 0.1f, -0.2f}, axis, 3.f, 1.f};
  const int n = 51;
  const Volume vol = sample_volume(t, n, n, n, centred_grid(n, n, n, {0.2f, 0.2f, 0.2f}, t.centre, {0, 1, 0}, 0.3f));
  const VolumeView v = make_view(vol);
  Vec3 e1, e2;
  onb(axis, e1, e2);
  for (KernelKind k : {KernelKind::Bspln3, KernelKind::Ctmr}) {
    const float tol = curvature_tolerance(k, 0.2f, 1.f);
    float worst = 0.f;
    for (int i = 0; i < 12; ++i) {
      const float phi = 2.f * kPi * i / 12.f + 0.1f;
      const Vec3 radial = e1 * cosf(phi) + e2 * sinf(phi);
      const FieldSample fo = probe(v, k, t.centre + radial * 4.f, 2);
      EXPECT_NEAR(fo.value, 0.f, 0.02f);  // bspln3 blurs by ≈ spacing²/6 · ∇²d ≈ 0.008
      const Curvature co = principal_curvatures(fo.gradient, fo.hessian);
      ASSERT_TRUE(co.valid);
      EXPECT_NEAR(co.k1, 1.f, tol) << name(k) << " outer phi=" << phi;
      EXPECT_NEAR(co.k2, 0.25f, tol) << name(k) << " outer phi=" << phi;
      const FieldSample fi = probe(v, k, t.centre + radial * 2.f, 2);
      const Curvature ci = principal_curvatures(fi.gradient, fi.hessian);
      ASSERT_TRUE(ci.valid);
      EXPECT_NEAR(ci.k1, 1.f, tol) << name(k) << " inner phi=" << phi;
      EXPECT_NEAR(ci.k2, -0.5f, tol) << name(k) << " inner phi=" << phi;
      EXPECT_LT(ci.gaussian(), 0.f);
      worst = fmaxf(worst, fmaxf(fmaxf(fabsf(co.k1 - 1.f), fabsf(co.k2 - 0.25f)), fmaxf(fabsf(ci.k1 - 1.f), fabsf(ci.k2 + 0.5f))));
    }
  }
}

TEST(Curvature, InvalidWhereTheGradientVanishes) {
  EXPECT_FALSE(principal_curvatures({0, 0, 0}, Sym3{1, 0, 0, 1, 0, 1}).valid);
  EXPECT_FALSE(principal_curvatures({1e-7f, 0, 0}, Sym3{1, 0, 0, 1, 0, 1}).valid);
  EXPECT_FALSE(principal_curvatures({1e-3f, 0, 0}, Sym3{}, 1e-2f).valid);  // below a caller's threshold
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(principal_curvatures({nan, 0, 0}, Sym3{}).valid);
  EXPECT_FALSE(principal_curvatures({inf, 0, 0}, Sym3{}).valid);
  const Curvature none = principal_curvatures({0, 0, 0}, Sym3{1, 0, 0, 1, 0, 1});
  EXPECT_EQ(none.k1, 0.f);
  EXPECT_EQ(none.k2, 0.f);
  EXPECT_TRUE(principal_curvatures({1e-3f, 0, 0}, Sym3{}).valid);

  // The centre of a sphere's distance field, on a grid symmetric about it (exact sample positions):
  // the reconstructed gradient is zero by symmetry.
  const int n = 21;
  const Volume vol = sample_volume(SphereDistance{{0, 0, 0}, 1.f}, n, n, n, centred_grid(n, n, n, {0.25f, 0.25f, 0.25f}, {0, 0, 0}));
  const VolumeView v = make_view(vol);
  for (KernelKind k : {KernelKind::Ctmr, KernelKind::Bspln3}) {
    const FieldSample f = probe(v, k, {0, 0, 0}, 2);
    EXPECT_EQ(length(f.gradient), 0.f) << name(k);
    EXPECT_FALSE(principal_curvatures(f.gradient, f.hessian).valid) << name(k);
    EXPECT_TRUE(principal_curvatures(probe(v, k, {1, 0.5f, 0}, 2).gradient, f.hessian).valid) << name(k);
  }
  // A constant volume: no isosurfaces anywhere.
  Volume flat = vol;
  std::fill(flat.data.begin(), flat.data.end(), 3.f);
  const VolumeView fv = make_view(flat);
  const FieldSample f = probe(fv, KernelKind::Bspln3, {0.3f, -0.4f, 0.2f}, 2);
  EXPECT_NEAR(f.value, 3.f, 1e-5f);
  EXPECT_FALSE(principal_curvatures(f.gradient, f.hessian, 1e-4f).valid);
}

}  // namespace
}  // namespace mv
