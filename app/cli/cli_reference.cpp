// `megaview reference`: the ground truth of a scene, with progress (app/cli/progress.h) and a sidecar
// saying how it was made.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/session/capture.h"
#include "app/cli/cli.h"
#include "app/session/image_io.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/progress.h"
#include "render/pathtracer/scene_io.h"

namespace mv {

using Clock = std::chrono::steady_clock;

void run_reference(const ReferenceCommand& c) {
  const std::string json_path = sibling_path(c.out, "--out", ".exr", ".json");
  cli::check_output_file(c.out, "--out", c.force);
  cli::check_output_file(json_path, "--out (its JSON sidecar)", c.force);
  // --force replaces earlier outputs, never the scene being rendered.
  cli::check_distinct_files({{c.out, "--out"}, {json_path, "--out (its JSON sidecar)"}},
                            {{resolve_scene_path(c.session.scene), "--scene"}});
  check_film_memory(c.session);
  SessionOptions o = c.session;
  if (o.strategy.empty()) o.strategy = !o.force_cpu && gpu_available() ? "uniform" : "cpu-parallel";
  o.task.priority = PriorityFunction::None;  // every patch ends at the target: order only costs time
  Session s(o);

  const uint64_t total = static_cast<uint64_t>(s.width()) * s.height() * s.options().task.target_spp;
  Progress::Options po;
  po.first_after_s = 0.0;  // a reference is a long job by nature: progress from the start
  Progress progress("reference", static_cast<double>(total), "samples", po);
  const auto t0 = Clock::now();
  const FrameStats fs = s.run(0, 0, [&](const FrameStats& f) { progress.update(static_cast<double>(f.total_paths)); });
  progress.finish();
  const double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  const std::vector<float> linear = s.mean_image();
  nlohmann::json sidecar = session_report(s, default_display(s));
  sidecar["image"] = std::filesystem::path(c.out).filename().string();
  sidecar["elapsed_ms"] = elapsed_ms;
  const int w = static_cast<int>(s.width()), h = static_cast<int>(s.height());
  write_new_file(
      c.out, [&](const std::string& tmp) { write_exr(tmp, linear.data(), w, h); }, c.force);
  write_new_text_file(json_path, sidecar.dump(2) + "\n", c.force);
  fmt::print("{}, {}: {} {}x{}, {} spp, seed {}, {}, {:.1f} s ({:.1f} ms busy, {:.2f} Msamples/s)\n", c.out, json_path,
             s.scene().name, w, h, s.options().task.target_spp, s.options().task.seed, s.strategy().name,
             elapsed_ms * 1e-3, fs.total_busy_ms, msamples_per_second(fs.total_paths, fs.total_busy_ms));
}

}  // namespace mv
