// `megaview bench --workload gibbs` (app/cli/cli_gibbs_bench.h).
#include "app/cli/cli_gibbs_bench.h"
#include "app/cli/progress.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>

#include "assets_embedded.h"

#include "app/cli/cli_params.h"
#include "app/cli/cli_validate.h"
#include "app/cli/figures.h"
#include "app/session/gibbs_run.h"
#include "app/session/output_file.h"
#include "base/errors.h"
#include "render/gpu.h"

namespace mv {

namespace {

/// The full configuration of the document's benchmark: 1000 samples with thinning 500.
constexpr uint64_t kFullSweeps = 500000;

/// One row of the document's Fig 19: grid configuration ("8x4+6": 8 × 4 threads, 6 ints of padding) and
/// the time of a full run, mean ± sd over 32 repeats, in s.
struct DocRow {
  std::string config;
  double mean = 0.0, sd = 0.0;
};

/// The document's Fig 19 for its three GPUs, each list fastest first: assets/poisson-ising-fig19.json,
/// embedded in the binary at build time (tools/embed_files.py).
struct DocTable {
  std::vector<DocRow> v100, a100, h100;
};

const DocTable& doc_table() {
  static const DocTable table = [] {
    const char* text = assets::find("poisson-ising-fig19.json");
    if (!text) throw std::logic_error("the binary was built without assets/poisson-ising-fig19.json");
    const nlohmann::json j = nlohmann::json::parse(text);
    auto rows = [&j](const char* gpu) {
      std::vector<DocRow> v;
      for (const nlohmann::json& r : j.at(gpu)) v.push_back({r.at(0).get<std::string>(), r.at(1).get<double>(), r.at(2).get<double>()});
      return v;
    };
    return DocTable{rows("V100"), rows("A100"), rows("H100")};
  }();
  return table;
}

const DocRow* doc_find(const std::vector<DocRow>& rows, const std::string& config) {
  for (const DocRow& r : rows)
    if (config == r.config) return &r;
  return nullptr;
}

struct Shape {
  int w = 32, h = 4;
  bool pad = false;
  std::string config() const {
    const int p = pad ? gibbs_doc_padding(w) : 0;
    return fmt::format("{}x{}", w, h) + (p ? fmt::format("+{}", p) : "");
  }
};

/// Every grid configuration of Fig 19 (widths 4 and 8 with and without padding).
std::vector<Shape> doc_shapes() {
  std::vector<Shape> v;
  for (const DocRow& r : doc_table().h100) {
    Shape s;
    std::sscanf(r.config.c_str(), "%dx%d", &s.w, &s.h);
    s.pad = r.config.find('+') != std::string::npos;
    v.push_back(s);
  }
  return v;
}

Shape parse_block(const std::string& text) {
  Shape s;
  char x = 0;
  int n = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%n", &s.w, &x, &s.h, &n) != 3 || (x != 'x' && x != 'X') ||
      n != static_cast<int>(text.size()) || s.w < 1 || s.h < 1 || s.w * s.h > 1024)
    throw InputError("", "--block",
                     "must be WxH threads with W, H ≥ 1 and W × H ≤ 1024, got \"" + text + "\"");
  return s;
}

struct Stats {
  double mean = 0, sd = 0, median = 0;
};
Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  s.median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / k;
  double q = 0;
  for (double x : v) q += (x - s.mean) * (x - s.mean);
  s.sd = k > 1 ? std::sqrt(q / (k - 1)) : 0.0;
  return s;
}

/// The timed repeats (ms each) of `sweeps` sweeps of one strategy and shape, after one untimed warm-up.
std::vector<double> time_runs(GibbsRun& run, const std::string& strategy, const Shape& shape, uint64_t sweeps, int repeat) {
  run.set_strategy(strategy);
  Params& p = run.params();
  p.set(p.find("block-width"), 1);  // through a shape that always fits, so that W × H is never refused midway
  p.set(p.find("block-height"), shape.h);
  p.set(p.find("block-width"), shape.w);
  p.set(p.find("padding"), shape.pad ? 1 : 0);
  // Progress over the warm-up and the timed sweeps (app/cli/progress.h: silent for short jobs). A GPU repeat
  // runs in one call (a split would add host syncs to the time); a CPU one in about 20 pieces so that a long
  // repeat still reports.
  const uint64_t warm = std::min<uint64_t>(sweeps, 100);
  Progress progress("gibbs " + strategy + " " + std::to_string(shape.w) + "x" + std::to_string(shape.h),
                    static_cast<double>(warm + sweeps * static_cast<uint64_t>(repeat)), "sweeps");
  const uint64_t piece = run.gpu() ? sweeps : std::max<uint64_t>(1, sweeps / 20);
  double done = 0.0;
  for (uint64_t left = warm; left > 0;) {  // the warm-up in the same pieces (one on the GPU)
    const uint64_t k = std::min(left, piece);
    run.run_sweeps(k);
    left -= k;
    progress.update(done += static_cast<double>(k));
  }
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    double t = 0.0;
    for (uint64_t left = sweeps; left > 0;) {
      const uint64_t k = std::min(left, piece);
      t += run.run_sweeps(k);
      left -= k;
      progress.update(done += static_cast<double>(k));
    }
    ms.push_back(t);
  }
  progress.finish();
  return ms;
}

