#include "render/pathtracer/scene.h"

namespace mv {

void Scene::finalize() {
  lights.clear();
  light_cdf.clear();
  light_area = 0.f;
  for (uint32_t i = 0; i < quads.size(); ++i) {
    Quad& q = quads[i];
    const Vec3 c = cross(q.edge_u, q.edge_v);
    q.area = length(c);
    q.normal = q.area > 0.f ? c / q.area : Vec3{0.f, 1.f, 0.f};
    const Material& m = materials.at(q.material);
    if (max_component(m.emission) > 0.f && q.area > 0.f) {
      light_area += q.area;
      lights.push_back(i);
      light_cdf.push_back(light_area);
    }
  }
}

SceneView Scene::host_view_at(int w, int h) const {
  SceneView v;
  point_scene_view(v, *this);
  v.num_materials = static_cast<uint32_t>(materials.size());
  v.num_spheres = static_cast<uint32_t>(spheres.size());
  v.num_boxes = static_cast<uint32_t>(boxes.size());
  v.num_quads = static_cast<uint32_t>(quads.size());
  v.num_lights = static_cast<uint32_t>(lights.size());
  v.light_area = light_area;
  v.background = background;
  v.max_depth = max_depth;
  v.epsilon = epsilon;
  v.camera = make_camera_frame(camera, static_cast<float>(w) / static_cast<float>(h));
  v.width = w;
  v.height = h;
  return v;
}

}  // namespace mv
