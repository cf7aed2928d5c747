// `megaview allocation-bound`: renders the scene uniformly, estimates per-pixel variance from the film
// and prints the fewest samples, relative to uniform sampling, with which any allocation could reach
// uniform's MSE (render/pathtracer/allocation_bound.h) — the limit of every priority function on that scene.
#include <fmt/format.h>

#include "app/cli/cli.h"
#include "app/cli/progress.h"
#include "render/pathtracer/allocation_bound.h"
#include "render/gpu.h"

namespace mv {

void run_allocation_bound(const AllocationBoundCommand& c) {
  SessionOptions o = c.session;
  if (o.strategy.empty()) o.strategy = !o.force_cpu && gpu_available() ? "uniform" : "cpu-parallel";
  check_film_memory(o);
  Session s(o);
  Progress progress("allocation-bound", static_cast<double>(s.workload().remaining_paths()), "samples");
  const FrameStats fs = s.run(0, 0.0, [&](const FrameStats& f) { progress.update(static_cast<double>(f.total_paths)); });
  progress.finish();
  const AllocationBound b = allocation_bound(s.workload().film().host_view_synced());
  fmt::print("{} {}x{}, {} spp ({}, {:.1f} ms busy): mean one-sample variance {:.6g} over {} pixels\n",
             s.scene().name, s.width(), s.height(), s.options().task.target_spp, s.strategy().name, fs.total_busy_ms,
             b.mean_variance, b.pixels_used);
  fmt::print("fewest samples for uniform's MSE, relative to uniform (Neyman allocation): {:.4f} per 4x4 patch, "
             "{:.4f} per pixel\n",
             b.patch_ratio, b.pixel_ratio);
}

}  // namespace mv
