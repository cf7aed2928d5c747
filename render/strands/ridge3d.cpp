// Host side of render/strands/ridge3d.h: parameter validation and the factory.
#include "render/strands/ridge3d.h"

#include <algorithm>
#include <cmath>

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
  w.strength_min = p.strength_min;
  w.tolerance = p.tolerance;
  w.max_step = p.max_step;
  w.max_steps = p.max_steps;
  w.strength_scale = p.strength_scale;
  return w;
}

}  // namespace mv
