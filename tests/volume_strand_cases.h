// Scenes shared by the CPU and GPU tests of the volume strand workloads (vr-lite-cam, illust-vr): an
// analytic sphere on a small grid seen along the grid's z axis, and a CPU runner of every strand.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "render/field/analytic.h"
#include "render/field/volume.h"
#include "render/field/volume_io.h"
#include "render/strands/illust_vr.h"
#include "render/strands/vr_lite_cam.h"

namespace mv::test {

/// Grid of the sphere scenes: 33³ samples at spacing 1, centred at the origin (index = world + 16), so
/// the ctmr/bspln3 field box is world [−15, 15]³.
inline constexpr int kSphereGrid = 33;
/// Sphere radius: samples on the central ray (every 0.5 from z = −15) sit at distance ±0.25 from it.
inline constexpr float kSphereRadius = 8.25f;
/// Camera: on the −z axis at distance 100, looking at the origin, y up.
inline constexpr float kEyeDistance = 100.f;

/// The signed distance |x| − r (negative inside) sampled on the grid; `bright` negates it (r − |x|: the
/// sphere brighter than its surroundings, like tissue in an MRI).
inline Volume sphere_volume(bool bright = false) {
  const SphereDistance s{{0.f, 0.f, 0.f}, kSphereRadius};
  Volume v = sample_volume(s, kSphereGrid, kSphereGrid, kSphereGrid,
                           centred_grid(kSphereGrid, kSphereGrid, kSphereGrid, {1.f, 1.f, 1.f}, {0.f, 0.f, 0.f}));
  if (bright)
    for (float& x : v.data) x = -x;
  return v;
}

inline PinholeCamera axis_camera(float fov_deg = 20.f) {
  PinholeCamera c;
  c.eye = {0.f, 0.f, -kEyeDistance};
  c.look_at = {0.f, 0.f, 0.f};
  c.up = {0.f, 1.f, 0.f};
  c.fov_deg = fov_deg;
  return c;
}

/// White, opaque (0.84 per voxel, so 0.6 per half-voxel step) where the distance field is ≤ −0.1,
/// transparent where ≥ 0.1: the sphere's inside. The table's nodes (spacing 8/127) keep the ramp within
/// ±0.17 of the surface, so the samples at ±0.25 see exactly 0.6 and 0.
inline TransferFunction1D solid_sphere_tf(float sign = 1.f) {
  TransferFunction1D tf;
  if (sign > 0)
    tf.points = {{-4.f, Vec3{1.f}, 0.84f}, {-0.1f, Vec3{1.f}, 0.84f}, {0.1f, Vec3{1.f}, 0.f}, {4.f, Vec3{1.f}, 0.f}};
  else
    tf.points = {{-4.f, Vec3{1.f}, 0.f}, {-0.1f, Vec3{1.f}, 0.f}, {0.1f, Vec3{1.f}, 0.84f}, {4.f, Vec3{1.f}, 0.84f}};
  return tf;
}

inline VrLiteCamParams sphere_vr_params(uint32_t side = 33) {
  VrLiteCamParams p;
  p.width = p.height = side;
  p.camera = axis_camera();
  p.tf = solid_sphere_tf();
  p.background = Vec3{0.f};
  p.march = RayMarch::Clip;  // the sphere tests count the clipped march's samples; Planes tests set it back
  return p;
}

inline IllustVrParams sphere_illust_params(uint32_t side = 33) {
  IllustVrParams p;
  p.width = p.height = side;
  p.camera = axis_camera();
  p.tf = solid_sphere_tf();
  p.convention = CurvatureConvention::Megaview;  // the distance field increases outward
  p.background = Vec3{0.f};
  p.min_gradient = 1e-3f;
  p.march = RayMarch::Clip;
  return p;
}

/// Per-strand results of running every strand with run_item.
template <class W>
struct CpuRun {
  std::vector<typename W::State> state;
  std::vector<WorkStatus> status;
  std::vector<uint32_t> steps;
  std::vector<Vec3> color;  ///< color(state, status), pixel order (pixel(i) = i for these workloads)
};

template <class W>
CpuRun<W> run_all_cpu(const W& w) {
  CpuRun<W> r;
  const uint32_t n = w.num_strands();
  r.state.resize(n);
  r.status.resize(n);
  r.steps.resize(n);
  r.color.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    r.status[i] = run_item(w, i, r.state[i], r.steps[i], 100000u);
    r.color[w.pixel(i)] = w.color(r.state[i], r.status[i]);
  }
  return r;
}

/// The Colin27 MRI (ch2) as default_volume_path resolves it ($MEGAVIEW_VOLUMES/ch2.nii.gz first, then
/// Debian's mricron-data), or "" with the reason in `why` (the tests then skip).
inline std::string ch2_path(std::string& why) {
  try {
    return default_volume_path("ch2");
  } catch (const std::exception& e) {
    why = std::string(e.what()) + " (install mricron-data, or set MEGAVIEW_VOLUMES to a folder holding ch2.nii.gz)";
    return "";
  }
}

/// Mean, population σ and CV of step counts.
struct StepSummary {
  double mean = 0, sigma = 0, cv = 0;
  uint32_t min = 0, max = 0;
};
inline StepSummary summarize(const std::vector<uint32_t>& steps) {
  StepSummary s;
  double sum = 0, sum2 = 0;
  s.min = steps.empty() ? 0 : steps[0];
  for (uint32_t x : steps) {
    sum += x;
    sum2 += double(x) * x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  const double n = static_cast<double>(steps.size());
  s.mean = sum / n;
  s.sigma = std::sqrt(std::fmax(0.0, sum2 / n - s.mean * s.mean));
  s.cv = s.sigma / s.mean;
  return s;
}

}  // namespace mv::test
