// `megaview bench --workload …`: Lehmann 2023's strand strategies timed on strand workloads, and the
// grid sweep of Appendix A. docs/strands.md describes the strategies and what the times include.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/cli/figures.h"
#include "app/session/output_file.h"
#include "app/cli/progress.h"
#include "app/session/params_report.h"
#include "app/session/strand_view.h"
#include "app/session/strand_workloads.h"
#include "render/gpu.h"
#include "sched/strand_stats.h"

namespace mv {

namespace {

/// "name=value;…": the knobs `info` reads (strand_params(), sched/strand_strategy.h) as set in `s`, generated
/// from the table (a CSV cell: no commas).
std::string knobs_text(const StrategyInfo& info, StrandRunSettings s) {
  const BoundParams<StrandRunSettings> p(strand_params(), s);
  return params_text(&p, [&info](const ParamSpec& spec) { return info.reads(spec.name); });
}

struct Size {
  uint32_t width = 0, height = 0;
};

/// "WxH" with decimal W, H ≥ 1; InputError naming --size otherwise.
Size parse_size(const std::string& text) {
  const size_t x = text.find('x');
  auto number = [&](const std::string& t, uint32_t& out) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    out = static_cast<uint32_t>(std::stoul(t));
    return true;
  };
  Size s;
  if (x == std::string::npos || !number(text.substr(0, x), s.width) || !number(text.substr(x + 1), s.height))
    throw InputError("", "--size", "expected WxH (strands across and down, e.g. 1000x1000), got \"" + text + "\"");
  return s;
}

struct Timing {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
};

Timing summarize(std::vector<double> ms) {
  Timing t;
  std::sort(ms.begin(), ms.end());
  const size_t k = ms.size();
  t.median = k % 2 ? ms[k / 2] : 0.5 * (ms[k / 2 - 1] + ms[k / 2]);
  t.min = ms.front();
  t.max = ms.back();
  double s = 0, s2 = 0;
  for (double v : ms) s += v, s2 += v * v;
  t.mean = s / k;
  t.stddev = std::sqrt(std::max(0.0, s2 / k - t.mean * t.mean));
  return t;
}

/// FNV-1a over the per-strand statuses and step counts: equal ⇔ every strand ended alike.
uint64_t strands_hash(const StrandResult& r) {
  const uint64_t a = fnv1a64(r.status.data(), r.status.size() * sizeof(WorkStatus));
  const uint64_t b = fnv1a64(r.steps.data(), r.steps.size() * sizeof(uint32_t));
  return a ^ (b * 1099511628211ull);
}

/// Lehmann 2023 Appendix A: best speed-up over sequential per benchmark and strategy (Tesla V100 against
/// one core of a Xeon Gold 6142), with its n, b[, c]; for the table's comparison column.
struct PaperBest {
  const char* workload;
  const char* strategy;
  double speedup;
  const char* grid;
};
constexpr PaperBest kPaperBest[] = {
    {"mandelbrot", "cuda", 21.284, "64,1024"},
    {"mandelbrot", "cuda-permute", 35.755, "1024,32"},
    {"mandelbrot", "cuda-batch", 36.315, "1024,32"},
    {"mandelbrot", "cuda-batch-permute", 35.801, "1024,32"},
    {"mandelbrot", "cuda-unified-memory", 13.671, "1024,32"},
    {"mandelbrot", "cuda-global-queue", 64.560, "1024,16,1"},
    {"mandelbrot", "cuda-global-queue-unified-memory", 64.326, "1024,16,1"},
    {"illust-vr", "cuda", 166.834, "128,512"},
    {"illust-vr", "cuda-permute", 129.547, "512,16"},
    {"illust-vr", "cuda-batch", 142.711, "1024,32"},
    {"illust-vr", "cuda-batch-permute", 129.624, "512,16"},
    {"illust-vr", "cuda-unified-memory", 51.324, "128,256"},
    {"illust-vr", "cuda-global-queue", 497.881, "1024,32,1"},
    {"illust-vr", "cuda-global-queue-unified-memory", 181.670, "256,32,1"},
    {"vr-lite-cam", "cuda", 83.858, "1024,64"},
    {"vr-lite-cam", "cuda-permute", 133.165, "1024,32"},
    {"vr-lite-cam", "cuda-batch", 114.747, "512,64"},
    {"vr-lite-cam", "cuda-batch-permute", 131.562, "256,128"},
    {"vr-lite-cam", "cuda-unified-memory", 13.426, "128,256"},
    {"vr-lite-cam", "cuda-global-queue", 310.926, "512,32,1"},
    {"vr-lite-cam", "cuda-global-queue-unified-memory", 28.207, "64,32,1"},
};

std::string paper_cell(const std::string& workload, const std::string& strategy) {
  for (const PaperBest& p : kPaperBest)
    if (workload == p.workload && strategy == p.strategy) return fmt::format("{:.1f}x @{}", p.speedup, p.grid);
  return strategy == "sequential" ? "1.0x" : "-";
}

const char* const kTimedText =
    "timed: GPU strategies: CUDA events around the init, every kernel and the BSP host loop's active-count\n"
    "       read-backs (unified memory: and the prefetch), after one untimed warm-up run; CPU strategies:\n"
    "       wall clock around init and updates. Outside: allocation, the permutation's generation and\n"
    "       upload, the download of the results and the image (coloured on the host). Task strategies\n"
    "       (sequential-priority, uniform, sorted-waves, megakernel on groups of 32 strands): the same clock\n"
    "       around the init and every step of the task strategy, its syncs and read-backs included.\n";

/// The strategies to run for `w`: the named ones (validated) or the default; refuses GPU strategies
/// without a GPU in one line.
std::vector<const StrategyInfo*> pick_strategies(const StrandWorkloadEntry& w, const StrandBenchCommand& c,
                                                       bool gpu, const std::string& no_gpu) {
  std::vector<const StrategyInfo*> out;
  if (c.strategies.empty()) {
    for (const StrategyInfo& i : w.strategies)
      if (gpu || !i.needs_gpu()) out.push_back(&i);
    return out;
  }
  for (const std::string& n : c.strategies) {
    const StrategyInfo& i = w.strategy(n);
    if (i.needs_gpu() && !gpu) throw std::runtime_error("bench: strategy " + n + " needs a CUDA GPU (" + no_gpu + ")");
    if (std::find(out.begin(), out.end(), &i) == out.end()) out.push_back(&i);
  }
  return out;
}

/// Strand runs done, for the bench's progress (runs are the unit: warm-ups and timed repeats alike).
struct RunProgress {
  Progress* progress = nullptr;
  double runs = 0;
  void tick() {
    runs += 1;
    if (progress) progress->update(runs);
  }
};
RunProgress g_runs;

struct Measured {
  Timing t;
  StrandTimings last;  ///< launches, super-steps, resolved grid, notes of the last repeat
  uint64_t strands = 0;
  bool repeats_agree = true;
};

/// `repeat` timed runs, after an untimed one if `warm_up`. `first` receives the first timed run's result
/// (with its image if `image`).
Measured measure(const StrandWorkloadEntry& w, const StrategyInfo& info, Size size, const StrandRunSettings& s,
                 int repeat, bool image, StrandResult* first, bool warm_up) {
  if (warm_up) w.run(info.name, size.width, size.height, s, false), g_runs.tick();
  Measured m;
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    StrandResult res = w.run(info.name, size.width, size.height, s, image && r == 0);
    g_runs.tick();
    ms.push_back(res.timing.ms);
    const uint64_t h = strands_hash(res);
    if (r == 0) m.strands = h;
    m.repeats_agree = m.repeats_agree && h == m.strands;
    m.last = res.timing;
    if (r == 0 && first) *first = std::move(res);
  }
  m.t = summarize(ms);
  return m;
}

