// Host side of render/strands/ridge3d.h: parameter validation and the factory.
#include "render/strands/ridge3d.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "base/errors.h"
#include "render/strands/param_check.h"
#include "render/strands/volume_ray.h"

namespace mv {

namespace {
const char* const kContext = "ridge3d";
}

void Ridge3dParams::validate() const {
  using namespace param_check;
  range(kContext, "gx", gx, 1, 4096);
  range(kContext, "gy", gy, 1, 4096);
  range(kContext, "gz", gz, 1, 4096);
  if (kernel_max_derivative(kernel) < 2)
    throw InputError(kContext, "kernel",
                     std::string(kernel_name(kernel)) + " has no usable Hessian (ridges need ctmr or bspln3)");
  range(kContext, "strength_min", strength_min, 0.0, 1e30);
  range(kContext, "tolerance", tolerance, 0.0, 1e6, true);
  range(kContext, "max_step", max_step, 0.0, 1e6, true);
  range(kContext, "max_steps", max_steps, 1, 100000);
  range(kContext, "strength_scale", strength_scale, 0.0, 1e30, true);
  if (static_cast<uint64_t>(gx) * gy * gz > 0xffffffffull)
    throw InputError(kContext, "gx", "the seed grid has more than 2^32 - 1 particles");
}

void data_support_box(const VolumeView& v, KernelKind k, float threshold, Vec3& lo, Vec3& hi) {
  const IndexBox box = field_box(v, k);
  int mn[3] = {v.nx, v.ny, v.nz}, mx[3] = {-1, -1, -1};
  for (int z = 0; z < v.nz; ++z)
    for (int y = 0; y < v.ny; ++y)
      for (int x = 0; x < v.nx; ++x)
        if (std::fabs(v.at(x, y, z)) > threshold) {
          const int c[3] = {x, y, z};
          for (int a = 0; a < 3; ++a) mn[a] = std::min(mn[a], c[a]), mx[a] = std::max(mx[a], c[a]);
        }
  lo = box.lo;
  hi = box.hi;
  if (mx[0] < 0) return;
  const float r = static_cast<float>(kernel_radius(k));
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::fmax(box.lo[a], static_cast<float>(mn[a]) - r);
    hi[a] = std::fmin(box.hi[a], static_cast<float>(mx[a]) + r);
  }
}

Ridge3dStrands make_ridge3d(const VolumeView& volume, const Ridge3dParams& p) {
  p.validate();
  check_strand_volume(volume, p.kernel, kContext);
  Ridge3dStrands w;
  w.vol = volume;
  w.kernel = p.kernel;
  w.gx = p.gx, w.gy = p.gy, w.gz = p.gz;
  const IndexBox box = field_box(volume, p.kernel);
  w.lo = box.lo;
  w.hi = box.hi;
  if (p.seed_hi.x > p.seed_lo.x && p.seed_hi.y > p.seed_lo.y && p.seed_hi.z > p.seed_lo.z)
    for (int a = 0; a < 3; ++a) {
      w.lo[a] = std::fmin(std::fmax(p.seed_lo[a], box.lo[a]), box.hi[a]);
      w.hi[a] = std::fmax(std::fmin(p.seed_hi[a], box.hi[a]), w.lo[a]);
    }
  static_cast<Ridge3dRules&>(w) = p;
  return w;
}

}  // namespace mv

namespace mv {

std::vector<float> ridge3d_splats(const Ridge3dStrands& w, const std::vector<Ridge3dStrands::State>& state,
                                  const std::vector<WorkStatus>& status, const RayCamera& cam, float radius) {
  if (state.size() != status.size()) throw std::invalid_argument("ridge3d_splats: state and status sizes differ");
  if (!(radius > 0.f)) throw std::invalid_argument("ridge3d_splats: the splat radius must be > 0");
  const uint32_t width = cam.width, height = cam.height;
  const size_t pixels = static_cast<size_t>(width) * height;
  std::vector<float> rgba(pixels * 4, 0.f);
  for (size_t p = 0; p < pixels; ++p) rgba[4 * p + 3] = 1.f;
  // Camera space of every converged particle: depth z along w, image-plane x, y at distance 1.
  struct Splat {
    float z, x, y;
    Vec3 color;
  };
  std::vector<Splat> splats;
  float z_near = INFINITY, z_far = 0.f;
  for (size_t i = 0; i < state.size(); ++i) {
    if (status[i] != WorkStatus::Stable) continue;
    const Vec3 d = state[i].pos - cam.eye;
    const float z = dot(d, cam.w);
    if (!(z > 1e-3f)) continue;
    splats.push_back({z, dot(d, cam.u) / z, dot(d, cam.v) / z, w.color(state[i], status[i])});
    z_near = std::min(z_near, z);
    z_far = std::max(z_far, z);
  }
  // Pixel (i, j) looks along x = (2i + 1 − W)/H · tan_half, y = (H − 2j − 1)/H · tan_half (RayCamera::ray_dir).
  const float h = static_cast<float>(height), half_w = 0.5f * static_cast<float>(width), scale = 0.5f * h / cam.tan_half;
  std::vector<float> depth(pixels, INFINITY);
  const float span = z_far > z_near ? z_far - z_near : 1.f;
  for (const Splat& s : splats) {
    const float cx = s.x * scale + half_w - 0.5f, cy = 0.5f * h - s.y * scale - 0.5f;
    const float r = std::max(radius / s.z * scale, 0.5f);  // at least one pixel
    const float shade = 1.f - 0.55f * (s.z - z_near) / span;
    const int i0 = std::max(0, static_cast<int>(std::floor(cx - r))), i1 = std::min(static_cast<int>(width) - 1, static_cast<int>(std::ceil(cx + r)));
    const int j0 = std::max(0, static_cast<int>(std::floor(cy - r))), j1 = std::min(static_cast<int>(height) - 1, static_cast<int>(std::ceil(cy + r)));
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        const float dx = static_cast<float>(i) - cx, dy = static_cast<float>(j) - cy;
        if (dx * dx + dy * dy > r * r) continue;
        const size_t p = static_cast<size_t>(j) * width + static_cast<size_t>(i);
        if (s.z >= depth[p]) continue;
        depth[p] = s.z;
        rgba[4 * p + 0] = s.color.x * shade;
        rgba[4 * p + 1] = s.color.y * shade;
        rgba[4 * p + 2] = s.color.z * shade;
      }
  }
  return rgba;
}

}  // namespace mv
