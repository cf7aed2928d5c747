// `megaview bench`: full renders per strategy, timed by the Session's busy time, as a table of medians.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "app/cli/cli.h"
#include "app/cli/figures.h"
#include "app/cli/cli_validate.h"
#include "app/session/params_report.h"
#include "app/session/output_file.h"
#include "app/cli/progress.h"

namespace mv {

namespace {

struct Run {
  double busy_ms, wall_ms;
  uint64_t paths;
  double msps() const { return msamples_per_second(paths, busy_ms); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void print_header(const Session& s, uint64_t paths_per_render, const char* priority, int repeat) {
  fmt::print("bench: {} {}x{}, {} spp ({:.1f} Mpaths a render), priority {}, {} repeats after a warm-up of 10 %\n",
             s.scene().name, s.width(), s.height(), s.options().task.target_spp, paths_per_render * 1e-6, priority,
             repeat);
  fmt::print(
      "timed: the Session's busy time = strategy steps only (CUDA events on the GPU, wall clock on the CPU);\n"
      "       excludes scene loading, film allocation, display and the warm-up\n");
  fmt::print("{:<16} {:>12} {:>10} {:>10} {:>12} {:>10} {:>9}\n", "strategy", "median ms", "min ms", "max ms",
             "Msamples/s", "wall ms", "relative");
}

}  // namespace

void run_bench(const BenchCommand& c) {
  if (c.repeat < 1) throw InputError("", "--repeat", "must be at least 1");
  if (!c.csv.empty()) {
    cli::check_output_file(c.csv, "--csv");
    ensure_absent(figure_metadata_path(c.csv));
  }
  check_film_memory(c.session);
  const std::vector<std::string> names = !c.strategies.empty()                     ? c.strategies
                                         : !c.session.force_cpu && gpu_available() ? strategies_on(Side::Device)
                                                                                   : strategies_on(Side::Host);
  for (const std::string& n : names) patch_strategies().find(n);  // unknown names fail before any work

  std::string csv = "strategy,priority,repeat,busy_ms,wall_ms,paths,msamples_per_s,knobs\n";
  const char* priority = priority_name(c.session.task.priority);
  double first_msps = 0.0;
  // Progress in renders: a tenth for each warm-up, one for each timed repeat.
  Progress progress("bench", static_cast<double>(names.size()) * (c.repeat + 0.1), "renders");
  double renders_done = 0.0;
  const auto render_progress = [&](double share, uint64_t goal) {
    return [&progress, &renders_done, share, goal](const FrameStats& f) {
      progress.update(renders_done + share * static_cast<double>(f.total_paths) / static_cast<double>(std::max<uint64_t>(goal, 1)));
    };
  };
  for (size_t k = 0; k < names.size(); ++k) {
    SessionOptions o = c.session;
    o.strategy = names[k];
    {
      Session warm(o);  // untimed: a tenth of a render (CUDA module loading, TBB's thread pool, caches)
      const uint64_t total = static_cast<uint64_t>(warm.width()) * warm.height() * warm.options().task.target_spp;
      if (k == 0) print_header(warm, total, priority, c.repeat);
      warm.run(std::max<uint64_t>(1, total / 10), 0.0, render_progress(0.1, std::max<uint64_t>(1, total / 10)));
      renders_done += 0.1;
    }
    std::vector<Run> runs;
    for (int r = 0; r < c.repeat; ++r) {
      Session s(o);
      const uint64_t goal = s.workload().remaining_paths();
      const auto t0 = std::chrono::steady_clock::now();
      // Development switch: MEGAVIEW_BENCH_TRACE=FILE appends a line per frame (busy time, paths, finished tasks).
      const char* trace = std::getenv("MEGAVIEW_BENCH_TRACE");
      const bool tracing = trace && *trace;
      std::string frames;
      const auto progress_of_run = render_progress(1.0, goal);
      const FrameStats fs = s.run(0, 0.0, [&](const FrameStats& f) {
        progress_of_run(f);
        if (tracing) {
          const std::vector<uint32_t>& spp = s.workload().film().host_patch_spp();
          const auto [lo, hi] = std::minmax_element(spp.begin(), spp.end());
          size_t behind = 0;
          for (uint32_t n : spp) behind += n + 64 < *hi;
          frames += fmt::format("{},{},{:.3f},{},{},{},{},{},{},{}\n", names[k], r, f.total_busy_ms, f.total_paths, f.finished_tasks,
                                f.num_tasks, *lo, *hi, behind, lo - spp.begin());
        }
      });
      if (tracing) {
        std::FILE* tf = std::fopen(trace, "a");
        if (tf) {
          std::fputs(frames.c_str(), tf);
          std::fclose(tf);
        }
      }
      renders_done += 1.0;
      const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      runs.push_back({fs.total_busy_ms, wall, fs.total_paths});
      csv += fmt::format("{},{},{},{:.3f},{:.3f},{},{:.4f},{}\n", names[k], priority, r, fs.total_busy_ms, wall,
                         fs.total_paths, runs.back().msps(), params_text(s.strategy_params()));
    }
    std::vector<double> busy, wall, msps;
    for (const Run& r : runs) busy.push_back(r.busy_ms), wall.push_back(r.wall_ms), msps.push_back(r.msps());
    const double m = median(msps);
    if (k == 0) first_msps = m;
    fmt::print("{:<16} {:>12.2f} {:>10.2f} {:>10.2f} {:>12.2f} {:>10.2f} {:>8.2f}x\n", names[k], median(busy),
               *std::min_element(busy.begin(), busy.end()), *std::max_element(busy.begin(), busy.end()), m,
               median(wall), first_msps > 0 ? m / first_msps : 0.0);
    std::fflush(stdout);  // one row per strategy as it finishes
  }
  progress.finish();
  if (!c.csv.empty()) {
    write_new_text_file(c.csv, csv);
    FigureMetadata meta;  // a table, no figure
    meta.kind = meta.subcommand = "bench";
    if (!c.session.force_cpu && gpu_available()) meta.gpu = gpu_info().name;
    meta.units = {{"strategy", "name"}, {"priority", "name"}, {"repeat", "run index"}, {"busy_ms", "ms"},
                  {"wall_ms", "ms"}, {"paths", "paths"}, {"msamples_per_s", "million samples per second"},
                  {"knobs", "name=value;… of the strategy's knobs (base/params.h)"}};
    write_figure_metadata(c.csv, meta);
    fmt::print("wrote {}, {}\n", c.csv, figure_metadata_path(c.csv));
  }
}

}  // namespace mv
