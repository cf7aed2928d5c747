// `megaview render`: one image to PNG + EXR, with a summary line and the MSE against a reference.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/cli.h"
#include "sched/megakernel/megakernel_settings.h"
#include "app/session/image_io.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/progress.h"
#include "render/pathtracer/scene_io.h"
#include "render/tonemap.h"

namespace mv {

namespace {
/// What adaptive sampling did: its parameters, how many patches stopped below the target, and their spp.
void print_adaptive_summary(Session& s) {
  const PatchTaskParams& p = s.options().task;
  const std::vector<uint32_t>& spp = s.workload().film().host_patch_spp();
  const std::vector<uint32_t>& state = s.workload().film().host_patch_state();
  uint32_t stopped = 0, lo = ~0u, hi = 0;
  double sum = 0.0;
  for (size_t t = 0; t < spp.size(); ++t) {
    stopped += (state[t] & kPatchStopped) != 0 && spp[t] < p.target_spp ? 1u : 0u;
    lo = std::min(lo, spp[t]);
    hi = std::max(hi, spp[t]);
    sum += spp[t];
  }
  fmt::print("adaptive: noise threshold {}, min {} spp, a check every {} spp; {}/{} patches stopped below the "
             "target {} spp; spp per patch min {} mean {:.1f} max {}\n",
             p.noise_threshold, adaptive_min_spp(p.noise_threshold, p.target_spp), kAdaptiveCheckInterval, stopped,
             spp.size(), p.target_spp, lo, sum / static_cast<double>(spp.size()), hi);
}
}  // namespace

void run_render(const RenderCommand& c) {
  if (!(c.time_ms >= 0.0 && c.time_ms <= 1e7))
    throw InputError("", "--time-ms", fmt::format("must be a finite number in (0, 1e7] ms, got \"{}\"", c.time_ms));
  const std::string exr = sibling_path(c.out, "--out", ".png", ".exr");
  cli::check_output_file(c.out, "--out");  // refuse before rendering, not after
  cli::check_output_file(exr, "--out (its EXR)");
  if (!c.heat_out.empty()) {
    sibling_path(c.heat_out, "--heat-out", ".png", ".png");
    cli::check_output_file(c.heat_out, "--heat-out");
  }
  cli::check_distinct_files({{c.out, "--out"}, {exr, "--out (its EXR)"}, {c.heat_out, "--heat-out"}},
                            {{resolve_scene_path(c.session.scene), "--scene"}, {c.session.reference, "--reference"}});
  check_film_memory(c.session);
  Session s(c.session);
  const uint64_t remaining = s.workload().remaining_paths();
  const uint64_t max_paths = c.budget > 0.0 ? static_cast<uint64_t>(c.budget * static_cast<double>(remaining)) : 0;
  const uint64_t paths_goal = max_paths > 0 ? max_paths : remaining;
  // With --time-ms the busy time is the measure of progress, else the samples traced.
  Progress progress("render", c.time_ms > 0.0 ? c.time_ms : static_cast<double>(paths_goal),
                    c.time_ms > 0.0 ? "ms busy" : "samples");
  const auto t0 = std::chrono::steady_clock::now();
  const FrameStats fs = s.run(max_paths, c.time_ms, [&](const FrameStats& f) {
    const double by_paths = static_cast<double>(f.total_paths) / static_cast<double>(std::max<uint64_t>(paths_goal, 1));
    progress.update(c.time_ms > 0.0 ? std::max(f.total_busy_ms, by_paths * c.time_ms) : static_cast<double>(f.total_paths));
  });
  progress.finish();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<uint32_t> rgba;
  s.tonemap_to_host(default_display(s), rgba);
  const std::vector<float> linear = s.mean_image();
  const int w = static_cast<int>(s.width()), h = static_cast<int>(s.height());
  write_new_file(c.out, [&](const std::string& tmp) { write_png(tmp, rgba.data(), w, h); });
  try {
    write_new_file(exr, [&](const std::string& tmp) { write_exr(tmp, linear.data(), w, h); });
    if (!c.heat_out.empty()) {
      std::vector<uint32_t> heat(static_cast<size_t>(w) * h);
      heatmap_host(s.workload().film().host_view_synced(), s.options().task.target_spp, heat.data());
      write_new_file(c.heat_out, [&](const std::string& tmp) { write_png(tmp, heat.data(), w, h); });
    }
  } catch (...) {
    std::remove(c.out.c_str());  // the files are written together or not at all
    std::remove(exr.c_str());
    throw;
  }

  const double spp = static_cast<double>(fs.total_paths) / (static_cast<double>(w) * h);
  fmt::print(
      "{}, {}: {} {}x{}, {}:{}, {} paths ({:.2f} spp), {:.1f} ms busy ({:.1f} ms wall), {:.2f} Msamples/s, "
      "{}/{} patches finished\n",
      c.out, exr, s.scene().name, w, h, s.strategy().name, priority_name(s.options().task.priority), fs.total_paths,
      spp, fs.total_busy_ms, wall_ms, msamples_per_second(fs.total_paths, fs.total_busy_ms), fs.finished_tasks,
      fs.num_tasks);
  if (s.has_reference()) fmt::print("MSE {:.9e} (reference {})\n", s.mse(), s.reference_path());
  if (s.options().task.priority == PriorityFunction::Adaptive) print_adaptive_summary(s);
  if (const MegakernelControl* mk = s.megakernel()) {  // what the scheduler did (cumulative since the rebuild)
    const MegakernelStats& m = mk->stats();
    fmt::print("megakernel: grid {} blocks ({} worker warps, {} controllers), {} slices; sort passes {}/{}/{} "
               "(unsorted-unsorted/one sorted/sorted-sorted); time refusals {}, lock failures {}, restarts {}, "
               "not full {}; worker lock collisions {}",
               m.grid_blocks, m.worker_warps, m.controllers, m.slices, m.sort_passes[0], m.sort_passes[1],
               m.sort_passes[2], m.ctrl_time_refusals, m.ctrl_lock_failures, m.ctrl_restarts, m.ctrl_not_full,
               m.lock_collisions);
    if (m.order_score >= 0.0) fmt::print("; order score S of the last slice {:.4f} over {} dequeues", m.order_score, m.recorded);
    fmt::print("\n");
  }
}

}  // namespace mv
