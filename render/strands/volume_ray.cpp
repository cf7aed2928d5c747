// Host helpers of render/strands/volume_ray.h: camera validation and framing, the shared ray caster's
// validation and factory.
#include "render/strands/volume_ray.h"

#include <cmath>
#include <string>

#include "base/errors.h"
#include "render/strands/param_check.h"

namespace mv {

namespace {

using param_check::num;

bool finite3(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

void check_fov(const std::string& context, const std::string& field, float fov_deg) {
  if (!(fov_deg > 0.f && fov_deg < 180.f)) throw InputError(context, field, num(fov_deg) + " is out of range (0, 180) degrees");
}

}  // namespace

RayCamera make_ray_camera(const PinholeCamera& c, uint32_t width, uint32_t height, const std::string& context) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw InputError(context, "size",
                     std::to_string(width) + "x" + std::to_string(height) + " is out of range: width and height in [1, 16384]");
  if (!finite3(c.eye)) throw InputError(context, "camera.eye", "not a finite position");
  if (!finite3(c.look_at)) throw InputError(context, "camera.look_at", "not a finite position");
  if (!finite3(c.up)) throw InputError(context, "camera.up", "not a finite vector");
  check_fov(context, "camera.fov_deg", c.fov_deg);
  const Vec3 fwd = c.look_at - c.eye;
  if (!(length(fwd) > 0.f)) throw InputError(context, "camera.look_at", "equals the eye position");
  const Vec3 w = normalize(fwd);
  if (!(length(c.up) > 0.f)) throw InputError(context, "camera.up", "is the zero vector");
  const Vec3 side = cross(w, normalize(c.up));
  if (!(length(side) > 1e-4f)) throw InputError(context, "camera.up", "is parallel to the view direction");
  RayCamera f;
  f.eye = c.eye;
  f.w = w;
  f.u = normalize(side);
  f.v = cross(f.u, w);
  f.tan_half = static_cast<float>(std::tan(0.5 * c.fov_deg * 3.14159265358979323846 / 180.0));
  f.width = width;
  f.height = height;
  return f;
}

Vec3 volume_centre(const VolumeView& v) {
  return v.index_to_world.apply({0.5f * static_cast<float>(v.nx - 1), 0.5f * static_cast<float>(v.ny - 1),
                                 0.5f * static_cast<float>(v.nz - 1)});
}

float volume_radius(const VolumeView& v) {
  const Vec3 c = volume_centre(v);
  float r = 0.f;
  for (int corner = 0; corner < 8; ++corner) {
    const Vec3 p{corner & 1 ? static_cast<float>(v.nx - 1) : 0.f, corner & 2 ? static_cast<float>(v.ny - 1) : 0.f,
                 corner & 4 ? static_cast<float>(v.nz - 1) : 0.f};
    r = std::fmax(r, length(v.index_to_world.apply(p) - c));
  }
  return r;
}

float min_spacing(const VolumeView& v) {
  float s = INFINITY;
  for (int col = 0; col < 3; ++col) {
    const Vec3 axis{v.index_to_world.m[col], v.index_to_world.m[3 + col], v.index_to_world.m[6 + col]};
    s = std::fmin(s, length(axis));
  }
  return s;
}

PinholeCamera orbit_camera(const VolumeView& v, float azimuth_deg, float elevation_deg, float distance, float fov_deg) {
  if (!std::isfinite(azimuth_deg)) throw InputError("camera", "azimuth", "not a finite angle");
  if (!(elevation_deg >= -89.f && elevation_deg <= 89.f))
    throw InputError("camera", "elevation", num(elevation_deg) + " is out of range [-89, 89] degrees");
  if (!std::isfinite(distance)) throw InputError("camera", "distance", "not a finite number");
  check_fov("camera", "fov_deg", fov_deg);
  const double deg = 3.14159265358979323846 / 180.0;
  const double az = azimuth_deg * deg, el = elevation_deg * deg;
  PinholeCamera c;
  c.look_at = volume_centre(v);
  c.up = {0.f, 0.f, 1.f};
  c.fov_deg = fov_deg;
  const double d = distance > 0.f ? distance : volume_radius(v) / std::sin(0.5 * fov_deg * deg);
  const Vec3 dir{static_cast<float>(std::cos(el) * std::sin(az)), static_cast<float>(std::cos(el) * std::cos(az)),
                 static_cast<float>(std::sin(el))};
  c.eye = c.look_at + dir * static_cast<float>(d);
  return c;
}

PinholeCamera ch2_camera() {
  // orbit_camera's arithmetic on the ch2 grid centre (0, −17, 19), written out so no volume is needed.
  const double deg = 3.14159265358979323846 / 180.0;
  const double az = kCh2Azimuth * deg, el = kCh2Elevation * deg;
  PinholeCamera c;
  c.look_at = {0.f, -17.f, 19.f};
  c.up = {0.f, 0.f, 1.f};
  c.fov_deg = kCh2Fov;
  const Vec3 dir{static_cast<float>(std::cos(el) * std::sin(az)), static_cast<float>(std::cos(el) * std::cos(az)),
                 static_cast<float>(std::sin(el))};
  c.eye = c.look_at + dir * kCh2Distance;
  return c;
}

void check_strand_volume(const VolumeView& v, KernelKind k, const std::string& context) {
  if (!v.data) throw InputError(context, "volume", "no sample data (null pointer)");
  const int need = 2 * kernel_radius(k);
  const int dims[3] = {v.nx, v.ny, v.nz};
  const char* names[3] = {"nx", "ny", "nz"};
  for (int a = 0; a < 3; ++a)
    if (dims[a] < need)
      throw InputError(context, std::string("volume.") + names[a],
                       std::to_string(dims[a]) + " samples; kernel " + kernel_name(k) + " needs at least " +
                           std::to_string(need) + " per axis" +
                           (v.source ? std::string(" (volume file ") + v.source + ")" : std::string()));
  const Affine3& a = v.world_to_index;
  bool ok = finite3(a.origin);
  for (float m : a.m) ok = ok && std::isfinite(m);
  if (!ok || !(std::fabs(a.determinant()) > 0.f))
    throw InputError(context, "volume", "world_to_index is singular or not finite (use make_view)");
}

void validate_volume_ray(const VolumeRaySpec& s, const std::string& context) {
  using namespace param_check;
  range(context, "width", s.width, 1, 16384);
  range(context, "height", s.height, 1, 16384);
  make_ray_camera(s.camera, s.width, s.height, context);
  range(context, "derivatives", s.derivatives, 1, 2);  // the workload's own constant, not user input
  if (kernel_max_derivative(s.kernel) < s.derivatives)
    throw InputError(context, "kernel",
                     std::string(kernel_name(s.kernel)) + " has no usable Hessian (second derivatives need ctmr or bspln3)");
  range(context, "step_voxels", s.step_voxels, 0.0, 16.0, true);
  range(context, "opacity_threshold", s.opacity_threshold, 0.0, 1.0, true);
  s.tf.validate(context);
  color(context, "background", s.background);
  if (s.march == RayMarch::Planes) {
    const float dist = length(s.camera.look_at - s.camera.eye);
    if (!std::isfinite(s.near_depth)) throw InputError(context, "near_depth", "not a finite number");
    if (!std::isfinite(s.far_depth) || !(s.far_depth > s.near_depth))
      throw InputError(context, "far_depth",
                       num(s.far_depth) + " is out of range: beyond near_depth " + num(s.near_depth));
    if (!(dist + s.far_depth > 0.f))
      throw InputError(context, "far_depth",
                       num(s.far_depth) + " is out of range: the far plane must lie in front of the eye (> " +
                           num(-dist) + ")");
  }
}

VolumeRayCaster make_volume_ray_caster(const VolumeView& volume, const VolumeRaySpec& s, const std::string& context) {
  validate_volume_ray(s, context);
  check_strand_volume(volume, s.kernel, context);
  VolumeRayCaster r;
  r.vol = volume;
  r.kernel = s.kernel;
  r.box = field_box(volume, s.kernel);
  r.cam = make_ray_camera(s.camera, s.width, s.height, context);
  r.step = s.step_voxels * min_spacing(volume);
  r.march = s.march;
  const float dist = length(s.camera.look_at - s.camera.eye);
  r.z_near = std::fmax(dist + s.near_depth, 0.f);
  r.z_far = dist + s.far_depth;
  r.threshold = s.opacity_threshold;
  r.background = s.background;
  r.tf = sample_tf1d(s.tf, s.step_voxels, context);
  return r;
}

}  // namespace mv
