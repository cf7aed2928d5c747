#include "app/cli/cli.h"

#include <fmt/format.h>

#include "app/cli/cli_validate.h"
#include "render/film.h"
#include "render/pathtracer/scene_io.h"

namespace mv {

std::string sibling_path(const std::string& path, const std::string& field, const std::string& ext,
                         const std::string& new_ext) {
  if (path.size() <= ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0)
    throw InputError(path, field, "expected a file name ending in " + ext);
  return path.substr(0, path.size() - ext.size()) + new_ext;
}

ToneMapSettings default_display(const Session& s) {
  ToneMapSettings tm;
  tm.target_spp = s.options().task.target_spp;
  return tm;
}

std::vector<std::string> strategies_on(Side side) {
  std::vector<std::string> names;
  for (const auto& e : patch_strategies().entries())
    if (e.info.side == side) names.push_back(e.info.name);
  return names;
}

double msamples_per_second(uint64_t paths, double busy_ms) {
  return busy_ms > 0.0 ? static_cast<double>(paths) / busy_ms * 1e-3 : 0.0;
}

void check_film_memory(const SessionOptions& o) {
  int w = o.width, h = o.height;
  if (w <= 0 || h <= 0) {
    const Scene scene = load_scene(resolve_scene_path(o.scene));
    if (w <= 0) w = scene.width;
    if (h <= 0) h = scene.height;
  }
  const bool given = o.width > 0 || o.height > 0;
  cli::check_host_memory(film_bytes(w, h), given ? "--width/--height" : "--scene", fmt::format("a film of {}x{}", w, h));
}

uint64_t strand_bytes_estimate(uint64_t strands) { return strands * kStrandBytesEstimate; }

}  // namespace mv
