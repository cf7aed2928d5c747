// Analytic scalar functions of world position with their exact gradients and Hessians, and volumes
// sampled from them on a grid with any index → world transform (item 2: "analytic volumes
// (sphere distance, a torus, a quadratic) for tests"). Host only: they make test and demo volumes and
// the reference values the reconstructed fields (field.h) and curvatures (curvature.h) are checked
// against.
//
// Functions (x a world position, lengths in world units):
//   SphereDistance  d(x) = |x − c| − r: signed distance to a sphere, negative inside. ∇d = n = (x − c)/ρ,
//                   ∇²d = (I − n nᵀ)/ρ with ρ = |x − c|; every level set is a sphere, κ1 = κ2 = 1/ρ
//                   (curvature.h's sign convention). Undefined (gradient-free) at the centre.
//   TorusDistance   d(x) = |x − γ(x)| − r: signed distance to the torus of major radius R (core circle
//                   of radius R around `axis` through c) and minor radius r; γ(x) is the nearest point
//                   of the core circle. With s = |x − γ|, u = (x − γ)/s, e_φ the unit tangent of the
//                   circle of revolution through x and ρ_a the distance of x from the axis:
//                   ∇d = u, ∇²d = (I − u uᵀ − e_φ e_φᵀ)/s + (u·e_ρ)/ρ_a · e_φ e_φᵀ (meridian curvature
//                   1/s, parallel curvature (u·e_ρ)/ρ_a of a surface of revolution). On the outer
//                   equator (ρ_a = R + s) κ1 = 1/s, κ2 = 1/(R + s); on the inner equator κ2 = −1/(R − s).
//                   Undefined on the core circle (s = 0) and on the axis (ρ_a = 0).
//   Quadratic       q(x) = xᵀQx + bᵀx + c (Q symmetric): ∇q = 2Qx + b, ∇²q = 2Q.
//
// Values are computed in double and rounded to float once.
#pragma once

#include <string>

#include "render/field/field.h"
#include "render/field/volume.h"
#include "render/math.h"

namespace mv {

/// Signed distance to a sphere of centre `centre` and radius `radius` (> 0).
struct SphereDistance {
  Vec3 centre{0.f};
  float radius = 1.f;
  double value(double x, double y, double z) const;
  /// Value, gradient and Hessian; gradient and Hessian are zero at the centre (where they do not exist).
  FieldSample eval(Vec3 world) const;
  std::string describe() const;
};

/// Signed distance to a torus around the unit vector `axis` through `centre`, with major radius `major`
/// (R > 0, the core circle's) and minor radius `minor` (r > 0, the tube's).
struct TorusDistance {
  Vec3 centre{0.f};
  Vec3 axis{0.f, 0.f, 1.f};  ///< unit length (eval normalises it)
  float major = 2.f;
  float minor = 0.5f;
  double value(double x, double y, double z) const;
  /// Value, gradient and Hessian; gradient and Hessian are zero on the core circle and the axis.
  FieldSample eval(Vec3 world) const;
  std::string describe() const;
};

/// The quadratic xᵀQx + bᵀx + c in world coordinates.
struct Quadratic {
  Sym3 Q;
  Vec3 b{0.f};
  float c = 0.f;
  double value(double x, double y, double z) const;
  FieldSample eval(Vec3 world) const;
  std::string describe() const;
};

/// Index → world transform world = R·diag(spacing)·index + origin, with R the rotation by
/// `angle_rad` about `axis` (right-handed; axis need not be unit length, zero angle: no rotation).
/// spacing > 0 per axis (world units per index step).
Affine3 grid_transform(Vec3 spacing, Vec3 origin, Vec3 axis = {0.f, 0.f, 1.f}, float angle_rad = 0.f);

/// Like grid_transform, with the origin chosen so that the grid's centre, index ((n−1)/2 per axis),
/// lands on world position `centre`.
Affine3 centred_grid(int nx, int ny, int nz, Vec3 spacing, Vec3 centre, Vec3 axis = {0.f, 0.f, 1.f},
                     float angle_rad = 0.f);

/// The nx×ny×nz volume of f's values at the world positions index_to_world.apply(i, j, k) (computed in
/// double from the transform's float entries). source = f.describe() + the grid size. Any of
/// SphereDistance, TorusDistance, Quadratic (or a type with the same value() and describe()).
/// Throws InputError("analytic", "dimensions", ...) for a non-positive size.
template <class F>
Volume sample_volume(const F& f, int nx, int ny, int nz, const Affine3& index_to_world);

// Explicit instantiations live in analytic.cpp.
extern template Volume sample_volume<SphereDistance>(const SphereDistance&, int, int, int, const Affine3&);
extern template Volume sample_volume<TorusDistance>(const TorusDistance&, int, int, int, const Affine3&);
extern template Volume sample_volume<Quadratic>(const Quadratic&, int, int, int, const Affine3&);

}  // namespace mv