/// What agreeing under `t` means, for the bench's last line.
std::string agreement_text(const StrandTolerance& t) {
  if (t.exact) return "the same image and the same per-strand step counts";
  const std::string steps =
      t.max_step_diff == 0 && t.min_same_steps >= 1.0
          ? "the same per-strand step counts"
          : fmt::format("step counts within {} for {:g} % identical strands", t.max_step_diff, 100.0 * t.min_same_steps);
  return fmt::format("{} and the same image within the workload's tolerance (colours within {:g} for {:g} % of "
                     "pixels, every pixel within {:g})",
                     steps, t.pixel_tol, 100.0 * t.min_close_pixels, t.max_pixel_diff);
}

// ---------------------------------------------------------------- plain bench

void bench_workload(const StrandWorkloadEntry& w, Size size, const std::vector<const StrategyInfo*>& strategies,
                    const StrandRunSettings& s, const StrandBenchCommand& c, std::string& csv,
                    std::vector<std::string>& problems) {
  const uint64_t n = static_cast<uint64_t>(size.width) * size.height;
  fmt::print("bench: workload {} {}x{} ({} strands), grid {}, {} repeats{}\n", w.name, size.width, size.height, n,
             s.grid.str(), c.repeat, gpu_available() && !c.force_cpu ? "; GPU: " + gpu_info().name : "");
  fmt::print("{}", kTimedText);
  fmt::print("{:<33} {:>20} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>6} {:>16} {:>9}\n", "strategy", "grid n,b[,c] / task",
             "median ms", "min ms", "max ms", "launches", "steps mu", "sigma", "CV", "image checksum", "vs seq");
  std::fflush(stdout);
  double seq_ms = 0.0;
  StrandResult ref_result;
  std::string ref_name;
  for (const StrategyInfo* info : strategies) {
    StrandResult first;
    const Measured m = measure(w, *info, size, s, c.repeat, true, &first, info->needs_gpu());
    const StepStatistics st = step_statistics(first.steps);
    const uint64_t image = first.checksum();
    if (info->name == "sequential") seq_ms = m.t.median;
    if (ref_name.empty()) {
      ref_name = info->name;
      ref_result = first;
    } else if (const std::string d = strand_disagreement(ref_result, first, w.tolerance); !d.empty()) {
      problems.push_back(fmt::format("{} on {}: {} from {}'s", info->name, w.name, d, ref_name));
    }
    if (!m.repeats_agree) problems.push_back(fmt::format("{} on {}: repeats differ", info->name, w.name));
    const std::string speedup = seq_ms > 0.0 && m.t.median > 0.0 ? fmt::format("{:.2f}x", seq_ms / m.t.median) : "-";
    fmt::print("{:<33} {:>20} {:>10.3f} {:>10.3f} {:>10.3f} {:>8} {:>9.3f} {:>9.3f} {:>6.3f} {:>16} {:>9}{}\n", info->name,
               strand_grid_text(*info, m.last.grid, s), m.t.median, m.t.min, m.t.max, info->needs_gpu() ? std::to_string(m.last.launches) : "-",
               st.mean, st.sigma, st.cv, fmt::format("{:016x}", image), speedup,
               m.last.notes.empty() ? "" : "  (" + m.last.notes + ")");
    std::fflush(stdout);
    csv += fmt::format("{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{},{},{},{:.4f},{:.4f},{:.5f},{:016x},{},{},{}\n", w.name,
                       size.width, size.height, info->name, info->uses_grid ? m.last.grid.blocks : 0,
                       info->uses_grid ? m.last.grid.threads : 0, info->reads("work-unit") ? m.last.grid.work_unit : 0,
                       c.repeat, m.t.median, m.t.min, m.t.max, info->needs_gpu() ? "cuda-events" : "wall-clock",
                       m.last.launches, m.last.super_steps, st.mean, st.sigma, st.cv, image,
                       info->reads("task-quantum") ? s.task_quantum : 0,
                       info->reads("task-quantum") ? strand_task_priority_name(s.task_priority) : "-",
                       knobs_text(*info, s));
  }
  if (problems.empty())
    fmt::print("agreement: every strategy gave {} as {}\n", agreement_text(w.tolerance), ref_name);
}

