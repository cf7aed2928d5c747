// The `ridge3d` strand workload: particles that find the ridge surfaces of a 3D scalar field (Eberly 1996,
// "Ridges in Image and Data Analysis", height ridges; Lehmann 2023's ref [10]), Lehmann 2023 §4.1.1's
// benchmark "ridge3d" (Fig 3.2: 1,728,000 strands, i.e. 120³ particles; Appendix A.25–A.32).
//
// A height ridge surface (codimension 1) of F is where, with λ1 ≥ λ2 ≥ λ3 the eigenvalues of the Hessian
// H = ∇⊗∇F and e3 the eigenvector of λ3, the derivative along e3 vanishes (∇F·e3 = 0) and λ3 < 0: F has a
// maximum across the surface. Its strength is −λ3.
//
// Seeds. Strand index = (k·gy + j)·gx + i seeds particle (i, j, k) of a gx × gy × gz grid at the cell
// centres of a box [lo, hi] in index space, p = lo + (hi − lo)·((i + ½)/gx, (j + ½)/gy, (k + ½)/gz): the
// field box (Diderot's inside region for the kernel, render/field/field.h), or the part of it where the
// data is not zero (data_support_box; the registry's ch2 workload seeds there, as Diderot's program seeds
// over its image's extent). The strands are laid out as an image of
// width gx and height gy·gz: gz slices of gx × gy stacked top to bottom.
//
// One update is one Newton step toward the ridge in the Hessian's eigenbasis: probe F (bspln3 by default:
// C2, so H is continuous) for ∇F and H at x, find (λ3, e3) (sym3_min_eigen), and
//   - die if x is not inside the field, or if the ridge strength −λ3 < strength_min;
//   - else step x ← x + δ, δ = −(∇F·e3 / λ3)·e3 (the Newton step for ∇F·e3 = 0 along e3, uphill because
//     λ3 < 0), its length clamped to max_step ("Newton-like": the clamp keeps a far seed from jumping);
//   - stabilise if |δ| < tolerance (the particle sits on the ridge), die after max_steps updates without
//     converging.
// Units: positions, steps and tolerances in the volume's world units (mm for ch2); strength in field units
// per world unit².
//
// Parameters for ch2 (Fig 3.2: μ 8.155, σ 5.939, CV 0.728): Ridge3dParams' defaults (strength_min 0.015,
// tolerance 0.01 mm, max_step 1 mm, max_steps 16, bspln3) on ch2 pre-blurred with a Gaussian of
// kRidge3dCh2Smooth voxels (render/field/volume_filter.h): the ridges of the blurred head, and fewer seeds
// in the exactly-zero air around it, where the Hessian vanishes and a particle dies at its first update.
// Measured (CPU, all 1,728,000 strands): μ 8.523, σ 6.314, CV 0.741 (docs/volume-strands.md).
//
// Device use: like the ray casters, trivially copyable over a VolumeView whose samples are on the host or
// the device; update() allocates nothing. The CPU strategies agree bit for bit (kCpuFma). The GPU differs
// by FMA contraction in the probe and the eigen-solver; a particle on a weak ridge (Newton steps that
// wander) can then take a different number of steps (app/session/strand_workloads.cu, ridge3d_tolerance).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include <type_traits>

#include "base/common.h"
#include "render/field/field.h"
#include "render/field/kernel.h"
#include "render/field/volume.h"
#include "render/math.h"
#include "render/strands/strand.h"
#include "render/strands/volume_ray.h"