std::string csv_header() {
  return "strategy,config,block_width,block_height,padding,pad_ints,warps,width,height,sweeps,repeats,median_ms,"
         "mean_ms,sd_ms,s_full_median,s_full_mean,s_full_sd,us_per_sweep,site_updates_per_ns,extrapolated,"
         "doc_v100_s,doc_v100_sd,doc_a100_s,doc_a100_sd,doc_h100_s,doc_h100_sd\n";
}

std::string doc_cells(const std::string& config) {
  std::string t;
  const DocTable& doc = doc_table();
  for (const DocRow* r : {doc_find(doc.v100, config), doc_find(doc.a100, config), doc_find(doc.h100, config)})
    t += r ? fmt::format(",{},{}", r->mean, r->sd) : ",,";
  return t;
}

/// Spearman's rank correlation of two equally long lists.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (size_t k = 0; k < idx.size(); ++k) r[idx[k]] = static_cast<double>(k);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return n > 1 ? 1.0 - 6.0 * d2 / (n * (n * n - 1.0)) : 0.0;
}

}  // namespace

void add_gibbs_bench_options(CLI::App& bench, GibbsBenchCommand& g) {
  const GibbsSettings knob_defaults;
  bench.add_option("--block", g.block,
                   "gibbs: block shape WxH threads (grid configuration; default " +
                       std::to_string(knob_defaults.block_width) + "x" + std::to_string(knob_defaults.block_height) + ")")
      ->check(cli::non_empty("WxH"));
  bench.add_option("--padding", g.padding, "gibbs: the document's shared-memory padding, on or off")
      ->check(cli::one_of({"on", "off"}));
  bench.add_option("--sweeps", g.sweeps,
                   "gibbs: sweeps timed per repeat (default 20000 on the GPU, 20 on the CPU, 200 with --sweep-blocks); the full run "
                   "(500000) is extrapolated from them")
      ->check(cli::integer(1, 1000000000, "sweeps"));
  bench.add_flag("--sweep-blocks", g.sweep_blocks,
                 "gibbs: every block shape of the document's Fig 19, 32 repeats each (--repeat lowers it); writes "
                 "P.csv, P.json and figures (--out-prefix P)");
  // The gibbs knobs that no other bench option already names.
  std::vector<ParamSpec> specs;
  for (const ParamSpec& s : gibbs_params().specs())
    if (!bench.get_option_no_throw("--" + s.name) && s.name != "block-width" && s.name != "block-height" &&
        s.name != "padding")
      specs.push_back(s);
  add_param_options(bench, specs, "gibbs", [&g](const std::string& name, const std::string& text) { g.knobs[name] = text; });
}

bool is_gibbs_bench(const std::vector<std::string>& workloads) {
  return std::find(workloads.begin(), workloads.end(), "gibbs") != workloads.end();
}

