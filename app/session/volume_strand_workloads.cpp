// app/session/volume_strand_workloads.h.
#include "app/session/volume_strand_workloads.h"

#include <map>
#include <memory>
#include <mutex>

#include "base/errors.h"
#include "render/field/device_volume.h"
#include "render/field/volume_filter.h"
#include "render/field/volume_io.h"

namespace mv {

namespace {

struct Shared {
  Volume host;
  VolumeView host_view;
  std::unique_ptr<DeviceVolume> device;
};

}  // namespace

namespace {
/// shared_volume_view of `name` pre-blurred by smooth_volume(…, sigma) (sigma 0: as loaded).
const VolumeView& shared_view(const std::string& name, float sigma, Side side) {
  static std::mutex mutex;
  // Never freed (not even at exit, where the CUDA runtime may already be gone): views stay valid.
  static auto* cache = new std::map<std::string, std::unique_ptr<Shared>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Shared>& entry = (*cache)[name + "@" + std::to_string(sigma)];
  if (!entry) {
    auto s = std::make_unique<Shared>();
    s->host = load_volume(default_volume_path(name));
    if (sigma > 0.f) s->host = smooth_volume(s->host, sigma);
    s->host_view = make_view(s->host);
    entry = std::move(s);
  }
  if (side == Side::Host) return entry->host_view;
  if (!entry->device) entry->device = std::make_unique<DeviceVolume>(entry->host);
  return entry->device->view();
}
}  // namespace

const VolumeView& shared_volume_view(const std::string& name, Side side) { return shared_view(name, 0.f, side); }

PinholeCamera ch2_view_camera(const VolumeView& ch2, const StrandViewParams& view) {
  view.validate();
  // The default keeps ch2_camera() itself (the camera every run had before views existed), so default runs
  // stay bit for bit what they were whatever rounding orbit_camera's volume_centre may add.
  if (view.azimuth_deg == kCh2Azimuth && view.elevation_deg == kCh2Elevation && view.distance == kCh2Distance)
    return ch2_camera();
  return orbit_camera(ch2, view.azimuth_deg, view.elevation_deg, view.distance, kCh2Fov);
}

const ParamTable<VolumeKnobs>& volume_knob_table() {
  static const ParamTable<VolumeKnobs> t = [] {
    ParamTable<VolumeKnobs> t;
    t.add(make_param("volume", ParamKind::Text, 0, 0,
                     "volume the ray casters render: a name under $MEGAVIEW_VOLUMES (ch2) or a .nrrd/.nii(.gz) file",
                     "Lehmann 2023 A.1, A.2 (Colin27, ch2)"),
          &VolumeKnobs::volume);
    t.add(make_param("smooth", ParamKind::Real, 0, 16, "Gaussian pre-blur sigma of the volume, voxels", ""),
          &VolumeKnobs::smooth);
    t.add(make_param("kernel", ParamKind::Choice, 0, 0, "reconstruction kernel (illust-vr needs ctmr or bspln3)",
                     "Lehmann 2023 A.1, A.2", "", 0, {"tent", "ctmr", "bspln3"}),
          &VolumeKnobs::kernel);
    t.add(make_param("step", ParamKind::Real, kMinStrandStepVoxels, 16,
                     "ray step, voxels of the smallest spacing (the work per ray grows as 1/step)", "Lehmann 2023 A.1"),
          &VolumeKnobs::step);
    t.add(make_param("tf", ParamKind::Text, 0, 0,
                     "transfer function: a JSON file of {value, color, opacity} points (the format of "
                     "assets/tf-ch2-vr-lite.json); empty: the workload's preset for ch2",
                     "Lehmann 2023 A.1, A.2"),
          &VolumeKnobs::tf);
    return t;
  }();
  return t;
}

VolumeKnobs volume_knobs(const ParamValues& values, VolumeKnobs defaults) {
  BoundParams<VolumeKnobs> p(volume_knob_table(), defaults);
  p.apply(values);
  if (defaults.volume.empty()) throw InputError("", "--volume", "needs a volume name or file, got \"\"");
  return defaults;
}

PinholeCamera volume_view_camera(const VolumeView& volume, const std::string& name, const StrandViewParams& view) {
  if (name == "ch2") return ch2_view_camera(volume, view);
  view.validate();
  return orbit_camera(volume, view.azimuth_deg, view.elevation_deg, view.distance == kCh2Distance ? 0.f : view.distance,
                      kCh2Fov);
}

namespace {
/// A volume renderer at width × height through `view`: its default parameters with that size, camera and
/// the knobs' volume, blur, kernel, step and transfer function, made by `make(volume, params)`.
template <class Params, class Make>
auto volume_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view, const VolumeKnobs& k,
                     Make make) {
  Params p;
  if (!k.tf.empty()) p.tf = load_tf1d(k.tf);  // before the volume: a bad file fails at once
  const VolumeView& v = shared_view(k.volume, k.smooth, side);
  p.width = width;
  p.height = height;
  p.kernel = k.kernel;
  p.step_voxels = k.step;
  p.camera = volume_view_camera(v, k.volume, view);
  return make(v, p);
}
}  // namespace

VrLiteCam vr_lite_cam_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view,
                               const ParamValues& knobs) {
  return volume_workload<VrLiteCamParams>(
      width, height, side, view, volume_knobs(knobs, volume_knob_defaults<VrLiteCamParams>()),
      [](const VolumeView& v, const VrLiteCamParams& p) { return make_vr_lite_cam(v, p); });
}

IllustVr illust_vr_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view,
                            const ParamValues& knobs) {
  return volume_workload<IllustVrParams>(
      width, height, side, view, volume_knobs(knobs, volume_knob_defaults<IllustVrParams>()),
      [](const VolumeView& v, const IllustVrParams& p) { return make_illust_vr(v, p); });
}

Ridge3dStrands ridge3d_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams&) {
  if (width == 0 || height % width != 0)
    throw InputError("", "--size",
                     std::to_string(width) + "x" + std::to_string(height) +
                         ": ridge3d needs a height that is a multiple of the width (a width x width x height/width seed grid)");
  Ridge3dParams p;
  p.gx = p.gy = width;
  p.gz = height / width;
  return make_ridge3d(shared_view("ch2", kRidge3dCh2Smooth, side), p);
}

void add_view_image(const Ridge3dStrands& w, const StrandRun<Ridge3dStrands>& run, const StrandViewParams& view,
                    StrandResult& r) {
  const PinholeCamera cam = ch2_view_camera(shared_volume_view("ch2", Side::Host), view);
  const RayCamera rc = make_ray_camera(cam, kRidge3dViewWidth, kRidge3dViewHeight, "ridge3d");
  r.view_rgba = ridge3d_splats(w, run.state, run.status, rc, kRidge3dSplatRadius);
  r.view_width = kRidge3dViewWidth;
  r.view_height = kRidge3dViewHeight;
}

}  // namespace mv