namespace mv {

/// The smallest eigenvalue λ3 of the symmetric matrix `a` and a unit eigenvector e3 of it. Eigenvalues
/// by the trigonometric closed form (Smith 1961: A = qI + pB, λ = q + 2p·cos(φ + 2πm/3) with
/// cos 3φ = det(B)/2), the eigenvector as the largest cross product of two rows of A − λ3·I. For a
/// multiple of the identity (every vector an eigenvector) e3 is the x axis. Relative accuracy ~1e-6 of
/// the matrix's norm for λ3; e3 is ill-conditioned only where λ3 ≈ λ2.
MV_HD inline void sym3_min_eigen(const Sym3& a, float& lambda, Vec3& e) {
  const float p1 = a.xy * a.xy + a.xz * a.xz + a.yz * a.yz;
  const float q = (a.xx + a.yy + a.zz) * (1.f / 3.f);
  const float dx = a.xx - q, dy = a.yy - q, dz = a.zz - q;
  const float p2 = dx * dx + dy * dy + dz * dz + 2.f * p1;
  if (!(p2 > 1e-30f)) {  // a = qI
    lambda = q;
    e = Vec3{1.f, 0.f, 0.f};
    return;
  }
  const float p = sqrtf(p2 * (1.f / 6.f));
  const float ip = 1.f / p;
  const float bxx = dx * ip, byy = dy * ip, bzz = dz * ip, bxy = a.xy * ip, bxz = a.xz * ip, byz = a.yz * ip;
  const float det = bxx * (byy * bzz - byz * byz) - bxy * (bxy * bzz - byz * bxz) + bxz * (bxy * byz - byy * bxz);
  const float r = fminf(fmaxf(0.5f * det, -1.f), 1.f);
  const float phi = acosf(r) * (1.f / 3.f);
  lambda = q + 2.f * p * cosf(phi + 2.0943951f);  // the smallest of the three
  const Vec3 r0{a.xx - lambda, a.xy, a.xz}, r1{a.xy, a.yy - lambda, a.yz}, r2{a.xz, a.yz, a.zz - lambda};
  const Vec3 c0 = cross(r0, r1), c1 = cross(r0, r2), c2 = cross(r1, r2);
  const float n0 = dot(c0, c0), n1 = dot(c1, c1), n2 = dot(c2, c2);
  const Vec3 c = n0 >= n1 ? (n0 >= n2 ? c0 : c2) : (n1 >= n2 ? c1 : c2);
  const float n = n0 >= n1 ? (n0 >= n2 ? n0 : n2) : (n1 >= n2 ? n1 : n2);
  e = n > 0.f ? c * (1.f / sqrtf(n)) : Vec3{1.f, 0.f, 0.f};
}

/// Gaussian pre-blur (σ in voxels) of ch2 for the registry's ridge3d workload.
inline constexpr float kRidge3dCh2Smooth = 8.f;

/// A ridge3d particle's stopping rules and colour scale, shared by the parameters and the workload.
struct Ridge3dRules {
  float strength_min = 0.015f;  ///< die where −λ3 is below this, field units per world unit², [0, 1e30]
  float tolerance = 0.01f;    ///< stabilise at |δ| below this, world units, (0, 1e6]
  float max_step = 1.f;       ///< longest step, world units, (0, 1e6]
  uint32_t max_steps = 16;    ///< die after this many updates without converging, [1, 100000]
  float strength_scale = 0.5f;  ///< colour: strength at which the colour map saturates, (0, 1e30]
};

struct Ridge3dParams : Ridge3dRules {
  uint32_t gx = 120, gy = 120, gz = 120;   ///< seed grid, each in [1, 4096]; strands gx·gy·gz
  KernelKind kernel = KernelKind::Bspln3;  ///< ctmr or bspln3 (tent has no Hessian)
  /// Index-space box the seeds fill (cell centres of the grid over it), clipped to the field box; an
  /// empty box (hi ≤ lo on an axis) means the whole field box. data_support_box gives the box of the
  /// data's support.
  Vec3 seed_lo{0.f}, seed_hi{0.f};

  /// Throws InputError("ridge3d", "<field>", "<value> is out of range …") for a field out of range, or
  /// InputError("ridge3d", "kernel", …) for tent.
  void validate() const;
};

struct Ridge3dStrands : Ridge3dRules {
  /// kCpuFma = false: every CPU strategy runs the plain host code, bit for bit equal to sequential (a
  /// particle on a weak ridge is chaotic: an FMA's rounding can change its step count by up to max_steps).
  static constexpr bool kCpuFma = false;

  struct State {
    Vec3 pos;        ///< world position
    float strength;  ///< −λ3 at the last probe (0 before the first)
    uint32_t steps;  ///< updates taken
  };

  VolumeView vol;                          ///< the field's samples (host or device) and its transforms
  KernelKind kernel = KernelKind::Bspln3;
  uint32_t gx = 1, gy = 1, gz = 1;         ///< seed grid
  Vec3 lo{0.f}, hi{0.f};                   ///< the seed box in index space (inside the field box)

