// render/field/volume_filter.h.
#include "render/field/volume_filter.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/errors.h"

namespace mv {

Volume smooth_volume(const Volume& v, float sigma) {
  make_view(v);  // validates sizes and transform
  if (!(sigma >= 0.f && sigma <= 16.f)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sigma %g voxels is out of range [0, 16]", sigma);
    throw InputError(v.source, "smooth", buf);
  }
  Volume out = v;
  if (sigma == 0.f) return out;
  char tag[64];
  std::snprintf(tag, sizeof tag, " (gaussian sigma=%g voxels)", sigma);
  out.source += tag;
  const int r = static_cast<int>(std::ceil(3.f * sigma));
  std::vector<float> w(2 * r + 1);
  double sum = 0;
  for (int i = -r; i <= r; ++i) sum += w[i + r] = static_cast<float>(std::exp(-0.5 * i * i / (double(sigma) * sigma)));
  for (float& x : w) x = static_cast<float>(x / sum);

  const int n[3] = {v.nx, v.ny, v.nz};
  const size_t stride[3] = {1, static_cast<size_t>(v.nx), static_cast<size_t>(v.nx) * v.ny};
  std::vector<float> src = v.data, dst(src.size());
  for (int axis = 0; axis < 3; ++axis) {
    const int len = n[axis];
    const size_t st = stride[axis];
    // Lines along `axis`: indexed by the other two coordinates.
    const int a = axis == 0 ? 1 : 0, b = axis == 2 ? 1 : 2;
    const size_t lines = static_cast<size_t>(n[a]) * n[b];
    tbb::parallel_for(tbb::blocked_range<size_t>(0, lines, 64), [&](const tbb::blocked_range<size_t>& range) {
      for (size_t l = range.begin(); l != range.end(); ++l) {
        const size_t ia = l % n[a], ib = l / n[a];
        const size_t base = ia * stride[a] + ib * stride[b];
        for (int i = 0; i < len; ++i) {
          float acc = 0.f;
          for (int k = -r; k <= r; ++k) {
            const int j = i + k < 0 ? 0 : (i + k >= len ? len - 1 : i + k);
            acc += w[k + r] * src[base + j * st];
          }
          dst[base + i * st] = acc;
        }
      }
    });
    src.swap(dst);
  }
  out.data = std::move(src);
  return out;
}

}  // namespace mv
