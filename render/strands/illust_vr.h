// The `illust-vr` strand workload: curvature-based illustrative volume rendering (Kindlmann, Whitaker,
// Tasdizen, Möller 2003, "Curvature-based transfer functions for direct volume rendering"; Lehmann 2023
// §4.1.1 and Fig 3.2: 307,200 strands, a 640 × 480 image; Appendix A.1).
//
// One strand per pixel, one update per ray step from the near to the far plane as in vr-lite-cam
// (render/strands/volume_ray.h; probes gated by Diderot's inside(x, F)), but each sample probes value,
// gradient g and Hessian H (bspln3 by default: C2, so the curvature is continuous) and computes:
//  - principal curvatures κ1 ≥ κ2 of the isosurface (render/field/curvature.h), in Kindlmann's convention
//    by default (bright objects on a dark background are convex: n = −g/|g|), or megaview's (n = +g/|g|,
//    the sign of a distance field that increases outward);
//  - colour from the 2D (κ1, κ2) transfer function (render/strands/transfer_function.h: surface classes
//    by shape index, Kindlmann 2003 Fig. 5), shaded by a headlight: colour·(ka + kd·|n·d|);
//  - opacity from the 1D map of the value (its colours are not used), step-corrected;
//  - contours (Kindlmann 2003 §5, thickness-controlled): with v = d the view direction, v_t = v − (v·n)n
//    its tangential part and κ_v = v_tᵀ H v_t / (|g|·|v_t|²) the normal curvature along it, a point is on
//    the contour when |n·v| ≤ sqrt(T·κ(2 − T·κ)), κ = min(|κ_v|, 1/T), T = contour_thickness (world
//    units): the band of points within image distance T of the silhouette of the osculating circle, so
//    lines keep a constant thickness where the surface bends sharply or gently. |κ_v| (not κ_v > 0 as in
//    the paper, which assumes one sign convention) also draws valleys seen edge-on. The contour weight is
//    w = clamp((1 − |n·v|/sqrt(T·κ(2 − T·κ)))/0.25, 0, 1) (a soft inner edge) and darkens:
//    colour ← colour·(1 − s·w) + contour_color·s·w, s = contour_strength.
//  Where |g| ≤ min_gradient no normal exists: the flat colour, unshaded (ka + kd), no contour.
// Composited front to back with early termination at opacity_threshold; never dies.
//
// Parameters for ch2 (Lehmann 2023 Fig 3.2: μ 775.9, CV 0.488): ch2_camera(), step 0.5 voxel, threshold
// 0.95, ch2_illust_tf(), planes at −277 and +310 mm from the look-at point (1175 samples per full ray):
// μ 775.50, σ 378.91, CV 0.489 over all 307,200 strands on the CPU (docs/volume-strands.md).
//
// Device use and CPU/GPU agreement: as vr-lite-cam (trivially copyable, ~3.5 KiB; color() reads only the
// state).
#pragma once

#include <string>
#include <type_traits>

#include "render/field/curvature.h"
#include "render/field/field.h"
#include "render/strands/strand.h"
#include "render/strands/transfer_function.h"
#include "render/strands/volume_ray.h"

namespace mv {

/// Which way curvature signs point (render/field/curvature.h).
enum class CurvatureConvention : uint8_t {
  Kindlmann = 0,  ///< n = −∇F/|∇F|: objects brighter than their surroundings are convex (MRI, CT)
  Megaview = 1,   ///< n = +∇F/|∇F|: a distance field increasing outward is convex (κ = +1/r on a sphere)
};

/// illust-vr's shading and contour terms, shared by the parameters and the workload.
struct IllustVrStyle {
  CurvatureConvention convention = CurvatureConvention::Kindlmann;
  float contour_thickness = 1.5f;       ///< T, world units, [0, 1e6] (0: no contours)
  float contour_strength = 0.85f;       ///< [0, 1]
  Vec3 contour_color{0.f};              ///< [0, 1] per channel
  float ka = 0.3f, kd = 0.7f;           ///< headlight weights, each [0, 4]
  float min_gradient = 1e-3f;           ///< |∇F| at or below this has no normal, [0, ∞)
};

struct IllustVrParams : IllustVrStyle {
  uint32_t width = 640, height = 480;   ///< strands (pixels), [1, 16384] each
  PinholeCamera camera = ch2_camera();  ///< world units
  KernelKind kernel = KernelKind::Bspln3;  ///< ctmr or bspln3 (tent has no Hessian)
  float step_voxels = 0.5f;             ///< (0, 16]
  float opacity_threshold = 0.95f;      ///< (0, 1]
  TransferFunction1D tf = ch2_illust_tf();  ///< opacity from the value (colours unused)
  CurvatureColors curvature;            ///< the 2D (κ1, κ2) map; κ in 1/world units
  Vec3 background{1.f};                 ///< [0, 1] per channel (white, like an illustration)
  RayMarch march = RayMarch::Planes;    ///< near to far plane, as Diderot's program (volume_ray.h)
  /// Planes: depths of the near and far plane from the look-at point, world units (volume_ray.h). With
  /// ch2_camera() and step 0.5 every ray takes at most ⌊587/0.5⌋ + 1 = 1175 samples; the planes were chosen
  /// so the step statistics on ch2 match Lehmann 2023 Fig 3.2 (docs/volume-strands.md).
  float near_depth = -277.f, far_depth = 310.f;