  MV_HD uint32_t num_strands() const { return gx * gy * gz; }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }

  /// World position of seed `index` (see the file comment).
  MV_HD Vec3 seed(uint32_t index) const {
    const uint32_t i = index % gx, r = index / gx, j = r % gy, k = r / gy;
    const Vec3 t{(static_cast<float>(i) + 0.5f) / static_cast<float>(gx),
                 (static_cast<float>(j) + 0.5f) / static_cast<float>(gy),
                 (static_cast<float>(k) + 0.5f) / static_cast<float>(gz)};
    const Vec3 p{lo.x + (hi.x - lo.x) * t.x, lo.y + (hi.y - lo.y) * t.y, lo.z + (hi.z - lo.z) * t.z};
    return vol.index_to_world.apply(p);
  }

  MV_HD State init(uint32_t index) const { return State{seed(index), 0.f, 0u}; }

  /// One Newton step toward the ridge (see the file comment).
  MV_HD WorkStatus update(State& s) const {
    ++s.steps;
    if (!inside(vol, kernel, s.pos)) return WorkStatus::Dead;
    const FieldSample f = probe(vol, kernel, s.pos, 2);
    float lambda;
    Vec3 e;
    sym3_min_eigen(f.hessian, lambda, e);
    s.strength = -lambda;
    if (!(s.strength >= strength_min)) return WorkStatus::Dead;
    const float d = dot(f.gradient, e) / s.strength;  // −(∇F·e3)/λ3
    const float len = fabsf(d);
    const float step = len > max_step ? (d > 0.f ? max_step : -max_step) : d;
    s.pos = s.pos + e * step;
    if (len < tolerance) return WorkStatus::Stable;
    return s.steps >= max_steps ? WorkStatus::Dead : WorkStatus::Active;
  }

  /// A converged particle: its strength through a black–red–yellow–white ramp (saturating at
  /// strength_scale); a particle still active when the strategy's cap stopped it: grey; dead: black.
  MV_HD Vec3 color(const State& s, WorkStatus st) const {
    if (st == WorkStatus::Dead) return Vec3{0.f};
    if (st != WorkStatus::Stable) return Vec3{0.3f};
    const float t = fminf(s.strength / strength_scale, 1.f) * 3.f;
    return Vec3{fminf(t, 1.f), fminf(fmaxf(t - 1.f, 0.f), 1.f), fminf(fmaxf(t - 2.f, 0.f), 1.f)};
  }
};

static_assert(std::is_trivially_copyable_v<Ridge3dStrands>, "strategies copy workloads to the device");

/// The smallest index-space box holding every sample of the host view `v` whose |value| > threshold,
/// grown by the kernel's radius and clipped to field_box(v, k); the field box when no sample exceeds it.
/// Host only (reads the samples).
void data_support_box(const VolumeView& v, KernelKind k, float threshold, Vec3& lo, Vec3& hi);

/// The converged particles of a ridge3d run as splats seen through `cam` (Lehmann 2023 §4.1.1 shows
/// ridge3d's result as the particles on the ridge surfaces): every Stable particle of `state`/`status` (one
/// per strand, as the run returns them) is a disc of world radius `radius` (world units, > 0) at its
/// position, coloured by w.color (its ridge strength on the black–red–yellow–white ramp) and dimmed with
/// depth from 1 (nearest particle) to 0.45 (farthest) so the surfaces' shapes read; the nearest disc wins
/// each pixel (a depth buffer). Particles behind the eye are skipped. Returns cam.width × cam.height RGBA
/// float (row 0 at the top, alpha 1, background black). Throws std::invalid_argument when the arrays'
/// sizes differ or radius ≤ 0. Host only.
std::vector<float> ridge3d_splats(const Ridge3dStrands& w, const std::vector<Ridge3dStrands::State>& state,
                                  const std::vector<WorkStatus>& status, const RayCamera& cam, float radius);

/// Builds the workload on `volume` (host or device view: only its metadata is read here). Validates `p`
/// and the volume (InputError("ridge3d", "volume…", …) as check_strand_volume words it for the ray casters:
/// no data, fewer than 2R samples on an axis, a singular transform). Throws InputError("ridge3d", field, …).
Ridge3dStrands make_ridge3d(const VolumeView& volume, const Ridge3dParams& p);

}  // namespace mv
