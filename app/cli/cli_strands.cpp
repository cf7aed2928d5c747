// `megaview strands` (app/cli/cli_strands.h).
#include "app/cli/cli_strands.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/session/image_io.h"
#include "app/cli/progress.h"
#include "app/session/output_file.h"
#include "base/errors.h"
#include "render/field/volume_filter.h"
#include "render/field/volume_io.h"
#include "render/strands/illust_vr.h"
#include "render/strands/lic2d.h"
#include "render/strands/mandelbrot.h"
#include "render/strands/vr_lite_cam.h"
#include "app/session/strand_view.h"
#include "app/session/volume_strand_workloads.h"

namespace mv {

namespace {

struct Stats {
  uint64_t count = 0, total = 0;
  uint32_t min = 0, max = 0;
  double mean = 0, sigma = 0, cv = 0;
};

Stats stats_of(const std::vector<uint32_t>& steps) {
  Stats s;
  s.count = steps.size();
  if (steps.empty()) return s;
  s.min = steps[0];
  long double sum2 = 0;
  for (uint32_t x : steps) {
    s.total += x;
    sum2 += static_cast<long double>(x) * x;
    s.min = x < s.min ? x : s.min;
    s.max = x > s.max ? x : s.max;
  }
  s.mean = static_cast<double>(s.total) / s.count;
  s.sigma = std::sqrt(std::fmax(0.0, static_cast<double>(sum2 / s.count) - s.mean * s.mean));
  s.cv = s.mean > 0 ? s.sigma / s.mean : 0;
  return s;
}

/// Runs every strand of `w` to completion (run_item) on all cores; RGBA8 image and per-strand steps, and
/// with `keep` every strand's final state and status.
template <class W>
double run_all(const W& w, uint32_t width, uint32_t height, std::vector<uint32_t>& rgba, std::vector<uint32_t>& steps,
               StrandRun<W>* keep = nullptr) {
  const uint32_t n = w.num_strands();
  if (keep) keep->state.resize(n), keep->status.resize(n);
  Progress progress("strands", n, "strands");
  std::atomic<uint64_t> finished{0};
  rgba.assign(static_cast<size_t>(width) * height, 0xff000000u);
  steps.assign(n, 0);
  const auto q = [](float v) -> uint32_t {
    const float c = v > 0.f ? (v < 1.f ? v : 1.f) : 0.f;  // NaN → 0
    return static_cast<uint32_t>(c * 255.f + 0.5f);
  };
  const auto t0 = std::chrono::steady_clock::now();
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, n, 256), [&](const tbb::blocked_range<uint32_t>& r) {
    for (uint32_t i = r.begin(); i != r.end(); ++i) {
      typename W::State s;
      uint32_t k = 0;
      const WorkStatus st = run_item(w, i, s, k);
      steps[i] = k;
      if (keep) keep->state[i] = s, keep->status[i] = st;
      if (st == WorkStatus::Dead) continue;
      const Vec3 c = w.color(s, st);
      rgba[w.pixel(i)] = q(c.x) | (q(c.y) << 8) | (q(c.z) << 16) | (255u << 24);
    }
    progress.update(static_cast<double>(finished += r.size()));
  });
  progress.finish();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void parse_size(const std::string& s, uint32_t& w, uint32_t& h) {
  unsigned a = 0, b = 0;
  char x = 0, extra = 0;
  if (std::sscanf(s.c_str(), "%u%c%u%c", &a, &x, &b, &extra) != 3 || x != 'x' || a < 1 || b < 1 || a > 16384 ||
      b > 16384)
    throw InputError("", "--size", "'" + s + "' is not WxH with width and height in [1, 16384]");
  w = a;
  h = b;
}

struct Paper {
  const char* name;
  double mean, sigma, cv;
};
// Lehmann 2023 Fig 3.2 (their volumes and cameras, not ch2: for orientation only).
constexpr Paper kPaper[] = {{"illust-vr", 775.904, 378.906, 0.488},
                            {"vr-lite-cam", 457.903, 311.090, 0.679},
                            {"mandelbrot", 284.571, 679.472, 2.388},
                            {"lic2d", 9.975, 0.474, 0.048},
                            {"ridge3d", 8.155, 5.939, 0.728}};

}  // namespace

