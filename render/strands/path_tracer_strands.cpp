// render/strands/path_tracer_strands.h.
#include "render/strands/path_tracer_strands.h"

#include <string>

#include "base/errors.h"

namespace mv {

void check_path_tracer_strand_size(uint32_t width, uint32_t height) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width % kPatchSize != 0 || height % kPatchSize != 0)
    throw InputError("", "--size",
                     size + ": width and height must be multiples of 4 for path-tracer (one strand per pixel of "
                            "4×4 patch tasks)");
  if (width < 4 || height < 4 || width > kPathTracerStrandMaxSide || height > kPathTracerStrandMaxSide)
    throw InputError("", "--size",
                     size + " is out of range: width and height in [4, " + std::to_string(kPathTracerStrandMaxSide) +
                         "] for path-tracer");
}

PathTracerStrands make_path_tracer_strands(const SceneView& scene, const PathTracerStrandParams& p) {
  check_path_tracer_strand_size(p.width, p.height);
  const std::string size = std::to_string(p.width) + "x" + std::to_string(p.height);
  if (p.paths_per_pixel < 1 || p.paths_per_pixel > 64)
    throw InputError("", "paths_per_pixel", std::to_string(p.paths_per_pixel) + " is out of range [1, 64]");
  if (p.target_spp < 1 || p.target_spp > static_cast<uint32_t>(kMaxTargetSpp))
    throw InputError("", "target_spp",
                     std::to_string(p.target_spp) + " is out of range [1, " + std::to_string(kMaxTargetSpp) + "]");
  if (scene.width != static_cast<int>(p.width) || scene.height != static_cast<int>(p.height))
    throw InputError("", "scene",
                     "the scene view is " + std::to_string(scene.width) + "x" + std::to_string(scene.height) +
                         ", the strands " + size + " (use Scene::host_view_at)");
  PathTracerStrands w;
  w.scene = scene;
  w.grid = PatchGrid(static_cast<int>(p.width), static_cast<int>(p.height));
  w.p = p;
  return w;
}

}  // namespace mv
