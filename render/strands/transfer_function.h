// Transfer functions of the volume ray casters (Lehmann 2023 §4.1.1's vr-lite-cam and
// illust-vr; Kindlmann, Whitaker, Tasdizen, Möller 2003, "Curvature-based transfer functions for direct
// volume rendering", §4 and Fig. 5).
//
//  1D map (value → colour, opacity): piecewise-linear control points over the scalar value, sampled into
//    a fixed table of kTf1DEntries nodes spanning [first point, last point] (values outside clamp to the
//    ends), read with linear interpolation between nodes. Opacities are given per *reference step* of one
//    voxel (min_spacing, render/strands/volume_ray.h) and corrected at sampling time for the step h the
//    ray actually takes: α_h = 1 − (1 − α)^(h / voxel) (the standard opacity correction; a ray then
//    reaches the same opacity through the same thickness whatever its step).
//  2D map (κ1, κ2 → colour): a table of kTfCurvatureSide² RGB8 nodes over [−κmax, κmax]² (κ clamped),
//    read bilinearly. The default colours follow Koenderink's shape index
//    S = (2/π)·atan2(κ1 + κ2, κ1 − κ2) ∈ [−1, 1] and curvedness C = sqrt((κ1² + κ2²)/2): S = −1 concave
//    elliptic (a cup), −½ concave cylindrical (a valley), 0 hyperbolic (a saddle), +½ convex cylindrical
//    (a ridge), +1 convex elliptic (a cap), fading to the flat colour as C → 0 — Kindlmann 2003 Fig. 5's
//    colouring of the (κ1, κ2) plane by surface class. Signs follow the caller's curvature convention
//    (render/field/curvature.h; illust-vr's Params choose it).
//
// Both tables live inside the workload structs (trivially copyable, no pointers), so a workload built on
// the host is usable on the device as it is: 2 KiB (1D) and 1.2 KiB (2D) of kernel parameters, read by the
// device through the constant bank.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/common.h"
#include "render/math.h"

namespace mv {

/// Nodes of the sampled 1D table.
inline constexpr int kTf1DEntries = 128;
/// Nodes per axis of the sampled curvature table (odd: a node sits at κ = 0).
inline constexpr int kTfCurvatureSide = 17;

/// Colour (linear RGB, [0, 1]) and opacity ([0, 1]).
struct Rgba {
  float r = 0.f, g = 0.f, b = 0.f, a = 0.f;
  MV_HD Vec3 rgb() const { return {r, g, b}; }
};

/// One control point of a 1D transfer function.
struct TfPoint {
  float value = 0.f;  ///< scalar value, field units
  Vec3 color{1.f};    ///< linear RGB, each in [0, 1]
  float opacity = 0.f;  ///< [0, 1], per reference step of one voxel
};

/// A 1D transfer function (host description).
struct TransferFunction1D {
  std::vector<TfPoint> points;  ///< 2…64 points, values finite and strictly increasing

  /// Throws InputError(context, "tf.points[i].<field>", "<v> is out of range …") for a bad point, or
  /// InputError(context, "tf.points", …) for fewer than 2 or more than 64 points.
  void validate(const std::string& context) const;
  /// The piecewise-linear function itself (clamped to the end points), without opacity correction: the
  /// reference the sampled table approximates.
  Rgba eval(float value) const;
};

/// The sampled 1D table: node j at value vmin + j·(vmax − vmin)/(kTf1DEntries − 1).
struct Tf1DTable {
  float vmin = 0.f;
  float scale = 0.f;  ///< (kTf1DEntries − 1)/(vmax − vmin)
  Rgba node[kTf1DEntries];

  /// Linear interpolation between the two nodes around `value`; clamped at the ends (NaN reads node 0).
  MV_HD Rgba lookup(float value) const {
    float x = (value - vmin) * scale;
    x = fminf(fmaxf(x, 0.f), static_cast<float>(kTf1DEntries - 1));
    const int i = x < static_cast<float>(kTf1DEntries - 2) ? static_cast<int>(x) : kTf1DEntries - 2;
    const float f = x - static_cast<float>(i);
    const Rgba& a = node[i];
    const Rgba& b = node[i + 1];
    return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f, a.a + (b.a - a.a) * f};
  }
};

/// Samples `tf` (validated first, with `context` in errors) into a table, opacities corrected for a step
/// of `step_voxels` voxels: α' = 1 − (1 − α)^step_voxels (step_voxels > 0).
Tf1DTable sample_tf1d(const TransferFunction1D& tf, float step_voxels, const std::string& context);

/// Parses a 1D transfer function from JSON text of the form
///   {"about": "…" (optional), "points": [{"value": v, "color": [r, g, b], "opacity": a}, …]}
/// (assets/tf-ch2-vr-lite.json is one), then validates it (TransferFunction1D::validate). Throws
/// InputError(context, field, …) naming the field: "" for text that is not JSON, "tf.points[i].color" and the
/// like for a missing, mistyped or unknown field, and validate()'s messages for a value out of range.
TransferFunction1D parse_tf1d(const std::string& json_text, const std::string& context);
/// parse_tf1d of the file at `path` (the context of its errors); InputError(path, "", …) when it cannot be read.
TransferFunction1D load_tf1d(const std::string& path);

/// The default 1D map for the Colin27 T1 MRI (ch2, uint8 values 0…255): background and noise (< 35)
/// transparent, then skin and soft tissue faint and warm, the bright (fat, white matter, > 100) tissue
/// opaque and pale. The data: assets/tf-ch2-vr-lite.json, embedded in the binary at build time.
TransferFunction1D ch2_vr_lite_tf();
/// illust-vr's default opacity map for ch2: a ramp around the head/air boundary, so the curvature colours
/// show the head's outer surface as Kindlmann 2003's illustrations show isosurfaces (colours unused). The
/// data: assets/tf-ch2-illust.json, embedded in the binary at build time.
TransferFunction1D ch2_illust_tf();

