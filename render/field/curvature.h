// Principal curvatures of a field's isosurfaces from its gradient and Hessian (Kindlmann, Whitaker,
// Tasdizen, Möller 2003, "Curvature-based transfer functions for direct volume rendering", §3; used by
// illust-vr, Lehmann 2023).
//
// With g = ∇F, H = ∇²F (world space, field.h), unit normal n, P = I − n nᵀ (projection onto the tangent
// plane) and the geometry tensor G = ±P H P / |g|, G has eigenvalue 0 along n and the principal
// curvatures κ1 ≥ κ2 in the tangent plane; with T = trace(G) and F = ‖G‖_F (Frobenius),
//     κ1,2 = (T ± sqrt(max(0, 2F² − T²))) / 2,   mean = (κ1 + κ2)/2 = T/2,   Gaussian = κ1·κ2
// (Kindlmann's formula; principal_curvatures computes the same eigenvalues in a tangent basis, which is
// better conditioned at umbilic points).
//
// Sign convention (megaview's, principal_curvatures): n = +g/|g| points towards increasing values and
// G = +P H P/|g| (= ∇n, the shape operator of that normal field). A surface that is convex as seen from the
// higher values has positive curvature: on a signed distance field that increases outward — the sphere
// |x − c| − r (render/field/analytic.h) — κ1 = κ2 = +1/ρ at distance ρ from the centre, and on a torus's
// outer equator κ = 1/r_minor and 1/(R + r_minor), both positive.
// Kindlmann 2003 takes n = −g/|g| (objects brighter than their background, e.g. CT: values decrease
// outward) and G = −P H P/|g|; principal_curvatures_kindlmann implements that literally. The two are
// related by κ1ᴷ = −κ2, κ2ᴷ = −κ1, i.e. Kindlmann's convention is megaview's applied to −F.
//
// Guard: where |g| ≤ min_gradient (flat regions, the centre of a sphere, the core circle of a torus) the
// normal is undefined; the result is then {0, 0, valid = false}. min_gradient is in field units per world
// unit and defaults to 1e-6; pass something scaled to the data (e.g. 1e-4·range/spacing) for real volumes.
#pragma once

#include <cmath>

#include "render/field/field.h"
#include "render/math.h"

namespace mv {

struct Curvature {
  float k1 = 0.f;  ///< larger principal curvature
  float k2 = 0.f;  ///< smaller principal curvature
  bool valid = false;  ///< false where |∇F| was too small for a normal to exist
  MV_HD float mean() const { return 0.5f * (k1 + k2); }
  MV_HD float gaussian() const { return k1 * k2; }
};

/// κ1 ≥ κ2 of the isosurface of F through the point where ∇F = g, ∇²F = H, megaview's sign
/// convention (normal towards increasing values; a sphere's distance field gives +1/r).
///
/// Evaluation: rather than Kindlmann's κ = (T ± sqrt(2F² − T²))/2 on the 3×3 G — whose discriminant is
/// a difference of two nearly equal numbers at umbilic points (a sphere: 2F² = T²), so float rounding
/// ε becomes an error ~ sqrt(ε)·|κ| ≈ 3e-4·|κ| — G is written in an orthonormal tangent basis t1, t2 of n
/// (math.h's onb), [[a, b], [b, c]] with a = t1ᵀHt1/|g|, b = t1ᵀHt2/|g|, c = t2ᵀHt2/|g|, and
/// κ1,2 = (a + c)/2 ± sqrt(((a − c)/2)² + b²): the same eigenvalues, with errors of order ε·|κ|.
MV_HD inline Curvature principal_curvatures(Vec3 g, const Sym3& H, float min_gradient = 1e-6f) {
  Curvature c;
  const float len = length(g);
  if (!(len > min_gradient) || !(len < INFINITY)) return c;
  const Vec3 n = g * (1.f / len);
  Vec3 t1, t2;
  onb(n, t1, t2);
  const float s = 1.f / len;
  const Vec3 h1 = H * t1;
  const float a = dot(t1, h1) * s, b = dot(t2, h1) * s, d = dot(t2, H * t2) * s;
  const float mean = 0.5f * (a + d), half = 0.5f * (a - d);
  const float root = sqrtf(half * half + b * b);
  c.k1 = mean + root;
  c.k2 = mean - root;
  c.valid = true;
  return c;
}

/// Kindlmann 2003's literal convention: n = −g/|g|, G = −P H P/|g| (objects brighter than their
/// surroundings have positive curvature where convex). Equals principal_curvatures(−g, −H).
MV_HD inline Curvature principal_curvatures_kindlmann(Vec3 g, const Sym3& H, float min_gradient = 1e-6f) {
  const Curvature c = principal_curvatures(g, H, min_gradient);
  Curvature r;
  r.k1 = -c.k2;
  r.k2 = -c.k1;
  r.valid = c.valid;
  return r;
}

}  // namespace mv
