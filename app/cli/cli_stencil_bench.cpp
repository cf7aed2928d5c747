// The deep-halo stencil's bench (app/cli/cli_stencil_bench.h).
#include "app/cli/cli_stencil_bench.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "app/cli/cli_validate.h"
#include "app/cli/progress.h"
#include "app/cli/figures.h"
#include "app/session/output_file.h"
#include "app/session/stencil_run.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "render/lattice/jacobi.h"
#include "sched/lattice/halo_plan.h"

namespace mv {

namespace {

struct StencilBenchCommand {
  std::vector<std::string> workloads;
  int gpus = 1;
  std::vector<int> partitions{1};
  std::vector<int> sizes{8192};
  std::vector<int> depths{1};
  std::vector<std::string> exchanges{"sync"};
  std::vector<std::string> overlaps{"off"};
  std::vector<std::string> kernels{"512x1x16"};
  int iterations = 256;
  int repeat = 5;
  std::string csv;
  bool force_cpu = false;
};

/// The options of the stencil bench, registered on `app`.
void add_stencil_bench_options(CLI::App& app, StencilBenchCommand& c) {
  app.add_option("--workload", c.workloads, "stencil")->delimiter(',')->required()->check(cli::one_of({"stencil"}));
  app.add_option("--gpus", c.gpus, "GPUs G (partition p on GPU p*G/P; G > 1 exchanges through NCCL)")
      ->check(cli::integer(1, 8))
      ->capture_default_str();
  app.add_option("--partitions", c.partitions, "partitions P, comma separated (2D tiles, Valen 2023 Table 3.2)")
      ->delimiter(',')
      ->check(cli::integer(1, kMaxHaloPartitions));
  app.add_option("--size", c.sizes, "grid side n (n x n float32 sites), comma separated")
      ->delimiter(',')
      ->check(cli::integer(8, 200000, "sites"));
  app.add_option("--depth", c.depths, "halo depths, comma separated")
      ->delimiter(',')
      ->check(cli::integer(1, kMaxHaloDepth));
  app.add_option("--exchange", c.exchanges, "halo exchanges: sync, async (comma separated)")
      ->delimiter(',')
      ->check(cli::one_of({"sync", "async"}));
  app.add_option("--overlap", c.overlaps, "overlap of inner compute and exchange: on, off (comma separated)")
      ->delimiter(',')
      ->check(cli::one_of({"on", "off"}));
  app.add_option("--kernel", c.kernels, "GPU compute kernels' block shapes (threads x × y × rows per thread), comma separated")
      ->delimiter(',')
      ->check(cli::one_of({std::begin(kHaloKernelShapes), std::end(kHaloKernelShapes)}));
  app.add_option("--iterations", c.iterations, "iterations per timed run")
      ->check(cli::integer(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--repeat", c.repeat, "timed runs per configuration (the table shows the median)")
      ->check(cli::integer(1, 1000))
      ->capture_default_str();
  app.add_option("--csv", c.csv, "also write every configuration to this CSV (+ .json metadata and figures)")
      ->check(cli::non_empty("a CSV file name"));
  app.add_flag("--cpu", c.force_cpu, "run on the CPU reference (TBB, wall clock) even when a GPU is present");
}

/// Whether argv names the stencil's bench: `bench` as the subcommand and "stencil" among --workload's values.
bool selected(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "bench") != 0) return false;
  auto has_stencil = [](const std::string& list) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      if (list.substr(start, end - start) == "stencil") return true;
      start = end + 1;
    }
    return false;
  };
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--workload" && i + 1 < argc && has_stencil(argv[i + 1])) return true;
    if (a.rfind("--workload=", 0) == 0 && has_stencil(a.substr(11))) return true;
  }
  return false;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k == 0 ? 0.0 : k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/// Runs `iterations` iterations of `run` and returns their phase times, summed. A run that would take over
/// a second at the rate measured so far (`ms_per_iteration`, 0: unknown, then one iteration measures it)
/// goes in calls of about half a second, each reported to `progress` (`done` counts the iterations), so
/// that a long run shows its progress and estimate; a shorter one stays one call, as a GPU run is timed.
HaloPhaseTimes run_reported(StencilRun& run, uint64_t iterations, double& ms_per_iteration, Progress& progress,
                            double& done) {
  HaloPhaseTimes sum;
  for (uint64_t left = iterations; left > 0;) {
    uint64_t k = left;
    if (ms_per_iteration <= 0.0)
      k = 1;
    else if (ms_per_iteration * double(left) > 1000.0)
      k = std::clamp<uint64_t>(uint64_t(500.0 / ms_per_iteration), 1, left);
    const HaloPhaseTimes t = run.run_timed(k);
    sum.add(t);
    left -= k;
    if (t.iterations > 0 && t.total_ms > 0.0) ms_per_iteration = t.total_ms / double(t.iterations);
    progress.update(done += double(k));
  }
  return sum;
}