// ---------------------------------------------------------------- sweep

std::vector<uint32_t> powers(uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> v;
  for (uint32_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

/// The configurations sweep_workload runs for `info` (for the progress' total).
uint64_t sweep_config_count(const StrategyInfo& info, const StrandBenchCommand& c) {
  if (info.reads("task-quantum")) return 9;  // quantum 4, 16, 64 x three group priorities
  if (!info.uses_grid) return 1;
  uint64_t n = 0;
  for (uint32_t nb : powers(64, 1024)) n += powers(64, std::min<uint32_t>(1024, c.sweep_max_threads / nb)).size();
  return n * (info.reads("work-unit") ? 5 : 1);
}

/// `partial`: where the rows so far are kept after each strategy (replaced each time), so that a sweep
/// stopped part-way leaves its finished strategies behind.
void sweep_workload(const StrandWorkloadEntry& w, Size size, const std::vector<const StrategyInfo*>& strategies,
                    StrandRunSettings s, const StrandBenchCommand& c, std::string& csv,
                    std::vector<std::string>& problems, const std::string& partial) {
  const uint64_t n = static_cast<uint64_t>(size.width) * size.height;
  fmt::print("sweep: workload {} {}x{} ({} strands), {} repeats per configuration, n = 64..1024, b = 64..min(1024, "
             "{}/n), c in 1,2,4,8,16 (global queues){}\n",
             w.name, size.width, size.height, n, c.repeat, c.sweep_max_threads,
             gpu_available() && !c.force_cpu ? "; GPU: " + gpu_info().name : "");
  fmt::print("{}", kTimedText);
  std::fflush(stdout);

  // The baseline: sequential, always.
  const StrategyInfo& seq_info = w.strategy("sequential");
  StrandResult ref;
  s.grid = GridConfig{};
  const Measured seq = measure(w, seq_info, size, s, c.repeat, true, &ref, false);
  const StepStatistics st = step_statistics(ref.steps);
  fmt::print("steps per strand: mu {:.3f}, sigma {:.3f}, CV {:.4f} (Lehmann 2023 Fig 3.2); sequential {:.3f} ms "
             "(median)\n",
             st.mean, st.sigma, st.cv, seq.t.median);
  auto add_csv = [&](const StrategyInfo& info, const GridConfig& g, const Measured& m, bool match,
                     const StrandRunSettings& rs) {
    csv += fmt::format("{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{:.4f},{},{},{},{}\n", w.name,
                       size.width, size.height, info.name, info.uses_grid ? g.blocks : 0, info.uses_grid ? g.threads : 0,
                       info.reads("work-unit") ? g.work_unit : 0, c.repeat, m.t.median, m.t.min, m.t.max, m.t.mean,
                       m.t.stddev, m.last.launches, m.last.super_steps,
                       m.t.median > 0 ? seq.t.median / m.t.median : 0.0, match ? 1 : 0,
                       info.reads("task-quantum") ? rs.task_quantum : 0,
                       info.reads("task-quantum") ? strand_task_priority_name(rs.task_priority) : "-",
                       knobs_text(info, rs));
  };
  add_csv(seq_info, GridConfig{}, seq, true, s);

  struct Best {
    const StrategyInfo* info;
    GridConfig grid;
    Timing t;
    int configs = 0;
    StrandRunSettings settings;  ///< the task strategies' quantum and priority of the best run
  };
  std::vector<Best> best;
  best.push_back({&seq_info, GridConfig{}, seq.t, 1, s});

  for (const StrategyInfo* info : strategies) {
    if (info == &seq_info) continue;
    // Configurations: grids for Appendix A's strategies; quantum × group priority for the task strategies.
    struct Config {
      GridConfig grid;
      uint32_t quantum;
      StrandTaskPriority priority;
    };
    std::vector<Config> configs;
    if (info->reads("task-quantum")) {
      for (uint32_t q : {4u, 16u, 64u})
        for (StrandTaskPriority p : {StrandTaskPriority::Fifo, StrandTaskPriority::MostRemaining,
                                     StrandTaskPriority::LeastRemaining})
          configs.push_back({GridConfig{}, q, p});
    } else if (!info->uses_grid) {
      configs.push_back({GridConfig{}, s.task_quantum, s.task_priority});
    } else {
      for (uint32_t nb : powers(64, 1024))
        for (uint32_t b : powers(64, std::min<uint32_t>(1024, c.sweep_max_threads / nb)))
          for (uint32_t cu : info->reads("work-unit") ? std::vector<uint32_t>{1, 2, 4, 8, 16} : std::vector<uint32_t>{1})
            configs.push_back({make_grid(nb, b, cu), s.task_quantum, s.task_priority});
    }
    Best b{info, {}, {}, 0, s};
    bool warmed = false, imaged = false;
    for (const Config& cfg : configs) {
      const GridConfig& g = cfg.grid;
      s.grid = g;
      s.task_quantum = cfg.quantum;
      s.task_priority = cfg.priority;
      const std::string label = info->reads("task-quantum") ? strand_task_text(s) : g.str();
      StrandResult first;
      Measured m;
      try {
        if (info->needs_gpu() && !warmed) {  // once per strategy: module loading, first-touch costs
          w.run(info->name, size.width, size.height, s, false);
          g_runs.tick();
          warmed = true;
        }
        m = measure(w, *info, size, s, c.repeat, !imaged, &first, false);
      } catch (const InputError& e) {  // e.g. b above what this kernel can run with on this GPU
        std::fprintf(stderr, "sweep: %s %s skipped: %s\n", info->name.c_str(), label.c_str(), e.what());
        continue;
      }
      const std::string step_problem = strand_disagreement(ref, first, w.tolerance, /*compare_images=*/false);
      const bool steps_match = step_problem.empty() && m.repeats_agree;
      bool image_match = true;
      if (!imaged) {  // one image per strategy: colouring 4 M strands costs more than most GPU runs
        imaged = true;
        const std::string d = strand_disagreement(ref, first, w.tolerance);
        image_match = d.empty();
        if (!image_match)
          problems.push_back(fmt::format("{} {} on {}: {} from sequential's", info->name, label, w.name, d));
      }
      if (!steps_match)
        problems.push_back(fmt::format("{} {} on {}: {} from sequential's", info->name, label, w.name,
                                       step_problem.empty() ? "repeats differ" : step_problem));
      const bool match = steps_match && image_match;
      add_csv(*info, info->uses_grid ? m.last.grid : g, m, match, s);
      ++b.configs;
      if (b.configs == 1 || m.t.median < b.t.median) {
        b.t = m.t;
        b.grid = m.last.grid;
        b.settings = s;
      }
    }
    std::fprintf(stderr, "sweep: %s done (%d configurations)\n", info->name.c_str(), b.configs);
    write_new_text_file(partial, csv, /*replace=*/true);
    if (b.configs == 0) continue;
    best.push_back(b);
  }

  fmt::print("\nbest configuration per strategy ({}, {}x{}; speed-up = sequential median / best median)\n", w.name,
             size.width, size.height);
  fmt::print("{:<33} {:>20} {:>11} {:>10} {:>10} {:>9} {:>8} {:>20}\n", "strategy", "best n,b[,c] / task", "median ms",
             "min ms", "stddev ms", "speed-up", "configs", "paper V100 (App. A)");
  for (const Best& b : best)
    fmt::print("{:<33} {:>20} {:>11.3f} {:>10.3f} {:>10.3f} {:>8.2f}x {:>8} {:>20}\n", b.info->name,
               strand_grid_text(*b.info, b.grid, b.settings), b.t.median, b.t.min, b.t.stddev,
               b.t.median > 0 ? seq.t.median / b.t.median : 0.0, b.configs, paper_cell(w.name, b.info->name));
  std::fflush(stdout);
}

}  // namespace

void run_strand_bench(const StrandBenchCommand& c) {
  if (c.workloads.empty()) throw InputError("", "--workload", "name at least one strand workload");
  if (c.repeat < 1) throw InputError("", "--repeat", "must be at least 1");
  std::vector<const StrandWorkloadEntry*> workloads;
  for (const std::string& n : c.workloads) workloads.push_back(&find_strand_workload(n));
  StrandRunSettings s;
  if (!c.grid.empty()) {
    if (c.sweep) throw InputError("", "--grid", "is not used with --sweep (the sweep sets n, b and c itself)");
    s.grid = parse_grid(c.grid, "--grid");
  }
  s.record_finish_order = c.record_finish_order;
  BoundParams<StrandRunSettings>(strand_params(), s).apply(c.knobs);
  s.task_knobs = c.task_knobs;
  validate_strand_settings(s);
  if (c.sweep && (c.sweep_max_threads < 4096 || c.sweep_max_threads > (1u << 26)))
    throw InputError("", "--sweep-max-threads",
                     fmt::format("{} is out of range [4096, {}]", c.sweep_max_threads, 1u << 26));
  Size size_override;
  if (!c.size.empty()) size_override = parse_size(c.size);
  const bool gpu = !c.force_cpu && gpu_available();
  const std::string no_gpu = c.force_cpu ? "--cpu given" : gpu_info().reason;
  std::vector<std::vector<const StrategyInfo*>> strategies;
  std::vector<Size> sizes;
  for (const StrandWorkloadEntry* w : workloads) {
    strategies.push_back(pick_strategies(*w, c, gpu, no_gpu));
    Size sz = c.size.empty() ? Size{w->default_width, w->default_height} : size_override;
    if (sz.width < 1 || sz.height < 1 || sz.width > w->max_side || sz.height > w->max_side)
      throw InputError("", "--size",
                       fmt::format("{}x{} is out of range for {}: width and height in [1, {}]", sz.width, sz.height,
                                   w->name, w->max_side));
    w->check_size_multiple(sz.width, sz.height, "--size");
    sizes.push_back(sz);
  }
  std::string csv_path;
  if (c.sweep) {
    if (c.out_prefix.empty()) throw InputError("", "--sweep", "needs --out-prefix P (writes P.csv and P.png)");
    if (!c.csv.empty()) throw InputError("", "--csv", "is not used with --sweep (it writes P.csv of --out-prefix P)");
    csv_path = c.out_prefix + ".csv";
  } else {
    if (!c.out_prefix.empty()) throw InputError("", "--out-prefix", "is for --sweep; a plain bench takes --csv");
    csv_path = c.csv;
  }
  const std::string figure_kind = c.sweep ? "strand-sweep" : "strand-bench";
  const std::string partial_path = c.out_prefix + ".partial.csv";
  if (c.sweep)
    cli::check_output_prefix(c.out_prefix, "--out-prefix", {".csv", ".partial.csv"});
  else if (!csv_path.empty())
    cli::check_output_file(csv_path, "--csv");
  if (!csv_path.empty()) {
    ensure_absent(figure_metadata_path(csv_path));
    for (const std::string& f : figure_files(figure_kind, figure_stem(csv_path))) ensure_absent(f);
  }
  for (size_t k = 0; k < workloads.size(); ++k)
    cli::check_host_memory(strand_bytes_estimate(uint64_t{sizes[k].width} * sizes[k].height),
                           c.size.empty() ? "--workload" : "--size",
                           fmt::format("{} at {}x{} strands", workloads[k]->name, sizes[k].width, sizes[k].height));

  // Progress in strand runs: warm-ups and timed repeats.
  double total_runs = 0;
  for (size_t k = 0; k < workloads.size(); ++k) {
    if (c.sweep) total_runs += c.repeat;  // the sequential baseline
    for (const StrategyInfo* info : strategies[k]) {
      if (c.sweep && info->name == "sequential") continue;
      total_runs += (info->needs_gpu() ? 1 : 0) + static_cast<double>(c.repeat) * (c.sweep ? sweep_config_count(*info, c) : 1);
    }
  }
  Progress progress(c.sweep ? "sweep" : "bench", total_runs, "runs");
  g_runs = RunProgress{&progress, 0};
  struct Detach {  // the counter never outlives the progress, also when a run throws
    ~Detach() { g_runs = RunProgress{}; }
  } detach;

  std::vector<std::string> problems;
  std::string csv;
  if (c.sweep) {
    csv = "workload,width,height,strategy,n,b,c,repeats,median_ms,min_ms,max_ms,mean_ms,stddev_ms,launches,"
          "super_steps,speedup_vs_sequential,matches_sequential,task_quantum,task_priority,knobs\n";
    std::fprintf(stderr, "sweep: the rows of each finished strategy go to %s until %s is written\n",
                 partial_path.c_str(), csv_path.c_str());
    for (size_t k = 0; k < workloads.size(); ++k)
      sweep_workload(*workloads[k], sizes[k], strategies[k], s, c, csv, problems, partial_path);
  } else {
    csv = "workload,width,height,strategy,n,b,c,repeats,median_ms,min_ms,max_ms,clock,launches,super_steps,"
          "steps_mean,steps_sigma,steps_cv,image_fnv1a,task_quantum,task_priority,knobs\n";
    for (size_t k = 0; k < workloads.size(); ++k)
      bench_workload(*workloads[k], sizes[k], strategies[k], s, c, csv, problems);
  }
  progress.finish();
  if (!csv_path.empty()) {
    write_new_text_file(csv_path, csv);
    if (c.sweep) std::remove(partial_path.c_str());  // the complete P.csv replaces the rows so far
    FigureMetadata meta;
    meta.kind = figure_kind;
    meta.subcommand = c.sweep ? "bench --workload --sweep" : "bench --workload";
    meta.redoes = "Lehmann 2023, Appendix A";
    if (gpu) meta.gpu = gpu_info().name;
    meta.units = {{"workload", "name"}, {"width", "strands"}, {"height", "strands"}, {"strategy", "name"},
                  {"n", "blocks (0: no grid)"}, {"b", "threads per block"}, {"c", "strands per work unit"},
                  {"repeats", "timed runs"}, {"median_ms", "ms"}, {"min_ms", "ms"}, {"max_ms", "ms"},
                  {"mean_ms", "ms"}, {"stddev_ms", "ms"}, {"clock", "cuda-events or wall-clock"},
                  {"launches", "kernel launches"}, {"super_steps", "steps"}, {"steps_mean", "steps per strand"},
                  {"steps_sigma", "steps per strand"}, {"steps_cv", "1"}, {"image_fnv1a", "hex checksum"},
                  {"speedup_vs_sequential", "x"}, {"matches_sequential", "0/1"},
                  {"task_quantum", "steps per visit (0: not a task strategy)"}, {"task_priority", "name"},
                  {"knobs", "name=value;… of the knobs the strategy reads (sched/strand_strategy.h)"}};
    write_figure_metadata(csv_path, meta);
    fmt::print("wrote {}, {}\n", csv_path, figure_metadata_path(csv_path));
    // Drawn before a disagreement is reported below: the CSV shows which run differed.
    draw_figures(csv_path);
  }
  if (!problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw std::runtime_error("bench: results disagree: " + all);
  }
}

}  // namespace mv