  /// Throws InputError("illust-vr", "<field>", "<value> is out of range …"), or for kernel tent
  /// InputError("illust-vr", "kernel", "tent has no usable Hessian …"): the ray-casting fields first
  /// (validate_volume_ray), then the curvature, contour and shading ones.
  void validate() const;
};

/// What one illust-vr sample computes (exposed for tests and tools).
struct IllustSample {
  Vec3 rgb{0.f};     ///< shaded and contour-darkened colour
  float alpha = 0.f; ///< step-corrected opacity
  Curvature curv;    ///< κ1 ≥ κ2 in the workload's convention (valid = false: no normal)
  float contour = 0.f;  ///< contour weight w in [0, 1]
};

struct IllustVr : IllustVrStyle {
  using State = RayState;
  /// Highest derivative of the field a sample probes (the Hessian, for the curvatures).
  static constexpr int kDerivatives = 2;
  /// The Diderot program's name: the context of its parameters' errors.
  static constexpr const char* kName = "illust-vr";

  VolumeRayCaster ray;  ///< volume, field box, camera, kernel, step, threshold, background, opacity table
  Vec3 flat_color{0.85f};
  CurvatureTfTable curvature_tf;

  MV_HD uint32_t num_strands() const { return ray.num_strands(); }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }
  MV_HD State init(uint32_t index) const { return ray.start(index); }

  /// The sample at world position `pos` seen along the unit direction `dir`. Curvature and colour are
  /// only computed where the opacity is positive (else rgb = 0, curv invalid).
  MV_HD IllustSample sample(Vec3 pos, Vec3 dir) const {
    IllustSample r;
    const FieldSample f = probe(ray.vol, ray.kernel, pos, kDerivatives);
    r.alpha = ray.tf.lookup(f.value).a;
    if (!(r.alpha > 0.f)) return r;
    r.curv = principal_curvatures(f.gradient, f.hessian, min_gradient);
    if (!r.curv.valid) {
      r.rgb = flat_color * (ka + kd);
      return r;
    }
    if (convention == CurvatureConvention::Kindlmann) {
      const float k1 = -r.curv.k2, k2 = -r.curv.k1;
      r.curv.k1 = k1;
      r.curv.k2 = k2;
    }
    const float len = length(f.gradient);
    const Vec3 n = f.gradient * (1.f / len);
    const float ndv = dot(n, dir), andv = fabsf(ndv);
    Vec3 c = curvature_tf.lookup(r.curv.k1, r.curv.k2) * (ka + kd * andv);
    if (contour_thickness > 0.f) {
      const float vt2 = 1.f - ndv * ndv;
      if (vt2 > 1e-6f) {
        const Vec3 vt = dir - n * ndv;
        const float kv = fabsf(dot(vt, f.hessian * vt)) / (len * vt2);
        const float kappa = fminf(kv, 1.f / contour_thickness);
        const float band = sqrtf(contour_thickness * kappa * (2.f - contour_thickness * kappa));
        if (band > 0.f) r.contour = fminf(fmaxf((1.f - andv / band) * 4.f, 0.f), 1.f);
      }
    }
    const float w = contour_strength * r.contour;
    r.rgb = c * (1.f - w) + contour_color * w;
    return r;
  }

  MV_HD WorkStatus update(State& s) const {
    if (ray_missed(s)) return WorkStatus::Stable;
    const Vec3 pos = ray.sample_position(s);
    if (ray.probes(pos)) {
      const IllustSample c = sample(pos, s.dir);
      if (c.alpha > 0.f) composite(s, c.rgb, c.alpha);
    }
    return ray.advance(s) ? WorkStatus::Stable : WorkStatus::Active;
  }

  MV_HD Vec3 color(const State& s, WorkStatus) const { return ray.final_color(s); }
};

static_assert(std::is_trivially_copyable_v<IllustVr>, "strategies copy workloads to the device");

/// Builds the workload on `volume` (host or device view; only metadata is read); the ray caster is
/// make_volume_ray_caster(volume, volume_ray_spec(p, kDerivatives)). Throws InputError("illust-vr", field,
/// …) for bad parameters or a volume check_strand_volume refuses.
IllustVr make_illust_vr(const VolumeView& volume, const IllustVrParams& p);

}  // namespace mv
