// What the volume ray-casting strands share (vr-lite-cam, illust-vr; Lehmann 2023 §4.1.1): a pinhole
// camera, one ray per pixel, sample positions along the ray and front-to-back compositing. Everything that
// runs per strand is MV_HD and allocation-free; the host helpers (validation, orbit cameras) are in
// volume_ray.cpp.
//
// Ray parameterisation (RayMarch). Strand (pixel) i, j casts a ray along the unit world direction d.
//  - Planes (the default, what Diderot's vr-lite-cam and illust-vr programs do): the ray runs from the
//    camera's near plane to its far plane, both perpendicular to the view axis w at signed depths
//    near_depth and far_depth from the look-at point. The ray parameter t is the depth along w, so the
//    sample positions are x(t_k) = eye + t_k·d/(d·w), t_k = z_near + k·h, k = 0, 1, … while t_k ≤ z_far,
//    and every ray that is not terminated early takes the same number of samples,
//    ⌊(far_depth − near_depth)/h⌋ + 1. The ray is not clipped to the volume: Diderot's `inside(x, F)`
//    (render/field/field.h) gates each probe, and a sample outside contributes nothing.
//  - Clip (a cheaper variant, kept for the tests and for comparison): t is the world distance from the
//    eye and the ray is clipped to the *field box*, the index-space box where every tap of the
//    reconstruction kernel lies in the grid, R − 1 ≤ p ≤ n − R per axis for a kernel of radius R. Because
//    index = A·(world − o) is affine, t is the same parameter in index space, so the clip is a slab test
//    on A·eye + t·A·d. Samples are taken at t_k = t_enter + k·h while t_k ≤ t_exit; a ray that misses the
//    box, or whose box lies behind the eye, has no samples (it stabilises at its first update). A camera
//    inside the box starts at t = 0.
//
// Compositing (front to back, colours not premultiplied in the transfer functions): with accumulated
// colour C and opacity A, a sample of colour c and opacity α gives C += (1 − A)·α·c, A += (1 − A)·α. The
// opacity α is the transfer function's, given per voxel, corrected for the step h (in voxels) as Diderot's
// volume renderers do: α ← 1 − (1 − α)^h (render/strands/transfer_function.h; Planes uses the nominal
// step h, not the up to 1/cos(fov/2) longer world step of an off-axis ray). The strand's final colour is
// C + (1 − A)·background. Early ray termination stops at A ≥ a threshold (transparency 1 − A below
// 1 − threshold).
//
// VolumeRayCaster bundles all of this for one image: the volume, its field box, the resolved camera, the
// march and its planes, the kernel, the step, the threshold, the background and the step-corrected 1D
// transfer function. The volume workloads embed it as `ray` and add only their own shading;
// make_volume_ray_caster builds and validates it from a VolumeRaySpec (volume_ray_spec reads one off a
// workload's Params).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "render/field/field.h"
#include "render/field/kernel.h"
#include "render/field/volume.h"
#include "render/math.h"
#include "render/strands/transfer_function.h"

namespace mv {

/// How a ray is sampled (see the file comment).
enum class RayMarch : uint8_t {
  Planes = 0,  ///< near plane to far plane at a fixed depth step, probes gated by `inside` (Diderot)
  Clip = 1,    ///< clipped to the field box
};

/// A pinhole camera in world units (millimetres for medical volumes). `up` need not be orthogonal to the
/// view direction, only not parallel to it. fov_deg is the vertical field of view, (0, 180).
struct PinholeCamera {
  Vec3 eye{0.f, 0.f, 10.f};
  Vec3 look_at{0.f};
  Vec3 up{0.f, 1.f, 0.f};
  float fov_deg = 30.f;
};

/// The camera resolved for one image: orthonormal right u, up v, forward w (u = w × up normalised,
/// v = u × w), and the half-height of the image plane at distance 1.
struct RayCamera {
  Vec3 eye{0.f}, u{1.f, 0.f, 0.f}, v{0.f, 1.f, 0.f}, w{0.f, 0.f, -1.f};
  float tan_half = 0.f;  ///< tan(fov/2)
  uint32_t width = 1, height = 1;