struct Row {
  int size = 0, partitions = 0, gpus = 0, depth = 0;
  std::string tiles, exchange;
  bool overlap = false;
  std::string kernel;
  double total = 0, compute = 0, inner = 0, outer = 0, pack = 0, exchange_ms = 0, unpack = 0, wait = 0;  // ms per iteration
  double coverage = -1, comm_off = -1, speedup = -1;
  double gbps = 0, gupd = 0;
};

std::string cell(double v, const char* f = "{:.3f}") { return v < 0 ? "-" : fmt::format(fmt::runtime(f), v); }

}  // namespace

bool run_stencil_bench_if_selected(int argc, char** argv, int& rc) {
  if (!selected(argc, argv)) return false;
  StencilBenchCommand c;
  CLI::App app{"the deep-halo stencil's bench (Valen 2023, Figs 5.1-5.16, Tables 5.1-5.2)", "megaview bench"};
  add_stencil_bench_options(app, c);
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      rc = app.exit(e);
      return true;
    }
    std::string line = e.what();
    for (const std::string& arg : app.remaining(true))
      if (arg.size() > 1 && arg[0] == '-') line = arg.substr(0, arg.find('=')) + ": unknown option of the stencil bench (see --help)";
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::fprintf(stderr, "megaview: %s\n", line.c_str());
    rc = e.get_exit_code();
    return true;
  }
  if (c.workloads.size() != 1)
    throw InputError("", "--workload", "stencil runs alone: give --workload stencil without other workloads");
  const bool gpu = !c.force_cpu && gpu_available();
  const int present = gpu ? stencil_gpu_count() : 0;
  if (!gpu && c.gpus > 1)
    throw InputError("", "--gpus", fmt::format("must be 1 without a GPU{}, got {}", c.force_cpu ? " (--cpu given)" : "", c.gpus));
  // Every combination is checked before the first runs.
  for (int n : c.sizes)
    for (int p : c.partitions)
      for (int d : c.depths) {
        HaloConfig h;
        h.n = n;
        h.partitions = p;
        h.gpus = c.gpus;
        h.depth = d;
        check_halo_config(h, gpu ? present : 0);
      }
  if (!gpu)
    for (int n : c.sizes) check_stencil_host_memory(n, "--size");
  if (!c.csv.empty()) {
    cli::check_output_file(c.csv, "--csv");
    ensure_absent(figure_metadata_path(c.csv));
    for (const std::string& f : figure_files("stencil-bench", figure_stem(c.csv))) ensure_absent(f);
  }

  const double peak = gpu ? stencil_dram_peak_gbps(0) : 0.0;
  const std::string device = gpu ? gpu_info().name : "CPU (TBB)";
  fmt::print("bench: workload stencil (Jacobi/Laplace five-point, float32, periodic) on {}, G = {}, {} iterations x {} "
             "repeats{}\n",
             device, c.gpus, c.iterations, c.repeat, gpu ? fmt::format(", DRAM peak {:.0f} GB/s", peak) : "");
  fmt::print("timed: {} around the iterations (a run of over 1 s in calls of about 0.5 s, summed), after one untimed warm-up; per phase: {}; ms per iteration, "
             "median of the repeats; GB/s = 8 bytes per useful site update\n",
             gpu ? "CUDA events" : "wall clock", gpu ? "CUDA events around each kernel, copy and NCCL group" : "wall clock");
  const std::string header = fmt::format(
      "{:>6} {:>3} {:>5} {:>5} {:>5} {:>7} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
      "size", "P", "tiles", "depth", "exch", "overlap", "kernel", "ms/iter", "compute", "inner", "outer", "pack", "exchange",
      "unpack", "wait", "GB/s", "%DRAM", "Gupd/s");
  fmt::print("{}\n", header);
  std::fflush(stdout);

  std::vector<Row> rows;
  // Progress in iterations over every run, the warm-ups included (app/cli/progress.h: nothing for a job
  // under ~2 s); a long run reports within itself (run_reported).
  const auto warm_up = [&](int d) { return uint64_t(std::min(c.iterations, std::max(d, 32))); };
  double total = 0.0;
  for (int d : c.depths)
    total += double(c.sizes.size() * c.partitions.size() * c.exchanges.size() * c.overlaps.size() * c.kernels.size()) *
             double(warm_up(d) + uint64_t(c.repeat) * uint64_t(c.iterations));
  Progress progress("stencil bench", total, "iterations");
  double done = 0.0;
  for (int n : c.sizes)
    for (int p : c.partitions)
      for (int d : c.depths)
        for (const std::string& ex : c.exchanges)
          for (const std::string& ov : c.overlaps)
            for (const std::string& kn : c.kernels) {
            ParamValues knobs{{"size", std::to_string(n)}, {"partitions", std::to_string(p)},
                              {"gpus", std::to_string(c.gpus)}, {"depth", std::to_string(d)},
                              {"exchange", ex}, {"overlap", ov == "on" ? "true" : "false"}, {"kernel", kn}};
            StencilRun run(knobs, gpu);
            double ms_per_iteration = 0.0;
            run_reported(run, warm_up(d), ms_per_iteration, progress, done);  // warm-up
            std::vector<double> tot, com, inn, out, pk, xc, up, wt;
            for (int r = 0; r < c.repeat; ++r) {
              const HaloPhaseTimes t = run_reported(run, uint64_t(c.iterations), ms_per_iteration, progress, done);
              const double k = double(t.iterations);
              tot.push_back(t.total_ms / k);
              com.push_back(t.compute_ms / k);
              inn.push_back(t.inner_ms / k);
              out.push_back(t.outer_ms / k);
              pk.push_back(t.pack_ms / k);
              xc.push_back(t.exchange_ms / k);
              up.push_back(t.unpack_ms / k);
              wt.push_back(t.wait_ms / k);
            }
            Row row;
            row.size = n;
            row.partitions = p;
            row.gpus = c.gpus;
            row.depth = d;
            row.tiles = std::to_string(run.plan().px) + "x" + std::to_string(run.plan().py);
            row.exchange = ex;
            row.overlap = ov == "on";
            row.kernel = kn;
            row.total = median(tot);
            row.compute = median(com);
            row.inner = median(inn);
            row.outer = median(out);
            row.pack = median(pk);
            row.exchange_ms = median(xc);
            row.unpack = median(up);
            row.wait = median(wt);
            const double updates = double(n) * n;
            row.gbps = row.total > 0 ? updates * JacobiRule::kBytesPerUpdate / (row.total * 1e6) : 0;
            row.gupd = row.total > 0 ? updates / (row.total * 1e6) : 0;
            rows.push_back(row);
            fmt::print("{:>6} {:>3} {:>5} {:>5} {:>5} {:>7} {:>8} {:>9.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f} "
                       "{:>8.4f} {:>8.4f} {:>8.1f} {:>8} {:>8.2f}\n",
                       n, p, row.tiles, d, ex, ov, kn, row.total, row.compute, row.inner, row.outer, row.pack,
                       row.exchange_ms, row.unpack, row.wait, row.gbps, peak > 0 ? cell(100 * row.gbps / peak, "{:.1f}") : "-",
                       row.gupd);
            std::fflush(stdout);
          }
  progress.finish();
  // Coverage (Tables 5.1-5.2) and speed-up over the plain version.
  auto key = [](const Row& r) { return std::make_tuple(r.size, r.partitions, r.gpus, r.depth, r.exchange, r.kernel); };
  std::map<std::tuple<int, int, int, int, std::string, std::string>, const Row*> off;
  std::map<std::tuple<int, int, int, std::string>, double> plain;
  for (const Row& r : rows) {
    if (!r.overlap) off[key(r)] = &r;
    if (!r.overlap && r.depth == 1 && r.exchange == "sync") plain[{r.size, r.partitions, r.gpus, r.kernel}] = r.total;
  }
  for (Row& r : rows) {
    const auto o = off.find(key(r));
    if (r.overlap && o != off.end()) {
      r.comm_off = o->second->exchange_ms + o->second->unpack + o->second->wait;
      r.coverage = r.comm_off > 0 ? (o->second->total - r.total) / r.comm_off : -1;
    }
    const auto b = plain.find({r.size, r.partitions, r.gpus, r.kernel});
    if (b != plain.end() && r.total > 0) r.speedup = b->second / r.total;
  }
  fmt::print("\noverlap coverage (Valen 2023 Tables 5.1-5.2: (ms/iter without overlap - with) / (exchange + unpack + wait "
             "without overlap)) and speed-up over sync, depth 1, no overlap:\n");
  fmt::print("{:>6} {:>3} {:>5} {:>5} {:>7} {:>8} {:>9} {:>12} {:>9} {:>9}\n", "size", "P", "depth", "exch", "overlap",
             "kernel", "ms/iter", "comm w/o ov", "coverage", "speed-up");
  const Row* best = nullptr;
  for (const Row& r : rows) {
    fmt::print("{:>6} {:>3} {:>5} {:>5} {:>7} {:>8} {:>9.4f} {:>12} {:>9} {:>9}\n", r.size, r.partitions, r.depth,
               r.exchange, r.overlap ? "on" : "off", r.kernel, r.total, cell(r.comm_off, "{:.4f}"),
               r.overlap && r.comm_off > 0 ? fmt::format("{:.1f}%", 100 * r.coverage) : "-",
               cell(r.speedup, "{:.3f}x"));
    if (r.speedup > 0 && (!best || r.speedup > best->speedup)) best = &r;
  }
  if (best)
    fmt::print("best: size {} P {} depth {} {} overlap {} kernel {}: {:.4f} ms/iter, {:.3f}x over sync depth 1 without "
               "overlap\n",
               best->size, best->partitions, best->depth, best->exchange, best->overlap ? "on" : "off", best->kernel,
               best->total, best->speedup);

  if (!c.csv.empty()) {
    std::string csv =
        "size,partitions,gpus,tiles,depth,exchange,overlap,kernel,iterations,repeats,ms_per_iteration,compute_ms,inner_ms,"
        "outer_ms,pack_ms,exchange_ms,unpack_ms,wait_ms,comm_ms_without_overlap,coverage,speedup_vs_plain,gb_per_s,"
        "dram_peak_gb_per_s,gupdates_per_s,clock,device\n";
    for (const Row& r : rows)
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{:.2f},{:.1f},{:.4f},{},\"{}\"\n",
                         r.size, r.partitions, r.gpus, r.tiles, r.depth, r.exchange, r.overlap ? "on" : "off",
                         r.kernel, c.iterations, c.repeat, r.total, r.compute, r.inner, r.outer, r.pack, r.exchange_ms, r.unpack,
                         r.wait, r.comm_off < 0 ? "" : fmt::format("{:.6f}", r.comm_off),
                         r.comm_off < 0 ? "" : fmt::format("{:.4f}", r.coverage),
                         r.speedup < 0 ? "" : fmt::format("{:.4f}", r.speedup), r.gbps, peak, r.gupd,
                         gpu ? "cuda-events" : "wall-clock", device);
    write_new_text_file(c.csv, csv);
    FigureMetadata meta;
    meta.kind = "stencil-bench";
    meta.subcommand = "bench --workload stencil";
    meta.redoes = "Valen 2023, Figs 5.1-5.16, Tables 5.1-5.2";
    meta.context = fmt::format("Jacobi five-point, float32, G = {}, {} iterations, median of {}", c.gpus, c.iterations, c.repeat);
    if (gpu) meta.gpu = device;
    meta.units = {{"size", "sites per side"}, {"partitions", "P"}, {"gpus", "G"}, {"tiles", "px x py"},
                  {"depth", "halo depth"}, {"exchange", "sync or async"}, {"overlap", "on or off"}, {"kernel", "block shape x*y*rows"},
                  {"iterations", "per timed run"}, {"repeats", "timed runs"}, {"ms_per_iteration", "ms"},
                  {"compute_ms", "ms per iteration"}, {"inner_ms", "ms per iteration"}, {"outer_ms", "ms per iteration"},
                  {"pack_ms", "ms per iteration"}, {"exchange_ms", "ms per iteration"}, {"unpack_ms", "ms per iteration"},
                  {"wait_ms", "ms per iteration"}, {"comm_ms_without_overlap", "ms per iteration"},
                  {"coverage", "fraction"}, {"speedup_vs_plain", "x"}, {"gb_per_s", "GB/s (8 bytes per update)"},
                  {"dram_peak_gb_per_s", "GB/s"}, {"gupdates_per_s", "1e9 updates/s"},
                  {"clock", "cuda-events or wall-clock"}, {"device", "name"}};
    write_figure_metadata(c.csv, meta);
    fmt::print("wrote {}, {}\n", c.csv, figure_metadata_path(c.csv));
    draw_figures(c.csv);
  }
  rc = 0;
  return true;
}

}  // namespace mv