void run_gibbs_bench(GibbsBenchCommand& g, const CLI::App& bench) {
  for (const std::string& w : bench.get_option("--workload")->as<std::vector<std::string>>())
    if (w != "gibbs")
      throw InputError("", "--workload", "gibbs is benched alone; give \"" + w + "\" to a bench of its own");
  // The options the gibbs bench shares with the other benches.
  if (bench.count("--repeat") > 0) {
    g.repeat_given = true;
    g.repeat = bench.get_option("--repeat")->as<int>();
  }
  if (bench.count("--strategy") > 0) g.strategies = bench.get_option("--strategy")->as<std::vector<std::string>>();
  if (bench.count("--csv") > 0) g.csv = bench.get_option("--csv")->as<std::string>();
  if (bench.count("--out-prefix") > 0) g.out_prefix = bench.get_option("--out-prefix")->as<std::string>();
  if (bench.get_option_no_throw("--cpu") && bench.count("--cpu") > 0) g.force_cpu = true;
  for (const char* shared : {"width", "height", "seed"})
    if (bench.count(std::string("--") + shared) > 0)
      g.knobs[shared] = bench.get_option(std::string("--") + shared)->as<std::string>();
  if (g.repeat < 1) throw InputError("", "--repeat", "must be at least 1");
  const bool gpu = !g.force_cpu && gpu_available();
  Shape shape;  // the knobs' default block shape unless --block
  shape.w = GibbsSettings{}.block_width;
  shape.h = GibbsSettings{}.block_height;
  if (!g.block.empty()) shape = parse_block(g.block);
  if (!g.padding.empty()) shape.pad = g.padding == "on";
  const int repeat = g.sweep_blocks && !g.repeat_given ? 32 : g.repeat;
  // The default: 20000 sweeps on the GPU (~0.3 s a repeat), 20 on the CPU (the TBB reference sweeps 2048² in
  // about a second on 16 cores); the full run is extrapolated either way.
  const uint64_t sweeps = g.sweeps ? g.sweeps : g.sweep_blocks ? 200 : gpu ? 20000 : 20;
  if (g.sweep_blocks && !g.block.empty())
    throw InputError("", "--block", "is not used with --sweep-blocks (it times every shape of the document)");
  std::string csv_path = g.csv;
  if (g.sweep_blocks) {
    if (g.out_prefix.empty()) throw InputError("", "--sweep-blocks", "needs --out-prefix P (writes P.csv, P.json and figures)");
    if (!g.csv.empty()) throw InputError("", "--csv", "is not used with --sweep-blocks (it writes P.csv of --out-prefix P)");
    csv_path = g.out_prefix + ".csv";
    cli::check_output_prefix(g.out_prefix, "--out-prefix", {".csv", ".json"});
  } else if (!g.out_prefix.empty()) {
    throw InputError("", "--out-prefix", "is for --sweep-blocks; a plain bench takes --csv");
  } else if (!csv_path.empty()) {
    cli::check_output_file(csv_path, "--csv");
  }
  if (g.sweep_blocks && !gpu)  // its shapes are gibbs-blog's thread blocks
    throw InputError("", "--sweep-blocks",
                     g.force_cpu ? "times gibbs-blog's block shapes on a CUDA GPU; it cannot run with --cpu"
                                 : "times gibbs-blog's block shapes on a CUDA GPU, and none is available");
  GibbsRun run(g.knobs, gpu);  // refuses bad knobs before any timing
  std::vector<std::string> strategies = g.strategies;
  if (strategies.empty())
    strategies = g.sweep_blocks ? std::vector<std::string>{"gibbs-blog"}
                 : gpu          ? std::vector<std::string>{"gibbs-deep", "gibbs-groups", "gibbs-persistent", "gibbs-window", "gibbs-strips", "gibbs-ahead", "gibbs-resident", "gibbs-blog"}
                                : std::vector<std::string>{"gibbs-cpu"};
  for (const std::string& s : strategies) run.set_strategy(s);  // names checked up front
  const GibbsSettings& st = run.settings();
  const double sites = static_cast<double>(st.width) * st.height;
  const bool extrapolated = sweeps != kFullSweeps;
  const std::string gpu_name = gpu ? gpu_info().name : "";
  fmt::print("bench: workload gibbs {}x{}, gamma {}, lambda {} ({} map{}), thinning {}, {} sweeps timed per repeat, "
             "{} repeats, {}\n",
             st.width, st.height, st.gamma, st.lambda, kLambdaMapNames[static_cast<int>(st.lambda_map)],
             st.lambda_map == LambdaMap::Gaussian ? fmt::format(", sigma {} x min(W,H)", st.decay_width) : "",
             st.thinning, sweeps, repeat, gpu ? "GPU " + gpu_name + ", CUDA events" : "CPU, wall clock");
  if (extrapolated)
    fmt::print("full run = {} sweeps (1000 samples, thinning 500): s per full run extrapolated from {} sweeps ({:.3g} % "
               "of it)\n",
               kFullSweeps, sweeps, 100.0 * sweeps / kFullSweeps);
  std::string csv = csv_header();
  auto row_csv = [&](const std::string& strategy, const Shape& sh, const Stats& t) {
    const double us = t.median * 1000.0 / sweeps;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.3f},{}{}\n",
                       strategy, sh.config(), sh.w, sh.h, sh.pad ? 1 : 0, sh.pad ? gibbs_doc_padding(sh.w) : 0,
                       (sh.w * sh.h + 31) / 32, st.width, st.height, sweeps, repeat, t.median, t.mean, t.sd,
                       t.median * kFullSweeps / sweeps / 1000.0, t.mean * kFullSweeps / sweeps / 1000.0,
                       t.sd * kFullSweeps / sweeps / 1000.0, us, sites / (us * 1000.0), extrapolated ? 1 : 0,
                       doc_cells(sh.config()));
  };
  if (!g.sweep_blocks) {
    fmt::print("{:<17} {:>9} {:>12} {:>14} {:>12} {:>10} {:>16}\n", "strategy", "block", "median ms",
               extrapolated ? "s/full run*" : "s/full run", "us/sweep", "updates/ns", "doc H100 best");
    const DocRow& best = doc_table().h100.front();
    const std::string doc_best = fmt::format("{:.3f} s ({})", best.mean, best.config);
    for (const std::string& s : strategies) {
      const Stats t = stats(time_runs(run, s, shape, sweeps, repeat));
      const double us = t.median * 1000.0 / sweeps;
      fmt::print("{:<17} {:>9} {:>12.3f} {:>14.3f} {:>12.3f} {:>10.1f} {:>16}\n", s, shape.config(), t.median,
                 us * kFullSweeps * 1e-6, us, sites / (us * 1000.0), doc_best);
      std::fflush(stdout);
      row_csv(s, shape, t);
    }
    if (extrapolated) fmt::print("* extrapolated from {} sweeps\n", sweeps);
    if (!csv_path.empty()) {
      write_new_text_file(csv_path, csv);
      fmt::print("wrote {}\n", csv_path);
    }
    return;
  }
  // --sweep-blocks: Fig 19's layout, ours beside the document's H100 column.
  for (const std::string& s : strategies) {
    struct Row {
      Shape sh;
      Stats full;  // s per full run
    };
    std::vector<Row> rows;
    const std::vector<Shape> shapes = doc_shapes();
    size_t k = 0;
    for (const Shape& sh : shapes) {
      std::vector<double> ms = time_runs(run, s, sh, sweeps, repeat);
      const Stats t = stats(ms);
      row_csv(s, sh, t);
      for (double& v : ms) v = v * kFullSweeps / sweeps / 1000.0;
      rows.push_back({sh, stats(ms)});
      std::fprintf(stderr, "\rsweep-blocks %s: %zu/%zu shapes", s.c_str(), ++k, shapes.size());
    }
    std::fprintf(stderr, "\n");
    std::vector<Row> sorted = rows;
    std::sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.full.mean < b.full.mean; });
    fmt::print("\n{} on {} — the document's Fig 19 layout (s per full run, mean ± sd over {} repeats{})\n", s,
               gpu ? gpu_name : "the CPU", repeat, extrapolated ? fmt::format(", extrapolated from {} sweeps", sweeps) : "");
    fmt::print("{:>4} {:>9} {:>22} {:>20}   {:>9} {:>18}\n", "rank", "config", "ours (s)", "doc H100, same config",
               "doc rank", "doc H100 (s)");
    const std::vector<DocRow>& doc_h100 = doc_table().h100;
    std::vector<double> ours, docs;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const std::string cfg = sorted[i].sh.config();
      const DocRow* d = doc_find(doc_h100, cfg);
      const DocRow& dr = doc_h100[i];
      fmt::print("{:>4} {:>9} {:>22} {:>20}   {:>9} {:>18}\n", i + 1, cfg,
                 fmt::format("{:.4f} ± {:.4f}", sorted[i].full.mean, sorted[i].full.sd),
                 d ? fmt::format("{:.3f}", d->mean) : "-", dr.config, fmt::format("{:.3f} ± {:.3f}", dr.mean, dr.sd));
      if (d) {
        ours.push_back(sorted[i].full.mean);
        docs.push_back(d->mean);
      }
    }
    const double spread_ours = sorted.back().full.mean / sorted.front().full.mean - 1.0;
    fmt::print("spread (slowest / fastest − 1): ours {:.1f} %, document's H100 {:.1f} %; Spearman rank correlation of "
               "the orderings {:.3f}\n",
               100 * spread_ours, 100 * (doc_h100.back().mean / doc_h100.front().mean - 1.0), spearman(ours, docs));
    std::fflush(stdout);
  }
  write_new_text_file(csv_path, csv);
  FigureMetadata m;
  m.kind = "gibbs-blocks";
  m.subcommand = "bench --workload gibbs --sweep-blocks";
  m.redoes = "poisson-ising-gibbs-cupy, Figs 15-19";
  m.context = fmt::format("{}x{}, gamma {}, lambda {} {}, {} sweeps x {} repeats", st.width, st.height, st.gamma,
                          st.lambda, kLambdaMapNames[static_cast<int>(st.lambda_map)], sweeps, repeat);
  m.gpu = gpu_name;
  m.units = {{"median_ms", "ms"}, {"mean_ms", "ms"}, {"sd_ms", "ms"}, {"s_full_median", "s"}, {"s_full_mean", "s"},
             {"s_full_sd", "s"}, {"us_per_sweep", "us"}, {"site_updates_per_ns", "1/ns"}, {"doc_v100_s", "s"},
             {"doc_a100_s", "s"}, {"doc_h100_s", "s"}, {"doc_v100_sd", "s"}, {"doc_a100_sd", "s"}, {"doc_h100_sd", "s"}};
  write_figure_metadata(csv_path, m);
  fmt::print("wrote {} and {}\n", csv_path, figure_metadata_path(csv_path));
  draw_figures(csv_path);
}

}  // namespace mv
