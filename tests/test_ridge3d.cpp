// ridge3d (render/strands/ridge3d.h): the eigen-solver, particles converging onto the ridge plane of an
// analytic Gaussian ridge, dying on a flat field, and the ch2 workload's step statistics and agreement of
// the strategies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/session/strand_workloads.h"
#include "base/errors.h"
#include "render/field/analytic.h"
#include "render/field/volume.h"
#include "render/field/volume_io.h"
#include "render/gpu.h"
#include "render/strands/ridge3d.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

Sym3 rotate(const float r[3][3], Vec3 diag) {
  // R·diag(d)·Rᵀ
  float m[3][3];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) m[a][b] = r[a][0] * diag.x * r[b][0] + r[a][1] * diag.y * r[b][1] + r[a][2] * diag.z * r[b][2];
  Sym3 s;
  s.xx = m[0][0], s.xy = m[0][1], s.xz = m[0][2], s.yy = m[1][1], s.yz = m[1][2], s.zz = m[2][2];
  return s;
}

TEST(Ridge3d, SmallestEigenpairOfSymmetricMatrices) {
  const float c = std::cos(0.7f), s = std::sin(0.7f);
  const float r[3][3] = {{c, -s, 0.f}, {s * 0.8f, c * 0.8f, -0.6f}, {s * 0.6f, c * 0.6f, 0.8f}};  // orthonormal
  for (const Vec3 d : {Vec3{3.f, 1.f, -2.f}, Vec3{-5.f, 0.5f, 4.f}, Vec3{1.f, -7.f, -6.9f}, Vec3{2.f, 2.f, -1.f}}) {
    float lambda;
    Vec3 e;
    sym3_min_eigen(rotate(r, d), lambda, e);
    const float lmin = std::fmin(d.x, std::fmin(d.y, d.z));
    EXPECT_NEAR(lambda, lmin, 1e-5f * 8.f);
    const int col = lmin == d.x ? 0 : (lmin == d.y ? 1 : 2);
    const Vec3 want{r[0][col], r[1][col], r[2][col]};
    EXPECT_NEAR(std::fabs(dot(e, want)), 1.f, 1e-4f) << d.x << " " << d.y << " " << d.z;
    EXPECT_NEAR(length(e), 1.f, 1e-5f);
  }
  float lambda;
  Vec3 e;
  Sym3 diag;
  diag.xx = 4.f, diag.yy = -3.f, diag.zz = 1.f;
  sym3_min_eigen(diag, lambda, e);
  EXPECT_NEAR(lambda, -3.f, 1e-5f);
  EXPECT_NEAR(std::fabs(e.y), 1.f, 1e-6f);
  Sym3 iso;
  iso.xx = iso.yy = iso.zz = 2.f;
  sym3_min_eigen(iso, lambda, e);
  EXPECT_EQ(lambda, 2.f);
  EXPECT_EQ(length(e), 1.f);
}

/// A 41³ grid at 1 mm centred on the origin holding F(x) = A·exp(−(n·x − c)²/(2σ²)): a height ridge on the
/// plane n·x = c, and no ridge (λ3 ≥ 0) beyond |n·x − c| > σ. bspln3 blurs it by its variance of ⅓ voxel²
/// per axis: strength A·σ/(σ² + ⅓)^{3/2} on the ridge.
constexpr float kA = 100.f, kSigma = 2.5f;
Volume gaussian_ridge(Vec3 n, float c, bool flat = false) {
  Volume v;
  v.nx = v.ny = v.nz = 41;
  v.index_to_world = centred_grid(41, 41, 41, {1.f, 1.f, 1.f}, {0.f, 0.f, 0.f});
  v.data.resize(41 * 41 * 41);
  for (int k = 0; k < 41; ++k)
    for (int j = 0; j < 41; ++j)
      for (int i = 0; i < 41; ++i) {
        const Vec3 x = v.index_to_world.apply({static_cast<float>(i), static_cast<float>(j), static_cast<float>(k)});
        const double d = static_cast<double>(dot(n, x)) - c;
        v.data[(k * 41 + j) * 41 + i] = flat ? 7.f : static_cast<float>(kA * std::exp(-d * d / (2.0 * kSigma * kSigma)));
      }
  v.source = flat ? "flat" : "gaussian ridge";
  return v;
}

