// app/session/path_tracer_strand_workload.h.
#include "app/session/path_tracer_strand_workload.h"

#include <map>
#include <memory>
#include <mutex>

#include "render/pathtracer/patch_workload.h"
#include "render/pathtracer/scene_io.h"

namespace mv {

namespace {

struct SharedScene {
  Scene host;
  std::unique_ptr<DeviceScene> device;
};

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

/// The cache entry of `name`, loaded if new. Call with cache_mutex() held.
SharedScene& entry_locked(const std::string& name) {
  // Never freed (not even at exit, where the CUDA runtime may already be gone): references stay valid.
  static auto* cache = new std::map<std::string, std::unique_ptr<SharedScene>>();
  std::unique_ptr<SharedScene>& e = (*cache)[name];
  if (!e) {
    auto s = std::make_unique<SharedScene>();
    s->host = load_scene(resolve_scene_path(name));
    e = std::move(s);
  }
  return *e;
}

}  // namespace

const Scene& shared_scene(const std::string& name) {
  std::lock_guard<std::mutex> lock(cache_mutex());
  return entry_locked(name).host;
}

SceneView shared_scene_view(const std::string& name, int width, int height, Side side) {
  std::lock_guard<std::mutex> lock(cache_mutex());
  SharedScene& e = entry_locked(name);
  const SceneView host = e.host.host_view_at(width, height);
  if (side == Side::Host) return host;
  if (!e.device) e.device = std::make_unique<DeviceScene>(e.host);
  return e.device->view(host);
}

PathTracerStrands path_tracer_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams&) {
  PathTracerStrandParams p;
  p.width = width;
  p.height = height;
  check_path_tracer_strand_size(width, height);  // before the scene is loaded or uploaded
  return make_path_tracer_strands(
      shared_scene_view(kPathTracerStrandScene, static_cast<int>(width), static_cast<int>(height), side), p);
}

}  // namespace mv