  /// Unit direction through the centre of pixel (i, j), j = 0 the top row, square pixels. The image-plane
  /// coordinates are computed as (2i + 1 − W)/H and (H − 2j − 1)/H, so mirrored pixels get exactly
  /// negated coordinates (a centred camera gives a mirror-symmetric ray set).
  MV_HD Vec3 ray_dir(uint32_t i, uint32_t j) const {
    const float inv_h = 1.f / static_cast<float>(height);
    const float x = (static_cast<float>(2 * i + 1) - static_cast<float>(width)) * inv_h * tan_half;
    const float y = (static_cast<float>(height) - static_cast<float>(2 * j + 1)) * inv_h * tan_half;
    return normalize(w + u * x + v * y);
  }
};

/// The field box of `v` for kernel `k` in index space: [R − 1, n − R] per axis (empty when an axis has
/// fewer than 2R − 1 samples; make_* factories refuse that).
struct IndexBox {
  Vec3 lo{0.f}, hi{0.f};
};
MV_HD inline IndexBox field_box(const VolumeView& v, KernelKind k) {
  const float r = static_cast<float>(kernel_radius(k));
  return {Vec3{r - 1.f}, Vec3{static_cast<float>(v.nx) - r, static_cast<float>(v.ny) - r, static_cast<float>(v.nz) - r}};
}

/// Parametric interval [t_enter, t_exit] (t ≥ 0) of the ray eye + t·dir inside `box` (index space of
/// `v`). Returns false when the ray misses the box or the box is behind the eye.
MV_HD inline bool clip_ray(const VolumeView& v, const IndexBox& box, Vec3 eye, Vec3 dir, float& t_enter,
                           float& t_exit) {
  const Vec3 o = v.world_to_index.apply(eye);
  const Vec3 d = v.world_to_index.linear(dir);
  float tn = 0.f, tf = 3.0e38f;
  for (int a = 0; a < 3; ++a) {
    const float oa = o[a], da = d[a], lo = box.lo[a], hi = box.hi[a];
    if (fabsf(da) < 1e-20f) {  // parallel to the slab: inside it or never
      if (oa < lo || oa > hi) return false;
      continue;
    }
    const float inv = 1.f / da;
    const float t1 = (lo - oa) * inv, t2 = (hi - oa) * inv;
    tn = fmaxf(tn, fminf(t1, t2));
    tf = fminf(tf, fmaxf(t1, t2));
  }
  t_enter = tn;
  t_exit = tf;
  return tn <= tf;
}

/// The ray part of a ray-casting strand's state: direction, sample index and the interval of t (Clip:
/// the clipped one, t_enter > t_exit: no samples; Planes: the planes' depths), and what has been
/// composited so far.
struct RayState {
  Vec3 dir{0.f};         ///< unit world direction
  float t_enter = 1.f;   ///< first sample's t (world units: Clip, distance from the eye; Planes, depth)
  float t_exit = 0.f;    ///< last t a sample may have
  float scale = 1.f;     ///< world distance from the eye per unit of t: 1 (Clip) or 1/(d·w) (Planes)
  uint32_t k = 0;        ///< samples taken
  Vec3 color{0.f};       ///< composited colour C
  float alpha = 0.f;     ///< composited opacity A
};

/// Starts the ray of pixel (i, j) for RayMarch::Planes: samples at depths z_near … z_far from the eye.
MV_HD inline RayState start_ray_planes(const RayCamera& cam, uint32_t i, uint32_t j, float z_near, float z_far) {
  RayState s;
  s.dir = cam.ray_dir(i, j);
  s.t_enter = z_near;
  s.t_exit = z_far;
  s.scale = 1.f / dot(s.dir, cam.w);
  return s;
}

/// Starts the ray of pixel (i, j) for RayMarch::Clip (see clip_ray).
MV_HD inline RayState start_ray(const VolumeView& v, const IndexBox& box, const RayCamera& cam, uint32_t i,
                                uint32_t j) {
  RayState s;
  s.dir = cam.ray_dir(i, j);
  float tn = 1.f, tf = 0.f;
  if (clip_ray(v, box, cam.eye, s.dir, tn, tf)) {
    s.t_enter = tn;
    s.t_exit = tf;
  }
  return s;
}

/// True when the ray has no samples at all (missed the box).
MV_HD MV_INLINE bool ray_missed(const RayState& s) { return !(s.t_enter <= s.t_exit); }

/// t of sample k: t_enter + k·h.
MV_HD MV_INLINE float ray_t(const RayState& s, float h) { return s.t_enter + static_cast<float>(s.k) * h; }

/// Front-to-back "over": C += (1 − A)·α·c, A += (1 − A)·α.
MV_HD MV_INLINE void composite(RayState& s, Vec3 c, float a) {
  const float w = (1.f - s.alpha) * a;
  s.color += c * w;
  s.alpha += w;
}

/// After compositing sample k: counts it and says whether the ray is done (the next sample would lie
/// beyond t_exit, or A ≥ threshold: early ray termination).
MV_HD MV_INLINE bool advance_ray(RayState& s, float h, float threshold) {
  ++s.k;
  return s.alpha >= threshold || ray_t(s, h) > s.t_exit;
}

/// C + (1 − A)·background.
MV_HD MV_INLINE Vec3 ray_final_color(const RayState& s, Vec3 background) {
  return s.color + background * (1.f - s.alpha);
}

/// x^n for a small integer n by repeated squaring (exact same operations on host and device; powf's
/// rounding differs between them).
MV_HD MV_INLINE float ipowf(float x, uint32_t n) {
  float r = 1.f;
  while (n) {
    if (n & 1u) r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

/// The ray-casting part of a volume strand workload, shared by vr-lite-cam and illust-vr (each embeds one
/// as `ray`): one strand per pixel of `cam`, samples every `step` along the pixel's ray (from the near to
/// the far plane, or clipped to `box`: `march`), composited front to back until A ≥ `threshold`, then
/// over `background`. Built by
/// make_volume_ray_caster; trivially copyable (no pointers but the volume's samples), so a host-built one
/// is usable on the device as it is (~2.3 KiB, most of it the 1D table).
struct VolumeRayCaster {
  VolumeView vol;                        ///< the volume (samples on the host or the device; world ↔ index)
  IndexBox box;                          ///< field_box(vol, kernel): Clip's rays are clipped to it (index space)
  RayCamera cam;                         ///< the rays: cam.width × cam.height strands, world units
  RayMarch march = RayMarch::Planes;     ///< how rays are sampled
  float z_near = 0.f, z_far = 0.f;       ///< Planes: depths of the near and far plane from the eye, world units
  KernelKind kernel = KernelKind::Ctmr;  ///< reconstruction kernel of every probe
  float step = 0.5f;                     ///< world units between samples (step_voxels · min_spacing(vol)), > 0
  float threshold = 0.95f;               ///< early ray termination at accumulated opacity ≥ threshold, (0, 1]
  Vec3 background{0.f};                  ///< linear RGB behind the volume, [0, 1] per channel
  Tf1DTable tf;                          ///< value → colour and opacity, opacity corrected for `step`

  /// Strands: one per pixel, index = j·width + i (the pixel index itself).
  MV_HD uint32_t num_strands() const { return cam.width * cam.height; }
  /// The ray of strand `index` (pixel index % width, index / width), before its first sample.
  MV_HD RayState start(uint32_t index) const {
    const uint32_t i = index % cam.width, j = index / cam.width;
    return march == RayMarch::Planes ? start_ray_planes(cam, i, j, z_near, z_far) : start_ray(vol, box, cam, i, j);
  }
  /// World position of the ray's next sample k: eye + t_k·scale·dir (t_k = ray_t(s, step)).
  MV_HD Vec3 sample_position(const RayState& s) const {
    const float t = ray_t(s, step);
    return cam.eye + s.dir * (t * s.scale);
  }
  /// Whether a sample at world position `pos` is probed: Diderot's inside(pos, F) for Planes; always for
  /// Clip, whose samples lie in the field box by construction.
  MV_HD bool probes(Vec3 pos) const { return march == RayMarch::Clip || inside(vol, kernel, pos); }
  /// Counts the sample just composited; true when the ray is done (advance_ray with step and threshold).
  MV_HD bool advance(RayState& s) const { return advance_ray(s, step, threshold); }
  /// The strand's colour: C + (1 − A)·background.
  MV_HD Vec3 final_color(const RayState& s) const { return ray_final_color(s, background); }
};

static_assert(std::is_trivially_copyable_v<VolumeRayCaster>, "volume workloads embed it and are copied to the device");

/// What make_volume_ray_caster builds from: the ray-casting fields of a volume workload's parameters
/// (VrLiteCamParams and IllustVrParams have them under the same names; volume_ray_spec copies them).
struct VolumeRaySpec {
  uint32_t width = 1, height = 1;        ///< strands (pixels), [1, 16384] each
  PinholeCamera camera;                  ///< world units (make_ray_camera's checks)
  KernelKind kernel = KernelKind::Ctmr;  ///< must have `derivatives` (kernel_max_derivative)
  int derivatives = 1;                   ///< highest derivative the workload probes: 1 (gradient) or 2 (Hessian)
  float step_voxels = 0.5f;              ///< step along the ray in voxels (smallest spacing), (0, 16]
  float opacity_threshold = 0.95f;       ///< early ray termination, (0, 1]
  TransferFunction1D tf;                 ///< value → colour, opacity per voxel (TransferFunction1D::validate)
  Vec3 background{0.f};                  ///< linear RGB behind the volume, [0, 1] per channel
  RayMarch march = RayMarch::Planes;     ///< how rays are sampled
  /// Planes: signed depths of the near and far plane from the look-at point, world units, finite,
  /// near_depth < far_depth and the far plane in front of the eye (distance + far_depth > 0). A near plane
  /// behind the eye (a camera zoomed in past it) is moved to the eye: depth 0.
  float near_depth = -1.f, far_depth = 1.f;
};

/// The VolumeRaySpec of a workload's parameters `p` (a struct with width, height, camera, kernel,
/// step_voxels, opacity_threshold, tf, background, march, near_depth and far_depth, as VolumeRaySpec
/// documents them) for a workload
/// that probes up to `derivatives`.
template <class Params>
VolumeRaySpec volume_ray_spec(const Params& p, int derivatives) {
  VolumeRaySpec s;
  s.width = p.width;
  s.height = p.height;
  s.camera = p.camera;
  s.kernel = p.kernel;
  s.derivatives = derivatives;
  s.step_voxels = p.step_voxels;
  s.opacity_threshold = p.opacity_threshold;
  s.tf = p.tf;
  s.background = p.background;
  s.march = p.march;
  s.near_depth = p.near_depth;
  s.far_depth = p.far_depth;
  return s;
}

// ---- host helpers (volume_ray.cpp) ----

/// Resolves `c` for a width × height image. Throws InputError(context, "camera.<field>", …) for a
/// non-finite position, eye == look_at, up parallel to the view direction (or zero), fov outside (0, 180),
/// or a size outside [1, 16384].
RayCamera make_ray_camera(const PinholeCamera& c, uint32_t width, uint32_t height, const std::string& context);

/// World position of the centre of the volume's grid (index (n − 1)/2 per axis).
Vec3 volume_centre(const VolumeView& v);
/// Radius of the sphere around volume_centre through the grid's corners (world units).
float volume_radius(const VolumeView& v);
/// Smallest world length of one index step along any axis (the voxel size used for "steps in voxels").
float min_spacing(const VolumeView& v);

/// A camera orbiting the volume's centre (world RAS+: x right, y anterior, z superior), looking at it
/// with up = +z: azimuth 0° puts the eye on +y (in front of a subject's face), 90° on +x (the subject's
/// right); elevation is the angle above the x-y plane, [−89, 89]. distance > 0 is the eye's distance from
/// the centre in world units; distance ≤ 0 frames the grid: volume_radius / sin(fov/2), the distance at
/// which the grid's bounding sphere just fits the image height. Throws InputError("camera", field, …)
/// for non-finite angles, an elevation outside [−89, 89] or a fov outside (0, 180).
PinholeCamera orbit_camera(const VolumeView& v, float azimuth_deg, float elevation_deg, float distance,
                           float fov_deg = 30.f);

/// Azimuth, elevation, distance and fov of ch2_camera() (the orbit_camera arguments it equals).
inline constexpr float kCh2Azimuth = 35.f, kCh2Elevation = 10.f, kCh2Distance = 400.f, kCh2Fov = 30.f;
/// The eye's distance from the volume's centre, world units: away from the centre (where the view has no
/// direction) and finite.
inline constexpr float kMinStrandDistance = 1e-3f, kMaxStrandDistance = 1e6f;

/// The default view of the Colin27 MRI (ch2: 181 × 217 × 181 at 1 mm, MNI placement, grid centre at world
/// (0, −17, 19) mm): orbit_camera(ch2, kCh2Azimuth, kCh2Elevation, kCh2Distance, kCh2Fov), i.e. the head
/// seen from the front, from the subject's right and a little above, filling most of the image height.
PinholeCamera ch2_camera();

/// Refuses a volume a ray-casting strand cannot sample: InputError(context, "volume", …) for null data, an
/// axis with fewer than 2R samples for the kernel's radius R ("volume.nx" …, the message naming the volume
/// file when v.source is set), or a non-finite world_to_index.
void check_strand_volume(const VolumeView& v, KernelKind k, const std::string& context);

/// Checks every field of `s`, in this order, throwing InputError(context, field, …) for the first one out
/// of range: "width", "height" ([1, 16384]), "camera.*" (make_ray_camera), "derivatives" ([1, 2]),
/// "kernel" (derivatives 2 with a kernel that has no Hessian: tent), "step_voxels", "opacity_threshold", "tf.*"
/// (TransferFunction1D::validate), "background.r" / ".g" / ".b", and for Planes "near_depth" (not finite)
/// and "far_depth" (not finite, not beyond near_depth, or the far plane not in front of the eye).
void validate_volume_ray(const VolumeRaySpec& s, const std::string& context);

/// Builds the ray caster of `s` on `volume` (a host view for the CPU, a device view for the GPU: only its
/// metadata is read here): validate_volume_ray(s), check_strand_volume(volume, s.kernel), then the field
/// box, the camera for width × height, step = s.step_voxels · min_spacing(volume), for Planes the planes'
/// depths from the eye z = max(|look_at − eye| + depth, 0), and the 1D table sampled for s.step_voxels
/// (sample_tf1d). Throws InputError(context, field, …).
VolumeRayCaster make_volume_ray_caster(const VolumeView& volume, const VolumeRaySpec& s, const std::string& context);

}  // namespace mv