/// Runs every seed of a 12³ grid on the ridge n·x = c; checks that the seeds within σ/2 of it converge,
/// that every converged particle lies within `tol` of the plane with the blurred strength, and returns the
/// number converged.
int converge_on_ridge(Vec3 n, float c, float tol, bool only_across) {
  const Volume v = gaussian_ridge(n, c);
  Ridge3dParams p;
  p.gx = p.gy = p.gz = 12;
  p.tolerance = 1e-4f;  // Newton converges quadratically: the last step is far below the distance left
  p.strength_min = 0.5f;
  const Ridge3dStrands w = make_ridge3d(make_view(v), p);
  const float strength = kA * kSigma / std::pow(kSigma * kSigma + 1.f / 3.f, 1.5f);
  int stable = 0, near_seeds = 0;
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    Ridge3dStrands::State s = w.init(i);
    const float d0 = dot(n, s.pos) - c;
    uint32_t steps = 0;
    const WorkStatus st = run_item(w, i, s, steps);
    if (std::fabs(d0) < 0.5f * kSigma) {
      ++near_seeds;
      EXPECT_EQ(st, WorkStatus::Stable) << "seed " << i << " at distance " << d0;
    }
    if (st != WorkStatus::Stable) continue;
    ++stable;
    EXPECT_NEAR(dot(n, s.pos) - c, 0.f, tol) << "seed " << i << " from distance " << d0;
    EXPECT_NEAR(s.strength, strength, 0.05f * strength) << i;
    if (only_across) {  // an axis-aligned ridge: the Hessian's eigenvector is the axis, the step only across
      const Vec3 moved = s.pos - w.seed(i);
      EXPECT_LT(length(moved - n * dot(moved, n)), 1e-5f) << i;
    }
  }
  EXPECT_GT(near_seeds, 100);
  EXPECT_GE(stable, near_seeds);
  return stable;
}

TEST(Ridge3d, ParticlesConvergeOntoAGaussianRidgeWithinAThousandthOfAVoxel) {
  // Halfway between two grid planes the samples are symmetric about the ridge, so the reconstructed
  // field's ridge is exactly the analytic one: what is left is the particles' own error.
  converge_on_ridge({1.f, 0.f, 0.f}, 0.5f, 1e-3f, true);
  converge_on_ridge({0.f, 0.f, 1.f}, -1.5f, 1e-3f, true);
  // A tilted ridge between grid points: the B-spline reconstruction of the samples moves its ridge by a
  // few thousandths of a voxel (measured: ≤ 0.004 for σ = 2.5 voxels; 0 at whole and half voxels).
  converge_on_ridge(normalize(Vec3{1.f, 0.3f, 0.2f}), 0.37f, 6e-3f, false);
}

TEST(Ridge3d, DiesOnAFlatField) {
  const Volume v = gaussian_ridge({1.f, 0.f, 0.f}, 0.f, true);
  Ridge3dParams p;
  p.gx = p.gy = p.gz = 6;
  const Ridge3dStrands w = make_ridge3d(make_view(v), p);
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    Ridge3dStrands::State s = w.init(i);
    uint32_t steps = 0;
    ASSERT_EQ(run_item(w, i, s, steps), WorkStatus::Dead) << i;
    ASSERT_EQ(steps, 1u) << i;
  }
}

TEST(Ridge3d, ParametersAreValidated) {
  const Volume v = gaussian_ridge({1.f, 0.f, 0.f}, 0.f);
  Ridge3dParams p;
  p.kernel = KernelKind::Tent;
  EXPECT_THROW(make_ridge3d(make_view(v), p), InputError);
  p = Ridge3dParams{};
  p.tolerance = 0.f;
  EXPECT_THROW(make_ridge3d(make_view(v), p), InputError);
  p = Ridge3dParams{};
  p.gx = 0;
  EXPECT_THROW(make_ridge3d(make_view(v), p), InputError);
}

