// Continuous fields on the GPU: the same MV_HD probe (render/field/field.h) and curvature
// (render/field/curvature.h) code run in a CUDA kernel gives the CPU's results, for every kernel. Compiling
// this file also checks that the field headers are valid device code. Skipped without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "render/field/analytic.h"
#include "render/field/curvature.h"
#include "render/field/field.h"
#include "render/field/volume_io.h"
#include "test_support.h"

namespace mv {
namespace {

struct ProbeOut {
  FieldSample s;
  Curvature c;
  int inside = 0;
};

__global__ void probe_kernel(VolumeView v, KernelKind k, const Vec3* pos, ProbeOut* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ProbeOut o;
  o.s = probe(v, k, pos[i], 2);
  o.c = principal_curvatures(o.s.gradient, o.s.hessian);
  o.inside = inside(v, k, pos[i]) ? 1 : 0;
  out[i] = o;
}

TEST(FieldGpu, ProbesAndCurvaturesMatchTheCpu) {
  MV_REQUIRE_GPU();
  const TorusDistance t{{0.f, 0.f, 0.f}, {0.2f, 0.1f, 1.f}, 3.f, 1.f};
  const int n = 41;
  const Volume vol = sample_volume(t, n, n, n, centred_grid(n, n, n, {0.22f, 0.25f, 0.2f}, t.centre, {1, 1, 0}, 0.4f));
  check_volume_fits(vol, true);
  DeviceBuffer<float> data;
  data.upload(vol.data);
  VolumeView dv = make_view(vol);
  const VolumeView hv = dv;
  dv.data = data.data();

  std::mt19937 rng(41);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  std::vector<Vec3> pos(4096);
  for (Vec3& p : pos) p = {u(rng), u(rng), u(rng)};
  DeviceBuffer<Vec3> dpos;
  dpos.upload(pos);
  DeviceBuffer<ProbeOut> dout(pos.size());
  for (KernelKind k : all_kernels()) {
    probe_kernel<<<(pos.size() + 127) / 128, 128>>>(dv, k, dpos.data(), dout.data(), int(pos.size()));
    MV_CUDA_CHECK_LAUNCH();
    std::vector<ProbeOut> out(pos.size());
    dout.download(out.data(), out.size());
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    int failures = 0;
    for (size_t i = 0; i < pos.size(); ++i) {
      const FieldSample c = probe(hv, k, pos[i], 2);
      const FieldSample& g = out[i].s;
      // The device contracts multiply-adds into FMAs, the host does not: agreement to rounding.
      const float tol = 1e-4f;
      bool ok = out[i].inside == (inside(hv, k, pos[i]) ? 1 : 0) && fabsf(g.value - c.value) < tol;
      for (int a = 0; a < 3; ++a) ok = ok && fabsf(g.gradient[a] - c.gradient[a]) < tol;
      for (int r = 0; r < 3; ++r)
        for (int s = r; s < 3; ++s) ok = ok && fabsf(g.hessian(r, s) - c.hessian(r, s)) < 10 * tol;
      if (!ok && ++failures <= 5)
        ADD_FAILURE() << kernel_name(k) << " at (" << pos[i].x << ", " << pos[i].y << ", " << pos[i].z
                      << "): GPU value " << g.value << ", CPU " << c.value;
    }
    EXPECT_EQ(failures, 0) << kernel_name(k);
  }
}

}  // namespace
}  // namespace mv
