// Host helpers of render/field/volume.h.
#include "render/field/volume.h"

#include <cmath>
#include <string>

#include "base/errors.h"

namespace mv {

VolumeView make_view(const Volume& v) {
  if (v.nx <= 0 || v.ny <= 0 || v.nz <= 0)
    throw InputError(v.source, "dimensions",
                     "non-positive size " + std::to_string(v.nx) + "x" + std::to_string(v.ny) + "x" +
                         std::to_string(v.nz));
  const size_t n = static_cast<size_t>(v.nx) * v.ny * v.nz;
  if (v.data.size() != n)
    throw InputError(v.source, "data",
                     std::to_string(v.data.size()) + " samples for a " + std::to_string(v.nx) + "x" +
                         std::to_string(v.ny) + "x" + std::to_string(v.nz) + " grid");
  const Affine3& a = v.index_to_world;
  bool finite = std::isfinite(a.origin.x) && std::isfinite(a.origin.y) && std::isfinite(a.origin.z);
  double scale = 0.0;  // largest column length, to judge the determinant relative to the spacings
  for (int c = 0; c < 3; ++c) {
    double len2 = 0.0;
    for (int r = 0; r < 3; ++r) {
      finite = finite && std::isfinite(a.m[3 * r + c]);
      len2 += double(a.m[3 * r + c]) * a.m[3 * r + c];
    }
    scale = std::fmax(scale, std::sqrt(len2));
  }
  const double det = a.determinant();
  if (!finite || !(std::fabs(det) > 1e-6 * scale * scale * scale))
    throw InputError(v.source, "index_to_world",
                     "the index-to-world matrix is singular or not finite (determinant " + std::to_string(det) + ")");
  VolumeView view;
  view.data = v.data.data();
  view.source = v.source.empty() ? nullptr : v.source.c_str();
  view.nx = v.nx;
  view.ny = v.ny;
  view.nz = v.nz;
  view.index_to_world = a;
  view.world_to_index = a.inverse();
  return view;
}

}  // namespace mv
