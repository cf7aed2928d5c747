// app/session/volume_strand_workloads.h.
#include "app/session/volume_strand_workloads.h"

#include <map>
#include <memory>
#include <mutex>

#include "render/field/device_volume.h"
#include "render/field/volume_io.h"

namespace mv {

namespace {

struct Shared {
  Volume host;
  VolumeView host_view;
  std::unique_ptr<DeviceVolume> device;
};

}  // namespace

const VolumeView& shared_volume_view(const std::string& name, Side side) {
  static std::mutex mutex;
  // Never freed (not even at exit, where the CUDA runtime may already be gone): views stay valid.
  static auto* cache = new std::map<std::string, std::unique_ptr<Shared>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Shared>& entry = (*cache)[name];
  if (!entry) {
    auto s = std::make_unique<Shared>();
    s->host = load_volume(default_volume_path(name));
    s->host_view = make_view(s->host);
    entry = std::move(s);
  }
  if (side == Side::Host) return entry->host_view;
  if (!entry->device) entry->device = std::make_unique<DeviceVolume>(entry->host);
  return entry->device->view();
}

PinholeCamera ch2_view_camera(const VolumeView& ch2, const StrandViewParams& view) {
  view.validate();
  // The default keeps ch2_camera() itself (the camera every run had before views existed), so default runs
  // stay bit for bit what they were whatever rounding orbit_camera's volume_centre may add.
  if (view.azimuth_deg == kCh2Azimuth && view.elevation_deg == kCh2Elevation && view.distance == kCh2Distance)
    return ch2_camera();
  return orbit_camera(ch2, view.azimuth_deg, view.elevation_deg, view.distance, kCh2Fov);
}

namespace {
/// A volume renderer of ch2 at width × height through `view`: its default parameters with that size and
/// camera, made by `make(volume, params)`.
template <class Params, class Make>
auto ch2_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view, Make make) {
  const VolumeView& ch2 = shared_volume_view("ch2", side);
  Params p;
  p.width = width;
  p.height = height;
  p.camera = ch2_view_camera(ch2, view);
  return make(ch2, p);
}
}  // namespace

VrLiteCam vr_lite_cam_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view) {
  return ch2_workload<VrLiteCamParams>(width, height, side, view,
                                       [](const VolumeView& v, const VrLiteCamParams& p) { return make_vr_lite_cam(v, p); });
}

IllustVr illust_vr_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view) {
  return ch2_workload<IllustVrParams>(width, height, side, view,
                                      [](const VolumeView& v, const IllustVrParams& p) { return make_illust_vr(v, p); });
}

}  // namespace mv