TEST(Ridge3d, EveryStrategyAgreesWithSequentialOnCh2) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const StrandWorkloadEntry& e = find_strand_workload("ridge3d");
  EXPECT_EQ(static_cast<uint64_t>(e.default_width) * e.default_height, 1728000u);  // Fig 3.2
  constexpr uint32_t kG = 20;  // a 20³ seed grid: 20 × 400 strands
  const StrandResult ref = e.run("sequential", kG, kG * kG, StrandRunSettings{}, true);
  int ran = 0;
  for (const StrategyInfo& info : e.strategies) {
    if (info.needs_gpu() && !gpu_available()) continue;
    const StrandResult r = e.run(info.name, kG, kG * kG, StrandRunSettings{}, true);
    // The CPU strategies run the same plain host code (kCpuFma = false): identical step counts and image.
    EXPECT_EQ(strand_disagreement(ref, r, info.needs_gpu() ? e.tolerance : StrandTolerance{}), "") << info.name;
    ++ran;
  }
  EXPECT_GE(ran, gpu_available() ? static_cast<int>(e.strategies.size()) : 2);
}


// The viewer's picture of ridge3d (render/strands/ridge3d.h, ridge3d_splats): converged particles as
// depth-tested, depth-shaded discs seen through the camera; dead ones and those behind the eye are not drawn.
TEST(Ridge3d, ConvergedParticlesAreDrawnAsDepthTestedSplats) {
  Ridge3dStrands w;
  w.strength_scale = 0.5f;
  PinholeCamera pc;
  pc.eye = {0.f, 0.f, 10.f};
  pc.look_at = {0.f, 0.f, 0.f};
  const RayCamera cam = make_ray_camera(pc, 64, 48, "test");
  using S = Ridge3dStrands::State;
  const std::vector<S> state = {S{{0.f, 0.f, 5.f}, 0.1f, 3},    // near, weak: dark red, at the centre
                                S{{0.f, 0.f, 0.f}, 1.f, 3},     // behind it at the centre: hidden
                                S{{1.f, 0.f, 0.f}, 1.f, 3},     // far, strong: white, right of the centre
                                S{{0.f, 1.f, 0.f}, 1.f, 3},     // dead: not drawn
                                S{{0.f, 0.f, 20.f}, 1.f, 3}};   // behind the eye: skipped
  const std::vector<WorkStatus> status = {WorkStatus::Stable, WorkStatus::Stable, WorkStatus::Stable,
                                          WorkStatus::Dead, WorkStatus::Stable};
  const std::vector<float> img = ridge3d_splats(w, state, status, cam, 0.2f);
  ASSERT_EQ(img.size(), 64u * 48u * 4u);
  const auto px = [&](int i, int j) { return &img[4 * (static_cast<size_t>(j) * 64 + i)]; };
  // The centre pixels show the near particle at full shade: its colour, red 0.1/0.5·3 = 0.6.
  EXPECT_NEAR(px(32, 24)[0], 0.6f, 1e-5f);
  EXPECT_NEAR(px(32, 24)[1], 0.f, 1e-6f);
  // The far particle at x = 1 projects to column (1/10/tan 15° · 48 + 63) / 2 ≈ 40.5, shaded to 0.45.
  EXPECT_NEAR(px(40, 23)[0], 0.45f, 1e-5f);
  EXPECT_NEAR(px(40, 23)[2], 0.45f, 1e-5f);
  // The dead particle's place (straight above the centre) and the corners stay black, alpha 1 everywhere.
  EXPECT_EQ(px(32, 15)[0], 0.f);
  EXPECT_EQ(px(0, 0)[0], 0.f);
  for (size_t p = 0; p < 64u * 48u; ++p) ASSERT_EQ(img[4 * p + 3], 1.f);
  EXPECT_THROW(ridge3d_splats(w, state, {WorkStatus::Stable}, cam, 0.2f), std::invalid_argument);
  EXPECT_THROW(ridge3d_splats(w, state, status, cam, 0.f), std::invalid_argument);
}

}  // namespace
}  // namespace mv
