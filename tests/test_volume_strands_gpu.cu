// Volume strand workloads on the GPU: vr-lite-cam and illust-vr built on a DeviceVolume run in CUDA
// kernels of this file (run to completion: one thread per strand; and BSP: one launch per super-step,
// the state kept in device memory between launches), compared with run_item on the CPU. Compiling this
// file also checks that the workload headers are valid device code. Skipped without a GPU.
//
// Tolerance (why not bitwise): nvcc contracts the probe's multiply-adds into FMAs, the host compiler does
// not, so field values differ by rounding (≈1e-6 relative). A strand's step count changes only where the
// accumulated opacity lands within that rounding of the threshold or a sample position within it of the
// box's end. Stated bounds: per strand |Δsteps| ≤ 2 and identical step counts for ≥ 99.5 % of the strands;
// colours within 2e-3 for ≥ 99.5 % of the pixels, every pixel within 0.1 (one sample more or less at
// termination moves a colour by at most (1 − 0.95)·(ka + kd + ks) ≈ 0.06); mean |Δcolour| ≤ 2e-4;
// μ of the steps within 0.1 %. The two GPU kernels run the same device code and must agree bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "sched/gpu/gpu_common.cuh"
#include "app/session/volume_strand_workloads.h"
#include "render/field/device_volume.h"
#include "render/field/volume_io.h"
#include "test_support.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

template <class W>
__global__ void run_to_completion_kernel(W w, typename W::State* state, WorkStatus* status, uint32_t* steps, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  typename W::State s;
  uint32_t k = 0;
  status[i] = run_item(w, i, s, k, 100000u);
  state[i] = s;
  steps[i] = k;
}

template <class W>
__global__ void init_kernel(W w, typename W::State* state, WorkStatus* status, uint32_t* steps, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  state[i] = w.init(i);
  status[i] = WorkStatus::Active;
  steps[i] = 0;
}

/// One BSP super-step: every active strand updates once; `active` counts those still active after it.
template <class W>
__global__ void step_kernel(W w, typename W::State* state, WorkStatus* status, uint32_t* steps, uint32_t n,
                            unsigned int* active) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || status[i] != WorkStatus::Active) return;
  typename W::State s = state[i];
  const WorkStatus st = w.update(s);
  state[i] = s;
  status[i] = st;
  ++steps[i];
  if (st == WorkStatus::Active) atomicAdd(active, 1u);
}

template <class W>
struct GpuRun {
  std::vector<typename W::State> state;
  std::vector<WorkStatus> status;
  std::vector<uint32_t> steps;
  uint32_t super_steps = 0;
};

