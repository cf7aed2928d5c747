// The path tracer's task workload: a scene, its film, and one priority per 4×4 patch task.
//
// This is the Workload concept that the strategies in sched/ run (sched/strategy.h): it hands out
// PatchTaskView values for the host or the device and keeps both sides consistent when the active
// strategy moves between CPU and GPU. Changing the scene or resolution means a new PatchWorkload;
// changing paths per pixel, the priority function or the seed applies from the next task on; changing
// the target spp keeps the film (patches below a raised target become unfinished again). Switching to or
// from `adaptive`, or its noise threshold, re-evaluates which patches adaptive sampling has stopped.
#pragma once

#include <memory>
#include <vector>

#include "base/device_buffer.h"
#include "render/film.h"
#include "render/pathtracer/patch_task.h"
#include "render/pathtracer/scene.h"

namespace mv {

/// Device copies of a Scene's arrays.
class DeviceScene {
 public:
  explicit DeviceScene(const Scene& scene);
  /// View with device pointers (camera frame from `host_view`).
  SceneView view(const SceneView& host_view) const;

 private:
  struct Arrays {  // the device copies of the Scene's arrays, under the same names
    DeviceBuffer<Material> materials;
    DeviceBuffer<Sphere> spheres;
    DeviceBuffer<Box> boxes;
    DeviceBuffer<Quad> quads;
    DeviceBuffer<uint32_t> lights;
    DeviceBuffer<float> light_cdf;
  };
  Arrays arrays_;
};

class PatchWorkload {
 public:
  using View = PatchTaskView;

  /// Allocates the film (checking it fits) and uploads the scene when `use_device`.
  PatchWorkload(const Scene& scene, const PatchTaskParams& params, bool use_device);

  uint32_t num_tasks() const { return film_.grid().num_patches(); }
  /// Paths one execution of a full patch traces.
  uint32_t work_per_task() const { return params_.paths_per_pixel * kPatchPixels; }
  /// Paths still to trace until every patch is finished (under `adaptive`: at most this many, since
  /// unfinished patches may still stop early).
  uint64_t remaining_paths();
  const PatchTaskParams& params() const { return params_; }
  /// Validates `p` (InputError naming the field; nothing changes on failure) and applies it. Returns true
  /// if the set of finished patches may have changed (target spp; to or from `adaptive`; its noise
  /// threshold): the caller's schedule and finished count are then stale.
  bool set_params(const PatchTaskParams& p);
  /// Replaces the camera (keeps resolution) and clears the film.
  void set_camera(const Camera& cam);
  const Scene& scene() const { return scene_; }
  bool has_device() const { return film_.has_device(); }

  /// Clears the film and sets every priority to kUnsampledPriority.
  void reset();
  /// Makes film and priorities current on `side` (copies if needed).
  void make_current(Side side);
  Side current() const { return film_.current(); }
  /// A view for `side`; call make_current(side) first.
  View view(Side side);
  Film& film() { return film_; }
  /// Priorities on the host (synced from the device if it is current).
  const std::vector<float>& host_priorities();
  /// Number of finished patches, stopped ones included (reads the current side).
  uint32_t finished_tasks();
  /// Device-side counters for GPU strategies (null without a device).
  WorkCounters* device_counters() { return counters_.data(); }

 private:
  void refresh_finished();
  Scene scene_;
  SceneView host_scene_;
  std::unique_ptr<DeviceScene> device_scene_;
  PatchTaskParams params_;
  Film film_;
  std::vector<float> h_priority_;
  DeviceBuffer<float> d_priority_;
  DeviceBuffer<WorkCounters> counters_;
};

}  // namespace mv