void run_strands(const StrandsCommand& c) {
  const bool volume_workload = c.workload == "vr-lite-cam" || c.workload == "illust-vr";
  if (!volume_workload && c.workload != "mandelbrot" && c.workload != "lic2d" && c.workload != "ridge3d")
    throw InputError("", "--workload",
                     "unknown workload '" + c.workload + "' (allowed: " + kStrandsCommandWorkloads + ")");
  if (c.step_voxels != 0.f && !(c.step_voxels >= kMinStrandStepVoxels && c.step_voxels <= 16.f))
    throw InputError("", "--step", fmt::format("must be a finite number in [{:g}, 16] voxels, got \"{}\"",
                                               kMinStrandStepVoxels, c.step_voxels));
  if (!(std::isfinite(c.distance) && c.distance >= 0.f))
    throw InputError("", "--distance", fmt::format("must be a finite number > 0, got \"{}\"", c.distance));
  if (!(c.azimuth >= -360.f && c.azimuth <= 360.f))
    throw InputError("", "--azimuth", fmt::format("must be a finite number in [-360, 360] degrees, got \"{}\"", c.azimuth));
  if (!(c.elevation >= -89.f && c.elevation <= 89.f))
    throw InputError("", "--elevation", fmt::format("must be a finite number in [-89, 89] degrees, got \"{}\"", c.elevation));
  if (!(c.smooth >= 0.f && c.smooth <= 16.f))
    throw InputError("", "--smooth", fmt::format("must be a finite number in [0, 16] voxels, got \"{}\"", c.smooth));
  if (c.out.empty()) throw InputError("", "--out", "give the output PNG");
  cli::check_output_file(c.out, "--out");
  uint32_t width = 0, height = 0;
  if (!c.size.empty()) parse_size(c.size, width, height);
  if (width > 0)
    cli::check_host_memory(strand_bytes_estimate(uint64_t{width} * height), "--size",
                           fmt::format("{}x{} strands", width, height));

  std::vector<uint32_t> rgba, steps;
  double ms = 0;
  std::string what;
  if (volume_workload) {
    const std::string path = default_volume_path(c.volume);
    const Volume vol = smooth_volume(load_volume(path), c.smooth);
    const VolumeView view = make_view(vol);
    const float distance = c.distance > 0.f ? c.distance : (c.volume == "ch2" ? kCh2Distance : 0.f);
    const PinholeCamera cam = orbit_camera(view, c.azimuth, c.elevation, distance, kCh2Fov);
    char buf[512];
    std::snprintf(buf, sizeof buf, "volume %s (%dx%dx%d), smooth %g, camera azimuth %g elevation %g distance %g eye (%.1f, %.1f, %.1f)",
                  path.c_str(), vol.nx, vol.ny, vol.nz, c.smooth, c.azimuth, c.elevation, length(cam.eye - cam.look_at),
                  cam.eye.x, cam.eye.y, cam.eye.z);
    what = buf;
    // Both volume workloads take the same size, kernel, step and camera options.
    auto run_volume = [&](auto p, auto make) {
      if (width) p.width = width, p.height = height;
      if (!c.kernel.empty()) p.kernel = parse_kernel(c.kernel, "--kernel");
      if (c.step_voxels > 0.f) p.step_voxels = c.step_voxels;
      p.camera = cam;
      const auto w = make(view, p);
      width = p.width, height = p.height;
      what += std::string(", kernel ") + kernel_name(p.kernel) + ", step " + std::to_string(p.step_voxels) + " voxel";
      ms = run_all(w, width, height, rgba, steps);
    };
    if (c.workload == "vr-lite-cam")
      run_volume(VrLiteCamParams{}, [](const VolumeView& v, const VrLiteCamParams& q) { return make_vr_lite_cam(v, q); });
    else
      run_volume(IllustVrParams{}, [](const VolumeView& v, const IllustVrParams& q) { return make_illust_vr(v, q); });
  } else if (c.workload == "ridge3d") {
    // The particles on ch2 (pre-blurred, as the registry's ridge3d), drawn as splats through the default view.
    if (!width) width = 120, height = 14400;
    const Ridge3dStrands w = ridge3d_workload(width, height, Side::Host);
    what = fmt::format("ch2 blurred by {:g} voxels, {}x{}x{} seeds, image: converged particles as splats, {}x{}",
                       kRidge3dCh2Smooth, w.gx, w.gy, w.gz, kRidge3dViewWidth, kRidge3dViewHeight);
    StrandRun<Ridge3dStrands> run;
    ms = run_all(w, width, height, rgba, steps, &run);
    StrandResult picture;
    add_view_image(w, run, StrandViewParams{}, picture);
    rgba = strand_image_rgba8(picture);
    width = picture.view_width, height = picture.view_height;
  } else if (c.workload == "lic2d") {
    Lic2dStrands w;
    if (width) w.width = width, w.height = height;
    w.validate();
    width = w.width, height = w.height;
    what = fmt::format("cellular flow {}x{} cells, {} midpoint steps of {:g} pixel, noise seed {:#x}", w.cells_x,
                       w.cells_y, w.steps, w.h, w.seed);
    ms = run_all(w, width, height, rgba, steps);
  } else {
    MandelbrotParams p;
    if (width) p.width = width, p.height = height;
    const MandelbrotStrands w{p};
    width = p.width, height = p.height;
    what = "view [" + std::to_string(p.x0) + ", " + std::to_string(p.x1) + "] x [" + std::to_string(p.y0) + ", " +
           std::to_string(p.y1) + "], cap " + std::to_string(p.max_iterations);
    ms = run_all(w, width, height, rgba, steps);
  }
  write_new_file(c.out, [&](const std::string& tmp) { write_png(tmp, rgba.data(), static_cast<int>(width), static_cast<int>(height)); });

  const Stats s = stats_of(steps);
  std::printf("workload %s, %ux%u = %llu strands, %s\n", c.workload.c_str(), width, height,
              static_cast<unsigned long long>(s.count), what.c_str());
  std::printf("CPU (TBB, run_item per strand): %.1f ms, %llu updates\n", ms, static_cast<unsigned long long>(s.total));
  std::printf("steps per strand (Lehmann 2023 Fig 3.2): mu %.3f  sigma %.3f  CV %.3f  min %u  max %u\n", s.mean, s.sigma,
              s.cv, s.min, s.max);
  for (const Paper& p : kPaper)
    if (c.workload == p.name)
      std::printf("paper (its own volume and camera): mu %.3f  sigma %.3f  CV %.3f\n", p.mean, p.sigma, p.cv);
  std::printf("wrote %s\n", c.out.c_str());
}

}  // namespace mv
