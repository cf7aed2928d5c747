// The grey images of the gibbs workload's image and volume λ maps (app/session/gibbs_lambda.h).
#include "app/session/gibbs_lambda.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "base/errors.h"
#include "render/field/volume_io.h"

namespace mv {

LambdaGrid read_lambda_image(const std::string& path) {
  const char* want = "a PNG or JPEG file";
  if (path.empty()) throw InputError("", "--lambda-image", std::string("must be ") + want + ", got \"\"");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "--lambda-image", std::string("must be ") + want + ": " +
                                                 (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  int w = 0, h = 0, comp = 0;
  unsigned char* px = stbi_load(path.c_str(), &w, &h, &comp, 1);
  if (!px)
    throw InputError(path, "--lambda-image", std::string("must be ") + want + ": cannot decode (" +
                                                 stbi_failure_reason() + ")");
  LambdaGrid g;
  g.width = w;
  g.height = h;
  g.v.resize(static_cast<size_t>(w) * h);
  for (size_t i = 0; i < g.v.size(); ++i) g.v[i] = px[i] / 255.f;
  stbi_image_free(px);
  return g;
}

LambdaGrid read_lambda_slice(const std::string& volume, int axis, int index) {
  Volume v;
  try {
    v = load_volume(default_volume_path(volume));
  } catch (const InputError& e) {
    throw InputError("", "--volume", std::string("must be a volume name or a .nrrd/.nii(.gz) file: ") + e.what());
  }
  const int n[3] = {v.nx, v.ny, v.nz};
  if (axis < 0 || axis > 2) throw InputError("", "--slice-axis", "must be one of x, y, z, got " + std::to_string(axis));
  if (index == -1) index = n[axis] / 2;
  if (index < 0 || index >= n[axis])
    throw InputError("", "--slice", "must be in [0, " + std::to_string(n[axis] - 1) + "] (or -1: the middle) for " +
                                        v.source + " along " + "xyz"[axis] + ", got " + std::to_string(index));
  const int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;  // the slice's column and row axes
  LambdaGrid g;
  g.width = n[a];
  g.height = n[b];
  g.v.resize(static_cast<size_t>(g.width) * g.height);
  for (int row = 0; row < g.height; ++row)
    for (int col = 0; col < g.width; ++col) {
      int ijk[3];
      ijk[axis] = index;
      ijk[a] = col;
      ijk[b] = g.height - 1 - row;
      g.v[static_cast<size_t>(row) * g.width + col] =
          v.data[(static_cast<size_t>(ijk[2]) * v.ny + ijk[1]) * v.nx + ijk[0]];
    }
  for (float& x : g.v)
    if (!std::isfinite(x)) x = 0.f;
  const auto [lo, hi] = std::minmax_element(g.v.begin(), g.v.end());
  const float l = *lo, span = *hi - *lo;
  for (float& x : g.v) x = span > 0.f ? (x - l) / span : 1.f;
  return g;
}

}  // namespace mv