// ---- 2D curvature map ----

/// Surface class of a point with principal curvatures κ1 ≥ κ2 (Kindlmann 2003 §4; bins of Koenderink's
/// shape index S): Flat when the curvedness C < flat_curvedness, else by S: [−1, −5/8) EllipticConcave,
/// [−5/8, −3/8) CylindricalConcave, [−3/8, 3/8] Hyperbolic, (3/8, 5/8] CylindricalConvex, (5/8, 1]
/// EllipticConvex. Elliptic means κ1κ2 > 0 (|S| > ½); the cylindrical bins are the parabolic band
/// around |S| = ½ where one curvature is small against the other.
enum class CurvatureClass : uint8_t {
  Flat = 0,
  EllipticConvex,
  EllipticConcave,
  Hyperbolic,
  CylindricalConvex,
  CylindricalConcave
};
const char* curvature_class_name(CurvatureClass c);

MV_HD inline float shape_index(float k1, float k2) {
  return 0.63661977f * atan2f(k1 + k2, k1 - k2);  // 2/π; κ1 ≥ κ2 keeps the second argument ≥ 0
}
MV_HD inline float curvedness(float k1, float k2) { return sqrtf(0.5f * (k1 * k1 + k2 * k2)); }

MV_HD inline CurvatureClass classify_curvature(float k1, float k2, float flat_curvedness) {
  if (!(curvedness(k1, k2) >= flat_curvedness)) return CurvatureClass::Flat;
  const float s = shape_index(k1, k2);
  if (s > 0.625f) return CurvatureClass::EllipticConvex;
  if (s > 0.375f) return CurvatureClass::CylindricalConvex;
  if (s >= -0.375f) return CurvatureClass::Hyperbolic;
  if (s >= -0.625f) return CurvatureClass::CylindricalConcave;
  return CurvatureClass::EllipticConcave;
}

/// The default curvature colouring (host description): colours at the five shape-index anchors and for
/// flat points; the class colour is reached at curvedness ≥ saturation·kappa_max.
struct CurvatureColors {
  float kappa_max = 0.3f;   ///< table range [−κmax, κmax] (1 / world units), (0, 1e6]; ch2: radius ≈ 3 mm
  float saturation = 0.5f;  ///< (0, 1]
  Vec3 concave{0.15f, 0.35f, 0.95f};   ///< S = −1: cup (blue)
  Vec3 valley{0.1f, 0.8f, 0.85f};      ///< S = −½ (cyan)
  Vec3 saddle{0.3f, 0.85f, 0.25f};     ///< S = 0 (green)
  Vec3 ridge{0.95f, 0.85f, 0.2f};      ///< S = +½ (yellow)
  Vec3 convex{0.95f, 0.3f, 0.2f};      ///< S = +1: cap (red)
  Vec3 flat{0.85f, 0.85f, 0.85f};      ///< C = 0 (light grey)

  /// Throws InputError(context, "curvature.<field>", …) for a range outside the bounds or a colour
  /// channel outside [0, 1].
  void validate(const std::string& context) const;
  /// The colour function the table samples (host reference).
  Vec3 eval(float k1, float k2) const;
};

/// The sampled curvature table: node (a, b) at κ1 = −κmax + a·Δ, κ2 = −κmax + b·Δ,
/// Δ = 2κmax/(kTfCurvatureSide − 1); colours RGB8 packed (R in the low byte).
struct CurvatureTfTable {
  float kappa_max = 1.f;
  float scale = 0.f;  ///< (kTfCurvatureSide − 1)/(2κmax)
  uint32_t node[kTfCurvatureSide * kTfCurvatureSide];  ///< index b·side + a

  MV_HD static Vec3 unpack(uint32_t c) {
    return {static_cast<float>(c & 255u) * (1.f / 255.f), static_cast<float>((c >> 8) & 255u) * (1.f / 255.f),
            static_cast<float>((c >> 16) & 255u) * (1.f / 255.f)};
  }
  /// Bilinear colour at (κ1, κ2), each clamped to [−κmax, κmax] (NaN reads the −κmax edge).
  MV_HD Vec3 lookup(float k1, float k2) const {
    constexpr int n = kTfCurvatureSide;
    float x = (k1 + kappa_max) * scale, y = (k2 + kappa_max) * scale;
    x = fminf(fmaxf(x, 0.f), static_cast<float>(n - 1));
    y = fminf(fmaxf(y, 0.f), static_cast<float>(n - 1));
    const int a = x < static_cast<float>(n - 2) ? static_cast<int>(x) : n - 2;
    const int b = y < static_cast<float>(n - 2) ? static_cast<int>(y) : n - 2;
    const float fx = x - static_cast<float>(a), fy = y - static_cast<float>(b);
    const Vec3 c00 = unpack(node[b * n + a]), c10 = unpack(node[b * n + a + 1]);
    const Vec3 c01 = unpack(node[(b + 1) * n + a]), c11 = unpack(node[(b + 1) * n + a + 1]);
    const Vec3 lo = c00 + (c10 - c00) * fx, hi = c01 + (c11 - c01) * fx;
    return lo + (hi - lo) * fy;
  }
};

/// Samples `c` (validated first) into a table.
CurvatureTfTable sample_curvature_tf(const CurvatureColors& c, const std::string& context);

}  // namespace mv
