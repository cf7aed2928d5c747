// `megaview sched-model`: the CPU model's prediction of Kerbl's order score S(n) (Kerbl 2012, §6.2,
// Figs 4–5) for the priority megakernel, controller against FIFO, per queue length and task duration
// (sched/megakernel/queue_model.h). The GPU measurement of the same curves is `megaview sched-bench`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/figures.h"
#include "app/cli/progress.h"
#include "sched/megakernel/queue_model.h"
#include "sched/megakernel/score.h"

namespace mv {

namespace {

/// The most controller passes one configuration may simulate, and about how many the model runs per second
/// on one core.
constexpr double kMaxModelPasses = 2e8;
constexpr double kModelPassesPerSecond = 3e6;

InitialOrder parse_order(const std::string& s) {
  if (s == "ascending") return InitialOrder::Ascending;
  if (s == "random") return InitialOrder::Random;
  if (s == "descending") return InitialOrder::Descending;
  throw InputError("", "--order", "unknown order \"" + s + "\" (allowed: ascending, random, descending)");
}

void validate(const SchedModelCommand& c) {
  if (c.n.empty()) throw InputError("", "--n", "needs at least one queue length");
  if (c.task_us.empty()) throw InputError("", "--task-us", "needs at least one task duration");
  if (c.sort_us.size() != 3) throw InputError("", "--sort-us", "needs three times: unsorted-unsorted,one-sorted,sorted-sorted");
  for (double s : c.sort_us)
    if (!(s >= 1e-3 && s <= 1e6)) throw InputError("", "--sort-us", fmt::format("{} is not in [0.001, 1e6] µs", s));
  for (double t : c.task_us)
    if (!(t >= 1e-3 && t <= 1e7)) throw InputError("", "--task-us", fmt::format("{} is not in [0.001, 1e7] µs", t));
  for (uint32_t n : c.n)
    if (n < 2 || n > (1u << 24)) throw InputError("", "--n", fmt::format("{} is not in [2, 2^24]", n));
  if (c.segment < 1 || c.segment > *std::min_element(c.n.begin(), c.n.end()))
    throw InputError("", "--segment", fmt::format("{} is not in [1, smallest n]", c.segment));
  if (c.workers < 1) throw InputError("", "--workers", "must be at least 1");
  if (!(c.buffer_multiplier >= 0.01 && c.buffer_multiplier <= 100.0))
    throw InputError("", "--buffer-multiplier", fmt::format("must be a finite number in [0.01, 100], got \"{}\"", c.buffer_multiplier));
  // The controller's passes set the run time: refuse the absurd before starting.
  for (uint32_t n : c.n)
    for (double t : c.task_us) {
      QueueModelParams p;
      p.n = n;
      p.workers = c.workers;
      p.task_us = t;
      p.sort_us = {c.sort_us[0], c.sort_us[1], c.sort_us[2]};
      const double passes = estimated_controller_passes(p);
      if (passes > kMaxModelPasses)
        throw InputError("", "--n/--workers/--task-us",
                         fmt::format("{} tasks of {:g} µs on {} workers would take about {:.2g} controller passes of the "
                                     "model (about {}); at most {:.0e}: give fewer or shorter tasks or more workers",
                                     n, t, c.workers, passes, Progress::duration_text(passes / kModelPassesPerSecond),
                                     kMaxModelPasses));
    }
}



QueueModelResult run_model(QueueModelParams p) {
  try {
    return run_queue_model(p);
  } catch (const std::invalid_argument& e) {
    throw InputError("", "sched-model", e.what());
  }
}

}  // namespace

void run_sched_model(const SchedModelCommand& c) {
  validate(c);
  const InitialOrder order = parse_order(c.order);
  cli::check_output_prefix(c.out_prefix, "--out-prefix", {".csv"});
  const std::string csv_path = c.out_prefix + ".csv";
  for (const std::string& f : figure_files("sched-model", c.out_prefix)) ensure_absent(f);
  for (const std::string& f : {csv_path, figure_metadata_path(csv_path)}) ensure_absent(f);

  QueueModelParams base;
  base.segment = c.segment;
  base.workers = c.workers;
  base.sort_us = {c.sort_us[0], c.sort_us[1], c.sort_us[2]};
  base.buffer_multiplier = c.buffer_multiplier;
  base.time_management = c.time_management;
  base.order = order;
  base.seed = c.seed;
  // The entries the workers take at t = 0 lie in segments that are never sorted (§6.2).
  const uint64_t held = held_segment_entries(c.workers, c.segment);

  fmt::print("sched-model: Kerbl 2012 §6.2 on the CPU model (sched/megakernel/queue_model.h): {} workers, segments of {}, "
             "sort passes {:g}/{:g}/{:g} µs (unsorted-unsorted/one sorted/sorted-sorted),\n"
             "             time management {} (buffer x{:g}), {} initial order; S(n) of the execution order\n",
             c.workers, c.segment, c.sort_us[0], c.sort_us[1], c.sort_us[2], c.time_management ? "on" : "off",
             c.buffer_multiplier, c.order);
  if (order == InitialOrder::Ascending)
    fmt::print("bound: the best S(n) when the first {} entries (the segments held by the workers at t = 0) "
               "stay unsorted\n",
               held);
  fmt::print("{:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>20} {:>10} {:>10} {:>11} {:>11}\n", "n", "task us", "S ctrl",
             "S FIFO", "bound", "passes", "uu/us/ss", "collisions", "wait us", "ctrl ms", "FIFO ms");

  double total_tasks = 0.0;
  for (uint32_t n : c.n) total_tasks += 2.0 * n * static_cast<double>(c.task_us.size());
  Progress progress("sched-model", total_tasks, "tasks");
  double done_tasks = 0.0;
  std::string csv =
      "n,task_us,workers,segment,sort_uu_us,sort_us_us,sort_ss_us,buffer_multiplier,time_management,order,seed,"
      "score_controller,score_fifo,held_bound,passes,passes_uu,passes_us,passes_ss,collisions,wait_us,"
      "total_us_controller,total_us_fifo\n";
  for (size_t k = 0; k < c.task_us.size(); ++k) {
    for (uint32_t n : c.n) {
      QueueModelParams p = base;
      p.n = n;
      p.task_us = c.task_us[k];
      p.progress = [&](uint32_t dequeued) { progress.update(done_tasks + dequeued); };
      const QueueModelResult r = run_model(p);
      done_tasks += n;
      p.controller = false;
      const QueueModelResult f = run_model(p);
      done_tasks += n;
      progress.update(done_tasks);
      const double b = order == InitialOrder::Ascending ? ascending_held_prefix_bound(n, held) : NAN;
      const auto& m = r.passes_by_method;
      fmt::print("{:>8} {:>9g} {:>9.4f} {:>8.4f} {:>8} {:>8} {:>20} {:>10} {:>10.1f} {:>11.3f} {:>11.3f}\n", n,
                 c.task_us[k], r.score, f.score, std::isnan(b) ? "-" : fmt::format("{:.4f}", b), r.sort_passes,
                 fmt::format("{}/{}/{}", m[0], m[1], m[2]), r.collisions, r.wait_us, r.total_us * 1e-3,
                 f.total_us * 1e-3);
      std::fflush(stdout);
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f}\n", n,
                         c.task_us[k], c.workers, c.segment, c.sort_us[0], c.sort_us[1], c.sort_us[2],
                         c.buffer_multiplier, c.time_management ? 1 : 0, c.order, c.seed, r.score, f.score,
                         std::isnan(b) ? std::string() : fmt::format("{:.6f}", b), r.sort_passes, m[0], m[1], m[2],
                         r.collisions, r.wait_us, r.total_us, f.total_us);
    }
  }

  progress.finish();
  write_new_text_file(csv_path, csv);
  FigureMetadata meta;
  meta.kind = meta.subcommand = "sched-model";
  meta.redoes = "Kerbl 2012, Figs 4-5";
  meta.context = fmt::format("CPU model: {} workers, segments of {}, sort passes {:g}/{:g}/{:g} us, time management {}, "
                             "{} order",
                             c.workers, c.segment, c.sort_us[0], c.sort_us[1], c.sort_us[2],
                             c.time_management ? "on" : "off", c.order);
  meta.units = {{"n", "tasks"}, {"task_us", "us"}, {"workers", "warps"}, {"segment", "entries"},
                {"sort_uu_us", "us"}, {"sort_us_us", "us"}, {"sort_ss_us", "us"}, {"buffer_multiplier", "1"},
                {"time_management", "0/1"}, {"order", "name"}, {"seed", "1"}, {"score_controller", "S(n), 0..1"},
                {"score_fifo", "S(n), 0..1"}, {"held_bound", "S(n), 0..1"}, {"passes", "passes"},
                {"passes_uu", "passes"}, {"passes_us", "passes"}, {"passes_ss", "passes"}, {"collisions", "count"},
                {"wait_us", "us"}, {"total_us_controller", "us"}, {"total_us_fifo", "us"}};
  write_figure_metadata(csv_path, meta);
  fmt::print("wrote {}, {}\n", csv_path, figure_metadata_path(csv_path));
  draw_figures(csv_path);
}

}  // namespace mv
