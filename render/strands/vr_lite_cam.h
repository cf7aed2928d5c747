// The `vr-lite-cam` strand workload: Diderot's Phong-shaded direct volume renderer (Lehmann 2023 §4.1.1
// and Fig 3.2: 165,600 strands, i.e. a 460 × 360 image; Appendix A.5).
//
// One strand per pixel of a pinhole camera; one update is one step along the pixel's ray
// (render/strands/volume_ray.h), from the camera's near plane to its far plane as Diderot's program marches
// it: where Diderot's inside(x, F) holds, probe the field F = V ⊛ kernel (ctmr by default) for value and
// gradient at x(t_k), classify the value through the 1D transfer function (opacity corrected for the
// step), shade with a headlight (Phong with the light at the eye: l = −d, so the half vector is l too),
//     c_shaded = c·(ka + kd·|n·l|) + ks·|n·l|^shininess,   n = ∇F/|∇F|   (two-sided),
// where |∇F| ≤ min_gradient gives c·(ka + kd) (no normal), and composite front to back. The strand
// stabilizes after its sample on the far plane, or once the accumulated opacity reaches opacity_threshold
// (early ray termination). Strands never die. Step counts: samples taken, the ones outside the field
// included. With RayMarch::Clip the ray is clipped to the field box instead, and a ray that misses the
// box stabilizes at its first update without sampling.
//
// Parameters for ch2 (Lehmann 2023 Fig 3.2: μ 457.9, CV 0.679): ch2_camera(), step 0.5 voxel, threshold
// 0.95, ch2_vr_lite_tf(), planes at −147 and +246 mm from the look-at point (787 samples per full ray):
// μ 458.16, σ 310.65, CV 0.678 over all 165,600 strands on the CPU (docs/volume-strands.md).
//
// Units: positions, steps and the camera are in the volume's world units (mm for ch2); step_voxels is in
// units of the smallest voxel spacing; gradients are field units per world unit.
//
// Device use: build with a VolumeView whose data pointer is on the device (render/field/device_volume.h);
// the struct is trivially copyable (view, camera frame, embedded tables; ~2.3 KiB) and update() allocates
// nothing. color() reads only the state, so the host may colour a device run's downloaded states.
// CPU and GPU differ by floating-point contraction (FMA) in the probe, so they agree to rounding, not bit
// for bit: a strand whose accumulated opacity lands within rounding of the threshold may take a step more
// or less (tests/test_volume_strands_gpu.cu states and checks the bounds).
#pragma once

#include <string>
#include <type_traits>

#include "render/field/field.h"
#include "render/strands/strand.h"
#include "render/strands/transfer_function.h"
#include "render/strands/volume_ray.h"

namespace mv {

/// vr-lite-cam's shading terms (Phong with a headlight), shared by the parameters and the workload.
struct VrLiteCamShading {
  float ka = 0.2f, kd = 0.8f, ks = 0.2f;  ///< Phong weights, each [0, 4]
  uint32_t shininess = 16;                ///< Phong exponent, [1, 1024]
  float min_gradient = 1e-6f;             ///< |∇F| below this is unshaded, [0, ∞)
};

struct VrLiteCamParams : VrLiteCamShading {
  uint32_t width = 460, height = 360;   ///< strands (pixels), [1, 16384] each
  PinholeCamera camera = ch2_camera();  ///< world units
  KernelKind kernel = KernelKind::Ctmr;
  float step_voxels = 0.5f;             ///< step along the ray in voxels (smallest spacing), (0, 16]
  float opacity_threshold = 0.95f;      ///< early ray termination, (0, 1]
  TransferFunction1D tf = ch2_vr_lite_tf();
  Vec3 background{0.f};                 ///< linear RGB behind the volume, [0, 1]
  RayMarch march = RayMarch::Planes;    ///< near to far plane, as Diderot's program (volume_ray.h)
  /// Planes: depths of the near and far plane from the look-at point, world units (volume_ray.h). With
  /// ch2_camera() and step 0.5 every ray takes at most ⌊393/0.5⌋ + 1 = 787 samples; the planes were chosen
  /// so the step statistics on ch2 match Lehmann 2023 Fig 3.2 (docs/volume-strands.md).
  float near_depth = -147.f, far_depth = 246.f;

  /// Throws InputError("vr-lite-cam", "<field>", "<value> is out of range …") for any field out of range:
  /// the ray-casting fields first (validate_volume_ray), then the shading ones.
  void validate() const;
};

struct VrLiteCam : VrLiteCamShading {
  using State = RayState;
  /// Highest derivative of the field a sample probes (the gradient).
  static constexpr int kDerivatives = 1;
  /// The Diderot program's name: the context of its parameters' errors.
  static constexpr const char* kName = "vr-lite-cam";

  VolumeRayCaster ray;  ///< volume, field box, camera, kernel, step, threshold, background, 1D table

  MV_HD uint32_t num_strands() const { return ray.num_strands(); }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }

  MV_HD State init(uint32_t index) const { return ray.start(index); }

  /// Shaded colour (rgb) and step-corrected opacity (a) of the sample at world position `pos` seen along
  /// the unit direction `dir`.
  MV_HD Rgba sample(Vec3 pos, Vec3 dir) const {
    const FieldSample f = probe(ray.vol, ray.kernel, pos, kDerivatives);
    Rgba c = ray.tf.lookup(f.value);
    if (!(c.a > 0.f)) return c;
    const float len = length(f.gradient);
    float shade = ka + kd, spec = 0.f;
    if (len > min_gradient) {
      const float ndl = fabsf(dot(f.gradient, dir)) / len;
      shade = ka + kd * ndl;
      spec = ks * ipowf(ndl, shininess);
    }
    return {c.r * shade + spec, c.g * shade + spec, c.b * shade + spec, c.a};
  }

  MV_HD WorkStatus update(State& s) const {
    if (ray_missed(s)) return WorkStatus::Stable;
    const Vec3 pos = ray.sample_position(s);
    if (ray.probes(pos)) {
      const Rgba c = sample(pos, s.dir);
      if (c.a > 0.f) composite(s, c.rgb(), c.a);
    }
    return ray.advance(s) ? WorkStatus::Stable : WorkStatus::Active;
  }

  MV_HD Vec3 color(const State& s, WorkStatus) const { return ray.final_color(s); }
};

static_assert(std::is_trivially_copyable_v<VrLiteCam>, "strategies copy workloads to the device");
static_assert(std::is_trivially_copyable_v<VrLiteCam::State>, "strand state lives in flat arrays");

/// Builds the workload on `volume` (host view for the CPU, device view for the GPU: only its metadata is
/// read here). Validates `p` and the volume (check_strand_volume); the ray caster is
/// make_volume_ray_caster(volume, volume_ray_spec(p, kDerivatives)), so the step in world units is
/// p.step_voxels · min_spacing(volume). Throws InputError("vr-lite-cam", field, …).
VrLiteCam make_vr_lite_cam(const VolumeView& volume, const VrLiteCamParams& p);

}  // namespace mv