template <class W>
GpuRun<W> run_gpu(const W& w, bool bsp) {
  const uint32_t n = w.num_strands();
  DeviceBuffer<typename W::State> d_state(n);
  DeviceBuffer<WorkStatus> d_status(n);
  DeviceBuffer<uint32_t> d_steps(n);
  const uint32_t block = 128, grid = (n + block - 1) / block;
  GpuRun<W> r;
  if (!bsp) {
    run_to_completion_kernel<<<grid, block>>>(w, d_state.data(), d_status.data(), d_steps.data(), n);
    MV_CUDA_CHECK_LAUNCH();
  } else {
    init_kernel<<<grid, block>>>(w, d_state.data(), d_status.data(), d_steps.data(), n);
    MV_CUDA_CHECK_LAUNCH();
    DeviceBuffer<unsigned int> d_active(1);
    for (unsigned int active = 1; active > 0 && r.super_steps < 100000; ++r.super_steps) {
      d_active.zero();
      step_kernel<<<grid, block>>>(w, d_state.data(), d_status.data(), d_steps.data(), n, d_active.data());
      MV_CUDA_CHECK_LAUNCH();
      d_active.download(&active, 1);
      MV_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  download_strand_arrays(d_state, d_status, d_steps, n, r.state, r.status, r.steps);
  return r;
}

/// Compares a GPU run of `dev` (device volume) with the CPU run of `host` (same parameters, host volume)
/// within the bounds stated at the top of this file; also checks that BSP and run-to-completion agree
/// bitwise.
template <class W>
void expect_gpu_matches_cpu(const W& host, const W& dev, const std::string& what) {
  const auto cpu = test::run_all_cpu(host);
  const GpuRun<W> gpu = run_gpu(dev, false);
  const GpuRun<W> bsp = run_gpu(dev, true);
  const uint32_t n = host.num_strands();
  ASSERT_EQ(gpu.steps.size(), n);
  EXPECT_EQ(std::memcmp(gpu.state.data(), bsp.state.data(), n * sizeof(typename W::State)), 0) << what;
  EXPECT_EQ(gpu.steps, bsp.steps) << what;
  uint32_t max_steps = 0;
  for (uint32_t s : gpu.steps) max_steps = std::max(max_steps, s);
  EXPECT_EQ(bsp.super_steps, max_steps) << what;  // the last super-step leaves no strand active

  uint32_t same_steps = 0, close_colour = 0, worst_steps = 0;
  double sum_diff = 0, worst_colour = 0, cpu_total = 0, gpu_total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(gpu.status[i], cpu.status[i]) << what << " strand " << i;
    const uint32_t ds = gpu.steps[i] > cpu.steps[i] ? gpu.steps[i] - cpu.steps[i] : cpu.steps[i] - gpu.steps[i];
    worst_steps = std::max(worst_steps, ds);
    same_steps += ds == 0;
    cpu_total += cpu.steps[i];
    gpu_total += gpu.steps[i];
    const Vec3 g = host.color(gpu.state[i], gpu.status[i]), c = cpu.color[i];
    const double d = std::fmax(std::fabs(g.x - c.x), std::fmax(std::fabs(g.y - c.y), std::fabs(g.z - c.z)));
    worst_colour = std::fmax(worst_colour, d);
    close_colour += d <= 2e-3;
    sum_diff += d;
  }
  std::printf("[ %s ] %u strands: steps identical %.3f %%, worst |dsteps| %u; colour within 2e-3 %.3f %%, worst %.2e, "
              "mean %.2e; mu CPU %.3f GPU %.3f\n",
              what.c_str(), n, 100.0 * same_steps / n, worst_steps, 100.0 * close_colour / n, worst_colour, sum_diff / n,
              cpu_total / n, gpu_total / n);
  EXPECT_LE(worst_steps, 2u) << what;
  EXPECT_GE(same_steps, 0.995 * n) << what;
  EXPECT_GE(close_colour, 0.995 * n) << what;
  EXPECT_LE(worst_colour, 0.1) << what;
  EXPECT_LE(sum_diff / n, 2e-4) << what;
  EXPECT_NEAR(gpu_total / n, cpu_total / n, 1e-3 * cpu_total / n) << what;
}

TEST(DeviceVolumeGpu, UploadsTheSamplesAndKeepsTheTransform) {
  MV_REQUIRE_GPU();
  const Volume v = test::sphere_volume();
  DeviceVolume d(v);
  const VolumeView h = make_view(v);
  EXPECT_EQ(d.view().nx, h.nx);
  EXPECT_EQ(d.view().nz, h.nz);
  EXPECT_EQ(std::memcmp(&d.view().world_to_index, &h.world_to_index, sizeof(Affine3)), 0);
  EXPECT_NE(d.view().data, h.data);
  EXPECT_EQ(d.bytes(), v.bytes());
  std::vector<float> back(v.data.size());
  MV_CUDA_CHECK(cudaMemcpy(back.data(), d.view().data, d.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, v.data);
  DeviceVolume moved(std::move(d));
  EXPECT_EQ(d.view().data, nullptr);
  EXPECT_NE(moved.view().data, nullptr);
}

TEST(VolumeStrandsGpu, SphereMatchesTheCpu) {
  MV_REQUIRE_GPU();
  const Volume v = test::sphere_volume();
  const DeviceVolume dv(v);
  const VolumeView hv = make_view(v);
  VrLiteCamParams vp = test::sphere_vr_params(65);
  vp.tf.points = {{-8.f, {1.f, 0.8f, 0.5f}, 0.3f}, {0.f, {0.5f, 0.6f, 1.f}, 0.05f}, {1.f, Vec3{1.f}, 0.f}};
  expect_gpu_matches_cpu(make_vr_lite_cam(hv, vp), make_vr_lite_cam(dv.view(), vp), "sphere vr-lite-cam");
  const IllustVrParams ip = test::sphere_illust_params(65);
  expect_gpu_matches_cpu(make_illust_vr(hv, ip), make_illust_vr(dv.view(), ip), "sphere illust-vr");
}

TEST(VolumeStrandsGpu, Ch2MatchesTheCpu) {
  MV_REQUIRE_GPU();
  std::string why;
  const std::string path = test::ch2_path(why);
  if (path.empty()) GTEST_SKIP() << why;
  const Volume v = load_volume(path);
  const DeviceVolume dv(v);
  const VolumeView hv = make_view(v);
  VrLiteCamParams vp;
  vp.width = 230, vp.height = 180;  // half of 460 × 360 per side
  expect_gpu_matches_cpu(make_vr_lite_cam(hv, vp), make_vr_lite_cam(dv.view(), vp), "ch2 vr-lite-cam 230x180");
  IllustVrParams ip;
  ip.width = 320, ip.height = 240;  // half of 640 × 480 per side
  expect_gpu_matches_cpu(make_illust_vr(hv, ip), make_illust_vr(dv.view(), ip), "ch2 illust-vr 320x240");
}

TEST(VolumeStrandsGpu, SharedCh2WorkloadsRunOnTheDevice) {
  MV_REQUIRE_GPU();
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const VolumeView& d = shared_volume_view("ch2", Side::Device);
  EXPECT_EQ(&d, &shared_volume_view("ch2", Side::Device));  // uploaded once
  EXPECT_NE(d.data, shared_volume_view("ch2", Side::Host).data);
  expect_gpu_matches_cpu(vr_lite_cam_workload(92, 72, Side::Host), vr_lite_cam_workload(92, 72, Side::Device),
                         "shared ch2 vr-lite-cam 92x72");
  expect_gpu_matches_cpu(illust_vr_workload(128, 96, Side::Host), illust_vr_workload(128, 96, Side::Device),
                         "shared ch2 illust-vr 128x96");
}

}  // namespace
}  // namespace mv
