// `megaview sched-bench`: Kerbl 2012 §6.2 (Figs 4 and 5) on the GPU. Blocking tasks that spin a fixed
// time, n of them in a queue filled in ascending priority (the worst case), run once each by the
// priority megakernel; the order in which workers take them (the atomic head counter's ticket order)
// is scored with S(n) (sched/megakernel/score.h), with the controller(s) and without (FIFO), beside the CPU
// model's prediction (sched/megakernel/queue_model.h) fed with the sort times the controller itself measured.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/figures.h"
#include "app/cli/sched_bench_gpu.h"
#include "render/gpu.h"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/queue_model.h"
#include "sched/megakernel/score.h"

namespace mv {

namespace {

void validate(const SchedBenchCommand& c) {
  if (c.n.empty()) throw InputError("", "--n", "needs at least one queue length");
  if (c.task_us.empty()) throw InputError("", "--task-us", "needs at least one task duration");
  for (uint32_t n : c.n)
    if (n < 2 || n > (1u << 24)) throw InputError("", "--n", fmt::format("{} is not in [2, 2^24]", n));
  for (double t : c.task_us)
    if (!(t > 0.0 && t <= 1e6)) throw InputError("", "--task-us", fmt::format("{} is not in (0, 1e6] µs", t));
  for (uint32_t b : c.threads)
    if (b < 32 || b > 1024 || b % 32) throw InputError("", "--threads", fmt::format("{} is not a multiple of 32 in [32, 1024]", b));
  for (uint32_t p : c.controllers)
    if (p < 1 || p > 64) throw InputError("", "--controllers", fmt::format("{} is not in [1, 64]", p));
  if (c.threads.empty()) throw InputError("", "--threads", "needs at least one block size");
  if (c.controllers.empty()) throw InputError("", "--controllers", "needs at least one controller count");
  if (c.repeat < 1) throw InputError("", "--repeat", "must be at least 1");
  for (const auto& [name, text] : c.knobs)
    if (sched_bench_owned_knob(name)) throw InputError("", "--" + name, "is set by sched-bench itself");
}

/// MegakernelSettings' defaults with c.knobs applied (each checked against megakernel_params()).
MegakernelSettings bench_settings(const SchedBenchCommand& c) {
  MegakernelSettings s;
  BoundParams<MegakernelSettings>(megakernel_params(), s).apply(c.knobs);
  s.validate();
  return s;
}

}  // namespace

bool sched_bench_owned_knob(const std::string& name) {
  for (const char* owned : {"controller", "controllers", "record-order", "record-capacity", "watchdog-seconds",
                            "rebuild-sorted", "static-task-cycles"})
    if (name == owned) return true;
  return false;
}

void run_sched_bench(const SchedBenchCommand& c) {
  validate(c);
  const MegakernelSettings ms = bench_settings(c);  // first: a bad option or output path is named even without a GPU
  cli::check_output_prefix(c.out_prefix, "--out-prefix", {".csv", ".png"});
  if (!c.order_log.empty()) cli::check_output_file(c.order_log, "--order-log");
  const std::string csv_path = c.out_prefix + ".csv";
  // The order log must not be one of the prefix's files: it is written first, and the results would then
  // find their name taken after the whole run.
  std::vector<cli::NamedPath> outputs = {{csv_path, "--out-prefix (its CSV)"},
                                         {figure_metadata_path(csv_path), "--out-prefix (its metadata)"}};
  for (const std::string& f : figure_files("sched-bench", c.out_prefix)) outputs.push_back({f, "--out-prefix (its figure)"});
  if (!c.order_log.empty()) outputs.push_back({c.order_log, "--order-log"});
  cli::check_distinct_files(outputs);
  if (!gpu_available()) throw std::runtime_error("sched-bench needs a CUDA GPU (" + gpu_info().reason + ")");
  for (const cli::NamedPath& o : outputs) ensure_absent(o.first);
  const QueueDesign design = ms.queue;
  const std::string queue = queue_design_name(design);
  // Queue designs other than Kerbl's have no controller blocks to count: one run per configuration.
  const std::vector<uint32_t> controllers = design == QueueDesign::Kerbl ? c.controllers : std::vector<uint32_t>{1};
  std::string order_log =
      "run,n,task_us,block,controllers,queue,controller,repeat,score,index,ticket,task,priority\n";
  int run_index = 0;
  // Median-score run of `repeat`; every run's order goes to the order log.
  const auto measure = [&](SchedBenchCase k) {
    k.keep_order = !c.order_log.empty();
    std::vector<SchedBenchResult> runs;
    for (int i = 0; i < c.repeat; ++i) {
      runs.push_back(run_sched_bench_case(k));
      const SchedBenchResult& r = runs.back();
      for (size_t j = 0; j < r.keys.size(); ++j)
        order_log += fmt::format("{},{},{},{},{},{},{},{},{:.17g},{},{},{},{:.9g}\n", run_index, k.n, k.task_us,
                                 k.block, k.settings.controllers,
                                 k.settings.controller ? queue_design_name(k.settings.queue) : "kerbl",
                                 k.settings.controller ? 1 : 0, i, r.score, j, r.tickets[j], r.tasks[j], r.keys[j]);
      ++run_index;
      runs.back().tickets.clear(), runs.back().tasks.clear(), runs.back().keys.clear();
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
    return runs[runs.size() / 2];
  };

  SchedBenchCase base;
  base.settings = ms;
  base.static_duration = c.static_duration;
  {  // warm-up: module load, first allocations
    SchedBenchCase w = base;
    w.n = 4 * ms.segment_size;
    w.task_us = 1.0;
    w.block = c.threads.front();
    (void)run_sched_bench_case(w);
  }
  fmt::print("sched-bench: {}; Kerbl 2012 §6.2: n blocking tasks in ascending priority (worst case), each run "
             "once;\n  S(n) of the dequeue order (median of {} runs), segments of {}, time management {} "
             "(buffer x{:g}{}{}){}; ms = the slice (CUDA events)\n"
             "  model: sched/megakernel/queue_model.h with this run's workers and the controller's measured longest sort "
             "times (one controller)\n",
             gpu_info().name, c.repeat, ms.segment_size, ms.time_management ? "on" : "off", ms.buffer_multiplier,
             ms.wave_aware_buffer ? ", wave-aware" : "",
             c.static_duration ? ", static task duration" : ", measured durations",
             ms.pull_forward ? fmt::format("; front-pull merges, distance {}", ms.pull_distance) : std::string());
  fmt::print("  queue {}{}; bound = sched/megakernel/score.h's held-segment bound of Kerbl's ring with these workers\n", queue,
             design == QueueDesign::Buckets ? fmt::format(" (K = {})", ms.buckets) : std::string());
  fmt::print("{:>7} {:>8} {:>6} {:>3} {:>7} {:>8} {:>8} {:>8} {:>7} {:>8} {:>9} {:>9} {:>8} {:>10} {:>20}\n", "n",
             "task us", "block", "P", "workers", "S ctrl", "S FIFO", "S model", "bound", "S/bound", "ctrl ms", "FIFO ms",
             "passes", "collisions", "sort us uu/us/ss");
  std::string csv =
      "gpu,n,task_us,block,controllers,workers,grid_blocks,segment,time_management,buffer_multiplier,wave_aware,"
      "score_controller,score_fifo,score_model,ms_controller,ms_fifo,passes_uu,passes_us,passes_ss,sort_us_uu,"
      "sort_us_us,sort_us_ss,collisions,wait_ms,refusals,restarts,lock_failures,queue,buckets,held_bound\n";
  for (double task_us : c.task_us) {
    for (uint32_t block : c.threads) {
      for (uint32_t n : c.n) {
        SchedBenchCase k = base;
        k.n = n;
        k.task_us = task_us;
        k.block = block;
        k.settings.controller = false;
        const SchedBenchResult f = measure(k);
        for (size_t pi = 0; pi < controllers.size(); ++pi) {
          k.settings.controller = true;
          k.settings.controllers = controllers[pi];
          const SchedBenchResult r = measure(k);
          double model = NAN;
          if (k.settings.controllers == 1 && c.model && !ms.pull_forward && design == QueueDesign::Kerbl) {  // the model knows Fig 2's adjacent merges only
            QueueModelParams q;
            q.n = n;
            q.segment = std::min(ms.segment_size, n);
            q.workers = r.worker_warps;
            q.task_us = task_us;
            const double fallback = std::max({r.sort_us_max[0], r.sort_us_max[1], r.sort_us_max[2], 1e-3});
            for (int m = 0; m < 3; ++m) q.sort_us[m] = r.sort_us_max[m] > 0 ? r.sort_us_max[m] : fallback;
            q.buffer_multiplier = ms.buffer_multiplier;
            q.time_management = ms.time_management;
            model = run_queue_model(q).score;
          }
          const uint64_t passes = r.passes[0] + r.passes[1] + r.passes[2];
          // sched/megakernel/score.h: the best score Kerbl's queue can reach from the ascending fill when the workers
          // hold their first segments before any sort (held = workers rounded up to whole segments).
          const double bound =
              ascending_held_prefix_bound(n, held_segment_entries(r.worker_warps, std::min(ms.segment_size, n)));
          fmt::print("{:>7} {:>8g} {:>6} {:>3} {:>7} {:>8.4f} {:>8.4f} {:>8} {:>7.4f} {:>8.3f} {:>9.2f} {:>9.2f} {:>8} {:>10} "
                     "{:>20}\n",
                     n, task_us, block, r.controllers, r.worker_warps, r.score, f.score,
                     std::isnan(model) ? std::string("-") : fmt::format("{:.4f}", model), bound,
                     bound > 0 ? r.score / bound : NAN, r.busy_ms, f.busy_ms, passes,
                     r.collisions, fmt::format("{:.1f}/{:.1f}/{:.1f}", r.sort_us_max[0], r.sort_us_max[1], r.sort_us_max[2]));
          std::fflush(stdout);
          csv += fmt::format("\"{}\",{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{},{:.3f},{:.3f},{},{},{},{:.3f},{:.3f},{:.3f},{},{:.3f},{},{},{},{},{},{:.6f}\n",
                             gpu_info().name, n, task_us, block, r.controllers, r.worker_warps, r.grid_blocks, ms.segment_size,
                             ms.time_management ? 1 : 0, ms.buffer_multiplier, ms.wave_aware_buffer ? 1 : 0, r.score, f.score,
                             std::isnan(model) ? std::string() : fmt::format("{:.6f}", model), r.busy_ms, f.busy_ms,
                             r.passes[0], r.passes[1], r.passes[2], r.sort_us_max[0], r.sort_us_max[1], r.sort_us_max[2],
                             r.collisions, r.wait_ms, r.refusals, r.restarts, r.lock_failures, queue, ms.buckets, bound);
        }
      }
    }
  }
  write_new_text_file(csv_path, csv);
  FigureMetadata meta;
  meta.kind = meta.subcommand = "sched-bench";
  meta.redoes = "Kerbl 2012, Figs 4-5";
  meta.context = fmt::format("queue {}, segments of {}, time management {}{}{}", queue, ms.segment_size,
                             ms.time_management ? "on" : "off", ms.wave_aware_buffer ? ", wave-aware" : "",
                             (ms.blocks_per_sm ? fmt::format(", {} blocks per SM", ms.blocks_per_sm) : std::string()) +
                                 (ms.worker_blocks ? fmt::format(", {} worker blocks", ms.worker_blocks) : std::string()));
  meta.gpu = gpu_info().name;
  meta.units = {{"gpu", "name"}, {"n", "tasks"}, {"task_us", "us"}, {"block", "threads"},
                {"controllers", "blocks"}, {"workers", "warps"}, {"grid_blocks", "blocks"}, {"segment", "entries"},
                {"time_management", "0/1"}, {"buffer_multiplier", "1"}, {"wave_aware", "0/1"},
                {"score_controller", "S(n), 0..1"}, {"score_fifo", "S(n), 0..1"}, {"score_model", "S(n), 0..1"},
                {"ms_controller", "ms"}, {"ms_fifo", "ms"}, {"passes_uu", "passes"}, {"passes_us", "passes"},
                {"passes_ss", "passes"}, {"sort_us_uu", "us"}, {"sort_us_us", "us"}, {"sort_us_ss", "us"},
                {"collisions", "count"}, {"wait_ms", "ms"}, {"refusals", "count"}, {"restarts", "count"},
                {"lock_failures", "count"}, {"queue", "name"}, {"buckets", "bands"}, {"held_bound", "S(n), 0..1"}};
  write_figure_metadata(csv_path, meta);
  if (!c.order_log.empty()) {
    write_new_text_file(c.order_log, order_log);
    fmt::print("wrote {} ({} runs; recompute their scores with tools/order_score.py)\n", c.order_log, run_index);
  }
  fmt::print("wrote {}, {}\n", csv_path, figure_metadata_path(csv_path));
  draw_figures(csv_path);
}

}  // namespace mv
