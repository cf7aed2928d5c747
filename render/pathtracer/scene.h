// Scene description: primitives, materials, lights and the pinhole camera.
//
// The host-side `Scene` owns std::vectors; `SceneView` is a trivially copyable bundle of pointers and
// counts that the integrator reads, pointing either at the host vectors (`Scene::host_view`) or at
// device copies (`DeviceScene`, render/pathtracer/patch_workload.h). Units: positions and lengths in scene units
// (the room is about 10 units across), colours as linear RGB, emission as radiance (the value a camera
// ray that hits the emitter sees), field of view in degrees. Image rows run top to bottom (y = 0 is the
// top row). File format and validation: render/pathtracer/scene_io.h and scenes/README.md.
#pragma once

#include <string>
#include <vector>

#include "render/math.h"

namespace mv {

/// How a surface scatters light. Emission is a property of every material (`Material::emission`);
/// `Emissive` surfaces emit and absorb everything that reaches them.
enum class MaterialType : uint32_t { Diffuse = 0, Mirror = 1, Glossy = 2, Glass = 3, Emissive = 4 };

struct Material {
  MaterialType type = MaterialType::Diffuse;
  Vec3 albedo{0.8f};    ///< reflectance / transmittance tint, each channel in [0, 1]
  Vec3 emission{0.f};   ///< emitted radiance, each channel >= 0
  float ior = 1.5f;     ///< index of refraction (Glass), in [1, 3]
  float exponent = 64;  ///< Phong lobe exponent (Glossy), in [1, 1e5]: larger is sharper
};

struct Sphere {
  Vec3 center;
  float radius = 1.f;  ///< > 0
  uint32_t material = 0;
};

/// Axis-aligned box [lo, hi]; may be seen from inside (a closed room).
struct Box {
  Vec3 lo, hi;  ///< lo < hi on every axis
  uint32_t material = 0;
};

/// Parallelogram corner + s·edge_u + t·edge_v, s, t in [0, 1]. Its normal is normalize(edge_u × edge_v);
/// it reflects on both sides but, as a light, emits only on the normal's side.
struct Quad {
  Vec3 corner, edge_u, edge_v;
  uint32_t material = 0;
  Vec3 normal;       ///< derived: unit normal
  float area = 0.f;  ///< derived: |edge_u × edge_v|
};

/// A pinhole camera in the form the ray generator uses; built by `make_camera_frame`.
struct CameraFrame {
  Vec3 origin, lower_left, horizontal, vertical;
};

/// The camera as the user and the scene file specify it.
struct Camera {
  Vec3 position{0.f, 0.f, 5.f};
  Vec3 look_at{0.f, 0.f, 0.f};
  Vec3 up{0.f, 1.f, 0.f};
  float vfov_deg = 45.f;  ///< vertical field of view, in (0, 180)
};

/// Builds the ray-generation frame of `cam` for an image of aspect ratio width/height.
MV_HD inline CameraFrame make_camera_frame(const Camera& cam, float aspect) {
  const float half_h = tanf(0.5f * cam.vfov_deg * kPi / 180.f);
  const float half_w = aspect * half_h;
  const Vec3 w = normalize(cam.position - cam.look_at);
  const Vec3 u = normalize(cross(cam.up, w));
  const Vec3 v = cross(w, u);
  CameraFrame f;
  f.origin = cam.position;
  f.horizontal = u * (2.f * half_w);
  f.vertical = v * (2.f * half_h);
  f.lower_left = cam.position - u * half_w - v * half_h - w;
  return f;
}

/// What the integrator reads. Pointers are all host or all device memory.
struct SceneView {
  const Material* materials = nullptr;
  const Sphere* spheres = nullptr;
  const Box* boxes = nullptr;
  const Quad* quads = nullptr;
  /// Indices into `quads` of the quads whose material emits: the lights for next-event estimation,
  /// chosen with probability proportional to area through `light_cdf` (inclusive prefix sums of area).
  const uint32_t* lights = nullptr;
  const float* light_cdf = nullptr;
  uint32_t num_materials = 0, num_spheres = 0, num_boxes = 0, num_quads = 0, num_lights = 0;
  float light_area = 0.f;  ///< total area of the lights
  Vec3 background{0.f};    ///< radiance of rays that leave the scene
  uint32_t max_depth = 16; ///< bounces at most, in [1, 1024]
  float epsilon = 1e-3f;   ///< ray offset in scene units
  CameraFrame camera;
  int width = 0, height = 0;
};

/// Points the six arrays of `v` at those of `a`: a.materials, a.spheres, a.boxes, a.quads, a.lights and
/// a.light_cdf, each with data() (a Scene's host vectors, or the device buffers of DeviceScene,
/// render/pathtracer/patch_workload.h). Counts and everything else in `v` stay.
template <class Arrays>
void point_scene_view(SceneView& v, const Arrays& a) {
  v.materials = a.materials.data();
  v.spheres = a.spheres.data();
  v.boxes = a.boxes.data();
  v.quads = a.quads.data();
  v.lights = a.lights.data();
  v.light_cdf = a.light_cdf.data();
}

/// Limits enforced by the loader and by the GUI (render/pathtracer/scene_io.h).
inline constexpr int kMinResolution = 4;
inline constexpr int kMaxResolution = 16384;
inline constexpr int kMaxTargetSpp = 1 << 20;

/// A scene on the host. Build with the loader (render/pathtracer/scene_io.h) or by hand, then call `finalize()`.
struct Scene {
  std::string name;            ///< short name, e.g. "room"
  std::string source_path;     ///< file it came from (empty for scenes built in code)
  std::string reference_path;  ///< ground-truth EXR (absolute, or empty when the scene has none)
  int width = 800, height = 600;
  int target_spp = 512;        ///< samples per pixel at which a patch is finished, [1, kMaxTargetSpp]
  Camera camera;
  Vec3 background{0.f};
  uint32_t max_depth = 16;
  float epsilon = 1e-3f;
  std::vector<Material> materials;
  std::vector<Sphere> spheres;
  std::vector<Box> boxes;
  std::vector<Quad> quads;
  /// Names of the materials, in the order of `materials` (for messages and the GUI).
  std::vector<std::string> material_names;

  // Derived by finalize():
  std::vector<uint32_t> lights;
  std::vector<float> light_cdf;
  float light_area = 0.f;

  /// Derives quad normals and areas and the light list. Call after any change to the geometry.
  void finalize();
  /// A view of the host copy, with the camera frame for the current width and height.
  SceneView host_view() const { return host_view_at(width, height); }
  /// A view of the host copy as host_view() would give it at `w` × `h` (each ≥ 1): the camera frame for that
  /// aspect ratio, width and height set, the scene's own resolution untouched.
  SceneView host_view_at(int w, int h) const;
};

}  // namespace mv
