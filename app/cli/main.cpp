// megaview's command line: the GUI by default, and the headless subcommands render, reference,
// mse-curve and bench (app/cli/cli.h). Bad input ends the program with one line on stderr,
// "megaview: <message>", and exit status 1 (command-line syntax errors: CLI11's status).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/cli_gibbs_bench.h"
#include "app/cli/cli_params.h"
#include "app/cli/cli_stencil_bench.h"
#include "app/cli/cli_strands.h"
#include "app/cli/cli_validate.h"
#include "app/session/lattice_run.h"
#include "app/session/strand_workloads.h"
#include "app/gui/gui.h"
#include "base/errors.h"

namespace {

using namespace mv;

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Busy-time options: up to 1e7 ms (2.8 hours) per run or series.
constexpr double kMaxBusyMs = 1e7;
/// The range of the models' --buffer-multiplier: the megakernel knob's (megakernel_params()).
constexpr double kMinBufferMultiplier = 0.01, kMaxBufferMultiplier = 100.0;

/// The options every command shares; `priority` is bound as text and parsed after CLI11 is done.
struct Common {
  SessionOptions session;
  std::string priority = priority_name(PriorityFunction::Convergence);
};

std::vector<std::string> priority_names() {
  std::vector<std::string> n;
  for (int i = 0; i < kNumPriorityFunctions; ++i) n.push_back(priority_name(static_cast<PriorityFunction>(i)));
  return n;
}

/// Scene, size, sampling and device options (every command).
void add_session_options(CLI::App& app, Common& c) {
  SessionOptions& o = c.session;
  app.add_option("--scene", o.scene, "scene name (a file in scenes/) or path to a scene file")
      ->check(cli::non_empty("a scene name or file"))
      ->capture_default_str();
  app.add_option("--width", o.width, "image width in pixels (default: the scene's)")
      ->check(cli::integer(kMinResolution, kMaxResolution, "pixels"));
  app.add_option("--height", o.height, "image height in pixels (default: the scene's)")
      ->check(cli::integer(kMinResolution, kMaxResolution, "pixels"));
  app.add_option("--paths-per-pixel", o.task.paths_per_pixel, "new samples per pixel each time a patch runs")
      ->check(cli::integer(1, 64))
      ->capture_default_str();
  app.add_option("--spp", o.task.target_spp, "target samples per pixel (default: the scene's)")
      ->check(cli::integer(1, kMaxTargetSpp));
  app.add_option("--seed", o.task.seed, "random seed (same seed, same image)")
      ->check(cli::integer(0, UINT32_MAX))
      ->capture_default_str();
  app.add_option("--wave-size", o.schedule.wave_size, "tasks per priority wave K")
      ->check(cli::integer(1, 1 << 24))
      ->capture_default_str();
  app.add_flag("--cpu", o.force_cpu, "render on the CPU even when a GPU is present");
}

void add_strategy_option(CLI::App& app, Common& c, const std::string& default_text) {
  app.add_option("--strategy", c.session.strategy, "scheduling strategy (default: " + default_text + ")")
      ->check(cli::one_of(patch_strategies().names()));
}

/// A number in `text` checked by `ok`; else the message "must be <what>, got "<text>"" (app/cli/cli_validate.h).
template <class T, class Ok>
CLI::Validator number_check(const std::string& what, Ok ok) {
  return cli::checked<T>(what, ok);
}

/// Every strategy knob as an option, generated from the tables (base/params.h) into c.session.knobs: the
/// path tracer strategies' (the megakernel's, Kerbl 2012 §3–§5, apply whenever it runs: --strategy
/// megakernel, the GPU default, or an entry of --strategies / --compare) and, with `strands`, the strand
/// strategies'; a name that both have (work-unit) once.
void add_knob_options(CLI::App& app, Common& c, bool strands = false) {
  std::vector<ParamSpec> specs = patch_strategy_knobs();
  if (strands)
    for (const ParamSpec& s : strand_params().specs())
      if (!find_param(specs, s.name)) specs.push_back(s);
  add_param_options(app, specs, "strategy knob",
                    [&c](const std::string& name, const std::string& text) { c.session.knobs[name] = text; });
}

/// A knob name that a lattice workload and a strand workload both have with different values (--kernel:
/// the stencil's block shapes, the ray casters' reconstruction kernels) as one viewer option: it takes what
/// either accepts, and check_workload_knob_values holds the value to the started workload's own range.
void add_shared_knob_option(CLI::App& app, Common& c, const ParamSpec& lattice, const ParamSpec& strand) {
  const std::string allowed = param_allowed_text(lattice) + " (lattice workloads) or " + param_allowed_text(strand) +
                              " (strand workloads)";
  app.add_option_function<std::string>(
         "--" + lattice.name, [&c, name = lattice.name](const std::string& text) { c.session.knobs[name] = text; },
         "lattice workload knob: " + lattice.doc + "; strand workload knob: " + strand.doc)
      ->check(CLI::Validator(
          [lattice, strand, allowed](std::string& text) -> std::string {
            for (const ParamSpec* s : {&lattice, &strand}) {
              try {
                parse_param(*s, text);
                return {};
              } catch (const InputError&) {
              }
            }
            return "must be " + allowed + ", got \"" + text + "\"";
          },
          allowed));
}

/// The lattice workloads' knobs as viewer options (--gamma, --block-width, …): each reaches whichever lattice
/// workload --workload starts (names it does not have are ignored there). Names the viewer already has
/// (--width, --height, --seed) keep their option; run() hands them to a lattice workload that has them.
void add_lattice_options(CLI::App& app, Common& c) {
  std::vector<ParamSpec> specs;
  for (const LatticeWorkloadEntry& e : lattice_workloads())
    for (const ParamSpec& s : e.knobs)
      if (!find_param(specs, s.name) && !app.get_option_no_throw("--" + s.name)) specs.push_back(s);
  const std::vector<ParamSpec> strand = strand_workload_knobs();
  std::vector<ParamSpec> own;
  for (const ParamSpec& s : specs) {
    const ParamSpec* other = find_param(strand, s.name);
    if (other && (other->kind != s.kind || param_allowed_text(*other) != param_allowed_text(s)))
      add_shared_knob_option(app, c, s, *other);
    else
      own.push_back(s);
  }
  add_param_options(app, own, "lattice workload knob",
                    [&c](const std::string& name, const std::string& text) { c.session.knobs[name] = text; });
}

/// Holds each lattice or strand workload knob given on the command line to the range of the workload that
/// --workload starts, where it has that knob (a name two kinds of workload share is checked at parsing
/// only against the union of their values): one line naming the option, before the window opens.
void check_workload_knob_values(const CLI::App& app, const GuiOptions& gui) {
  if (gui.strand_workload.empty()) return;
  std::vector<ParamSpec> own;
  if (const LatticeWorkloadEntry* lattice = find_lattice_workload(gui.strand_workload))
    own = lattice->knobs;
  else
    own = find_strand_workload(gui.strand_workload).knobs;
  for (const auto& [name, text] : gui.session.knobs)
    if (const ParamSpec* spec = find_param(own, name); spec && app.count("--" + name) > 0) parse_param(*spec, text);
}

/// The strand workloads' own knobs as viewer options (--smooth, --kernel, --step, …): strand mode hands the
/// chosen workload those it has. Names the viewer already has (--volume, shared with a lattice workload) keep
/// their option and reach both.
void add_strand_workload_options(CLI::App& app, Common& c) {
  std::vector<ParamSpec> specs;
  for (const ParamSpec& s : strand_workload_knobs())
    if (!app.get_option_no_throw("--" + s.name)) specs.push_back(s);
  add_param_options(app, specs, "strand workload knob",
                    [&c](const std::string& name, const std::string& text) { c.session.knobs[name] = text; });
}

void add_priority_option(CLI::App& app, Common& c) {
  app.add_option("--priority", c.priority, "priority function of the patch tasks")
      ->check(cli::one_of(priority_names()))
      ->capture_default_str();
  app.add_option("--noise-threshold", c.session.task.noise_threshold,
                 "priority adaptive: noise threshold t (Cycles' adaptive sampling: a pixel converges at error < 5t)")
      ->check(number_check<float>("in (0, 1]", [](float v) { return v > 0.f && v <= 1.f; }))
      ->capture_default_str();
}

void add_reference_option(CLI::App& app, Common& c, const std::string& what) {
  app.add_option("--reference", c.session.reference, what)->check(cli::non_empty("an EXR file"));
}

SessionOptions finish(const Common& c) {
  SessionOptions o = c.session;
  o.task.priority = parse_priority(c.priority.c_str());
  return o;
}

/// One line on stderr: "megaview: <message>".
void report(const std::string& message) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::fprintf(stderr, "megaview: %s\n", line.c_str());
}

/// CLI11's message in the program's style where CLI11 words it otherwise: "Could not convert: --x = v"
/// becomes "--x: could not read "v" as its value". Validated options never get there (cli_validate.h).
std::string parse_error_text(const CLI::ParseError& e, const CLI::App& app) {
  const std::string what = e.what();
  // An unknown option explains the rest ("--outt x.png" also leaves --out missing): it goes first.
  for (const std::string& arg : app.remaining(true))
    if (arg.size() > 1 && arg[0] == '-')
      return arg.substr(0, arg.find('=')) + ": unknown option (see --help)";
  std::smatch m;
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+))");
  static const std::regex at_least(R"(^(\S+): At least (\d+) required but received (\d+))");
  static const std::regex missing(R"(^(\S+): \d+ required .* missing)");
  static const std::regex extra(R"(^The following arguments? (?:was|were) not expected: (\S+))");
  if (std::regex_search(what, m, at_most))
    return m[2] == "1" ? m[1].str() + ": given " + m[3].str() + " times; give it once"
                       : m[1].str() + ": takes at most " + m[2].str() + " values, got " + m[3].str();
  if (std::regex_search(what, m, at_least))
    return m[1].str() + ": needs " + m[2].str() + " values, comma separated, got " + m[3].str();
  if (std::regex_search(what, m, missing)) return m[1].str() + ": needs a value";
  if (std::regex_search(what, m, extra)) return m[1].str() + ": unexpected argument (see --help)";
  const std::string convert = "Could not convert: ";
  if (what.rfind(convert, 0) == 0) {
    const size_t eq = what.find(" = ", convert.size());
    if (eq != std::string::npos)
      return what.substr(convert.size(), eq - convert.size()) + ": could not read \"" + what.substr(eq + 3) +
             "\" as its value";
  }
  return what;
}

const char* const kDefaultStrategy = "megakernel on a GPU, cpu-waves otherwise";

/// The viewer's target spp without --spp: the reference images' sample count (assets/*.json).
constexpr uint32_t kViewerTargetSpp = 65536;

void add_viewer_options(CLI::App& app, Common& c, GuiOptions& gui) {
  add_session_options(app, c);
  add_strategy_option(app, c, kDefaultStrategy);
  add_knob_options(app, c, true);
  add_lattice_options(app, c);
  add_strand_workload_options(app, c);
  add_priority_option(app, c);
  add_reference_option(app, c, "reference EXR for the MSE display (default: the scene's, if any)");
  app.add_option("--frames", gui.frames, "render this many frames, then exit (smoke tests)")
      ->check(cli::integer(0, 100000000));
  app.add_option("--window-shot", gui.window_shot, "after --frames frames, save the window as this PNG")
      ->check(cli::non_empty("a PNG file name"));
  app.add_flag("--host-copy", gui.force_host_copy,
               "display through a host copy even where CUDA-GL interop works (to compare their cost)");
  app.add_option("--capture-dir", gui.capture_dir, "folder for screenshots (created if missing, in a folder that exists)")
      ->check(cli::non_empty("a folder"))
      ->capture_default_str();
  app.add_option_function<std::vector<std::string>>(
         "--smoke-at",
         [&gui](const std::vector<std::string>& steps) {
           for (const std::string& s : steps) gui.smoke_actions.push_back(parse_smoke_action(s));
         },
         "scripted smoke-test steps, comma separated: " + smoke_forms_text())
      ->delimiter(',');
  // Strand mode: --workload opens the viewer on a strand workload instead of the path tracer.
  const std::string lattice = lattice_workload_names();
  const std::string all_workloads = strand_workload_names() + (lattice.empty() ? "" : ", " + lattice);
  app.add_option("--workload", gui.strand_workload,
                 "start on this strand workload (run by a strand strategy) or lattice workload (runs live): " +
                     all_workloads)
      ->check(cli::non_empty("a workload (" + all_workloads + ")"));
  app.add_option("--strand-strategy", gui.strand_strategy,
                 "strand mode: strand strategy (default: cuda with a GPU, else cpu-parallel)")
      ->check(cli::non_empty("a strand strategy"));
  app.add_option_function<std::string>(
      "--grid", [&gui](const std::string& text) { gui.strand_grid = parse_grid(text, "--grid"); },
      "strand mode: grid n,b[,c] (blocks, threads per block, strands per work unit) or auto");
  app.add_option("--fill-in", gui.fill_in_seconds,
                 "strand mode: seconds of the fill-in replay of each finished run (the strands in the order they "
                 "finished); 0: the finished image at once (default 2, and 0 with --frames)")
      ->check(cli::real({0.0}, {60.0}, "s"));
  app.add_option_function<std::string>(
      "--strand-size",
      [&gui](const std::string& text) {
        std::tie(gui.strand_width, gui.strand_height) = parse_strand_size(text, "--strand-size");
      },
      "strand mode: WxH strands (default: the paper's strand count)");
  app.add_option_function<std::string>(
      "--split",
      [&gui](const std::string& spec) {
        gui.split_spec = parse_split_spec(spec);
        gui.split = true;
      },
      "start in split view (Kerbl 2012 Fig 8): the right half rendered by STRATEGY[:PRIORITY] at the same "
      "sample budget (without a priority: variance next to none, else none)");
}

CLI::App* add_render_command(CLI::App& app, Common& c, RenderCommand& r) {
  CLI::App* cmd = app.add_subcommand("render", "render one image to F.png (tone-mapped) and F.exr (linear)");
  add_session_options(*cmd, c);
  add_strategy_option(*cmd, c, kDefaultStrategy);
  add_knob_options(*cmd, c);
  add_priority_option(*cmd, c);
  add_reference_option(*cmd, c, "reference EXR to print the MSE against (default: the scene's, if any)");
  cmd->add_option("--time-ms", r.time_ms, "stop after this much busy time")
      ->check(cli::real({0.0, false}, {kMaxBusyMs}, "ms"));
  cmd->add_option("--budget", r.budget,
                  "stop after this fraction of the full budget (every patch at the target) was traced, e.g. 0.4 "
                  "for Kerbl 2012's Figs 6-7")
      ->check(cli::real({0.0, false}, {1.0}));
  cmd->add_option("--heat-out", r.heat_out, "also write the heat map of samples per patch as this PNG")
      ->check(cli::non_empty("a PNG file name"));
  cmd->add_option("--out", r.out, "output PNG; the EXR goes beside it")->required();
  return cmd;
}

CLI::App* add_reference_command(CLI::App& app, Common& c, ReferenceCommand& r) {
  CLI::App* cmd = app.add_subcommand("reference", "render a ground-truth EXR with a sidecar JSON");
  c.session.task.seed = kReferenceSeed;
  add_session_options(*cmd, c);
  add_strategy_option(*cmd, c, "the fastest: uniform on a GPU, cpu-parallel otherwise");
  cmd->get_option("--spp")->required();
  cmd->add_option("--out", r.out, "output EXR; R.json goes beside it")->required();
  cmd->add_flag("--force", r.force, "replace existing output files");
  return cmd;
}

CLI::App* add_mse_curve_command(CLI::App& app, Common& c, MseCurveCommand& m) {
  CLI::App* cmd = app.add_subcommand("mse-curve", "MSE over time and over samples per strategy (Kerbl 2012, Fig 9)");
  add_session_options(*cmd, c);
  add_knob_options(*cmd, c);
  add_priority_option(*cmd, c);
  add_reference_option(*cmd, c, "reference EXR (default: the scene's, if any)");
  cmd->add_option("--compare", m.compare,
                  "series strategy[:priority], comma separated; without a priority: none for uniform, else --priority "
                  "(default: uniform,sorted-waves:convergence,sorted-waves:variance with a GPU, "
                  "cpu-waves:none,cpu-waves:convergence,cpu-waves:variance without)")
      ->delimiter(',');
  cmd->add_option("--duration-ms", m.duration_ms, "busy time per series")
      ->check(cli::real({0.0, false}, {kMaxBusyMs}, "ms"))
      ->capture_default_str();
  cmd->add_option("--interval-ms", m.interval_ms, "busy time between records")
      ->check(cli::real({0.0, false}, {kMaxBusyMs}, "ms"))
      ->capture_default_str()
      ->each([&m](const std::string&) { m.interval_given = true; });
  cmd->add_flag("--from-scratch", m.from_scratch,
                "record k renders from an empty film in one uninterrupted step of about k x --interval-ms busy time "
                "(no record splits the schedule into slices; the busy time of a series grows as the square of its "
                "records)");
  cmd->add_option("--goal-spp", m.goal_spp,
                  "time to quality: the goal is uniform's MSE at this mean spp; prints each series' time and "
                  "samples to reach it relative to uniform's")
      ->check(cli::real({0.0, false}, {static_cast<double>(kMaxTargetSpp)}, "spp"));
  cmd->add_option("--out-prefix", m.out_prefix, "writes P.csv, P.json (metadata) and, with matplotlib, P-time and P-samples .png/.pdf")->required();
  return cmd;
}

CLI::App* add_bench_command(CLI::App& app, Common& c, BenchCommand& b, StrandBenchCommand& sb) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "time full renders per strategy (median of repeats); with --workload, Lehmann 2023's strand strategies");
  add_session_options(*cmd, c);
  add_knob_options(*cmd, c, true);
  add_priority_option(*cmd, c);
  // One option for every bench: the names are the path tracer's strategies, or with --workload that
  // workload's (checked by run(), which knows which); --strategies is the same option.
  cmd->add_option("--strategy,--strategies", sb.strategies,
                  "strategies, comma separated: the path tracer's (default: the GPU ones with a GPU, else the CPU "
                  "ones), or with --workload the workload's (default: all that run here)")
      ->delimiter(',')
      ->check(cli::non_empty("a strategy"));
  cmd->add_option("--repeat", b.repeat, "timed renders per strategy")
      ->check(cli::integer(1, 1000))
      ->capture_default_str();
  cmd->add_option("--csv", b.csv, "also write every run to this CSV file")->check(cli::non_empty("a CSV file name"));
  // The strand bench (app/cli/cli_strand_bench.cpp): --workload selects it.
  cmd->add_option("--workload", sb.workloads,
                  "strand workloads, comma separated (" + strand_workload_names() + "): time strand strategies")
      ->delimiter(',')
      ->check(cli::non_empty("a strand workload (" + strand_workload_names() + ")"));
  cmd->add_option("--grid", sb.grid, "strand grid n,b[,c] (blocks, threads per block, strands per work unit) or auto")
      ->check(cli::non_empty("n,b[,c] or auto"));
  cmd->add_option("--size", sb.size,
                  "strand workload size WxH (default: the paper's strand count; path-tracer: 800x600, multiples of 4)")
      ->check(cli::non_empty("WxH"));
  cmd->add_flag("--record-finish-order", sb.record_finish_order,
                "strand runs record the order strands finish in, as the viewer's fill-in replay does (to time its cost)");
  cmd->add_flag("--sweep", sb.sweep, "Lehmann 2023 Appendix A: sweep n, b, c; writes P.csv, P.json and P.png/.pdf (--out-prefix)");
  cmd->add_option("--sweep-max-threads", sb.sweep_max_threads, "largest n*b of the sweep")
      ->check(cli::integer(4096, 1 << 26))
      ->capture_default_str();
  cmd->add_option("--out-prefix", sb.out_prefix, "--sweep writes P.csv, P.json and P.png/.pdf")
      ->check(cli::non_empty("a file name prefix"));
  return cmd;
}

/// `bench` times path-tracer renders, or with --workload strand strategies, or with --workload gibbs the
/// Gibbs sampler's kernels (app/cli/cli_gibbs_bench.h); each refuses the options of the others rather than
/// ignoring them. `gibbs`: the bench is the gibbs one.
void check_bench_mode(const CLI::App& cmd, bool gibbs) {
  const bool strands = cmd.count("--workload") > 0 && !gibbs;
  // The gibbs bench's own options: its flags and the gibbs knobs that no other bench option names.
  std::vector<std::string> gibbs_only = {"--block", "--padding", "--sweeps", "--sweep-blocks"};
  if (const LatticeWorkloadEntry* g = find_lattice_workload("gibbs"))
    for (const ParamSpec& spec : g->knobs)
      if (spec.name != "width" && spec.name != "height" && spec.name != "seed")
        append_param_option_names(spec, gibbs_only);
  std::vector<std::string> patch_only = {"--scene", "--paths-per-pixel", "--spp", "--wave-size", "--priority",
                                         "--noise-threshold"};
  if (!gibbs)  // the gibbs bench takes the lattice's size and seed from these
    for (const char* shared : {"--width", "--height", "--seed"}) patch_only.push_back(shared);
  std::vector<std::string> strand_only = {"--grid", "--size", "--sweep", "--sweep-max-threads", "--record-finish-order"};
  if (!gibbs) strand_only.push_back("--out-prefix");  // the gibbs bench's --sweep-blocks writes P.csv
  std::vector<std::string> knobs;  // the scheduling strategies' knobs, read by the path tracer's and the strand bench
  for (const ParamSpec& spec : strand_params().specs())
    if (!find_param(patch_strategy_knobs(), spec.name)) append_param_option_names(spec, strand_only);
  for (const ParamSpec& spec : patch_strategy_knobs()) append_param_option_names(spec, knobs);
  const auto given = [&cmd](const std::string& name) { return cmd.get_option_no_throw(name) && cmd.count(name) > 0; };
  if (gibbs) {
    for (const std::vector<std::string>* list : {&patch_only, &strand_only, &knobs})
      for (const std::string& name : *list)
        if (given(name))
          throw InputError("", name, "is not an option of the gibbs bench (--workload gibbs); see bench --help");
    return;
  }
  for (const std::string& name : gibbs_only)
    if (given(name)) throw InputError("", name, "belongs to the gibbs bench: give --workload gibbs");
  for (const std::string& name : strands ? patch_only : strand_only)
    if (given(name))
      throw InputError("", name,
                       strands ? "is an option of the path tracer's bench, not of the strand bench (--workload)"
                               : "belongs to the strand bench: give --workload too");
}

CLI::App* add_sort_bench_command(CLI::App& app, SortBenchCommand& s) {
  CLI::App* cmd =
      app.add_subcommand("sort-bench", "one-block bitonic sort and merges vs CUB radix sorts (Kerbl 2012, Fig 3)");
  cmd->add_option("--sizes", s.sizes, "keys n, comma separated powers of two in [32, 1024] (default: all)")
      ->delimiter(',')
      ->check(cli::power_of_two(32, 1024));
  cmd->add_option("--threads", s.threads, "block sizes, comma separated powers of two in [32, 1024] (default: all)")
      ->delimiter(',')
      ->check(cli::power_of_two(32, 1024));
  cmd->add_option("--batches", s.batches, "sorts of different keys per timed run")
      ->check(cli::integer(1, 100000))
      ->capture_default_str();
  cmd->add_option("--repeat", s.repeat, "timed runs (median reported)")
      ->check(cli::integer(1, 1000))
      ->capture_default_str();
  cmd->add_option("--seed", s.seed, "random keys")->check(cli::integer(0, UINT32_MAX))->capture_default_str();
  cmd->add_option("--csv", s.csv, "also write every configuration to this CSV file")
      ->check(cli::non_empty("a CSV file name"));
  cmd->add_option("--plot", s.plot, "also draw time vs n at the best block size from --csv to this PNG (and .pdf beside it; needs matplotlib)");
  return cmd;
}

/// The options of `megaview strands`: the workload, its size, its view (orbit or plane) and its own knobs,
/// generated from the registry (app/session/strand_workloads.h).
CLI::App* add_strands_command(CLI::App& app, StrandsCommand& s) {
  CLI::App* cmd = app.add_subcommand(
      "strands", "run a strand workload on the CPU, write its image and print step statistics (Lehmann 2023 Fig 3.2)");
  std::vector<std::string> names;
  for (const StrandWorkloadEntry& e : strand_workloads()) names.push_back(e.name);
  cmd->add_option("--workload", s.workload, "strand workload (app/session/strand_workloads.h)")
      ->check(cli::one_of(names))
      ->capture_default_str();
  cmd->add_option("--size", s.size, "WxH strands (default: the workload's, the paper's strand count)")
      ->check(cli::non_empty("WxH"));
  add_param_options(*cmd, strand_view_knobs().specs(), "view", [&s](const std::string& name, const std::string& text) {
    BoundParams<StrandViewParams>(strand_view_knobs(), s.view).apply({{name, text}});
  });
  add_param_options(*cmd, strand_workload_knobs(), "workload knob",
                    [&s](const std::string& name, const std::string& text) { s.knobs[name] = text; });
  cmd->add_option("--out", s.out, "output PNG")->required();
  return cmd;
}

/// Refuses a view option that the chosen workload's view does not read (rather than ignoring it): one line
/// naming the option and the workloads whose view has it.
void check_strands_view_options(const CLI::App& cmd, const StrandsCommand& s) {
  const StrandViewKind kind = find_strand_workload(s.workload).view_kind;
  for (const StrandViewKind k : {StrandViewKind::Orbit, StrandViewKind::Plane}) {
    if (k == kind) continue;
    std::string owners;
    for (const StrandWorkloadEntry& e : strand_workloads())
      if (e.view_kind == k) owners += (owners.empty() ? "" : ", ") + e.name;
    for (const std::string& name : strand_view_knob_names(k))
      if (cmd.count("--" + name) > 0) throw InputError("", "--" + name, "applies to " + owners + ", not to " + s.workload);
  }
}

/// The two axes of the S(n) experiments (Kerbl 2012 Figs 4–5) that sched-model and sched-bench share:
/// --n (queue lengths) and --task-us (task durations, checked by `task_us_check`).
void add_sn_axes(CLI::App& cmd, std::vector<uint32_t>& n, std::vector<double>& task_us,
                 const CLI::Validator& task_us_check) {
  cmd.add_option("--n", n, "queue lengths, comma separated")
      ->delimiter(',')
      ->check(cli::integer(2, 1 << 24))
      ->capture_default_str();
  cmd.add_option("--task-us", task_us, "task durations in µs, comma separated")
      ->delimiter(',')
      ->check(task_us_check)
      ->capture_default_str();
}

CLI::App* add_sched_model_command(CLI::App& app, SchedModelCommand& m) {
  CLI::App* cmd = app.add_subcommand(
      "sched-model", "predicted order score S(n) of the priority megakernel, CPU model (Kerbl 2012, Figs 4-5)");
  add_sn_axes(*cmd, m.n, m.task_us, cli::real({1e-3}, {1e7}, "µs"));
  cmd->add_option("--workers", m.workers, "concurrent workers (default: an H100's 132 SMs x 8 warps)")
      ->check(cli::integer(1, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--segment", m.segment, "entries per queue segment")->check(cli::integer(1, 1 << 24))->capture_default_str();
  cmd->add_option("--sort-us", m.sort_us,
                  "µs per controller pass: unsorted-unsorted,one-sorted,sorted-sorted (default: estimates, see "
                  "app/cli/cli.h)")
      ->delimiter(',')
      ->expected(3)
      ->check(cli::real({1e-3}, {1e6}, "µs"))
      ->capture_default_str();
  cmd->add_option("--buffer-multiplier", m.buffer_multiplier, "multiplier on the time buffers (Kerbl 5.4)")
      ->check(cli::real({kMinBufferMultiplier}, {kMaxBufferMultiplier}))
      ->capture_default_str();
  cmd->add_flag("!--no-time-management", m.time_management, "lock segments without checking the time buffers");
  cmd->add_option("--order", m.order, "initial queue order")
      ->check(cli::one_of({"ascending", "random", "descending"}))
      ->capture_default_str();
  cmd->add_option("--seed", m.seed, "seed of the random order")->check(cli::unsigned64())->capture_default_str();
  cmd->add_option("--out-prefix", m.out_prefix, "writes P.csv, P.json (metadata) and, with matplotlib, P.png/.pdf")->required();
  return cmd;
}

CLI::App* add_sched_bench_command(CLI::App& app, SchedBenchCommand& b) {
  CLI::App* cmd = app.add_subcommand(
      "sched-bench", "order score S(n) of the GPU megakernel with blocking tasks, controller vs FIFO (Kerbl 2012, Figs 4-5)");
  add_sn_axes(*cmd, b.n, b.task_us, cli::real({0.0, false}, {1e6}, "µs"));
  cmd->add_option("--threads", b.threads, "block sizes of the persistent kernel, comma separated")
      ->delimiter(',')
      ->check(cli::multiple_of(32, 32, 1024))
      ->capture_default_str();
  cmd->add_option("--controllers", b.controllers, "controller block counts P, comma separated")
      ->delimiter(',')
      ->check(cli::integer(1, 64))
      ->capture_default_str();
  cmd->add_option("--repeat", b.repeat, "runs per configuration (median score)")
      ->check(cli::integer(1, 1000))
      ->capture_default_str();
  cmd->add_flag("!--no-model", b.model, "skip the CPU model's prediction");
  cmd->add_flag("!--measure-durations", b.static_duration,
                "§5.3 measured task durations instead of the known static one (§5.4)");
  std::vector<ParamSpec> knobs;
  for (const ParamSpec& spec : megakernel_params().specs())
    if (!sched_bench_owned_knob(spec.name)) knobs.push_back(spec);
  add_param_options(*cmd, knobs, "megakernel knob",
                    [&b](const std::string& name, const std::string& text) { b.knobs[name] = text; });
  cmd->add_option("--order-log", b.order_log,
                  "writes F.csv: one row per executed task of every run (dequeue index, ticket, task, priority), "
                  "from which tools/order_score.py recomputes each run's S(n)")
      ->check(cli::non_empty("a CSV file name"));
  cmd->add_option("--out-prefix", b.out_prefix, "writes P.csv, P.json (metadata) and, with matplotlib, P.png/.pdf")->required();
  return cmd;
}

CLI::App* add_allocation_bound_command(CLI::App& app, Common& c) {
  CLI::App* cmd = app.add_subcommand(
      "allocation-bound", "fewest samples any priority needs for uniform's MSE on a scene (Neyman allocation bound)");
  add_session_options(*cmd, c);
  add_strategy_option(*cmd, c, "uniform on a GPU, cpu-parallel otherwise");
  return cmd;
}

bool viewer_cmd_frames_given(const CLI::App& app) { return app.count("--frames") > 0; }

int run(int argc, char** argv) {
  if (int rc = 0; run_stencil_bench_if_selected(argc, argv, rc)) return rc;  // its own options (cli_stencil_bench.h)
  CLI::App app{
      "megaview: an interactive progressive GPU path tracer and a laboratory for GPU work scheduling.\n"
      "Without a subcommand it opens the viewer.",
      "megaview"};
  app.require_subcommand(0, 1);
  Common viewer_c, render_c, reference_c, curve_c, bench_c;
  GuiOptions gui;
  RenderCommand render;
  ReferenceCommand reference;
  MseCurveCommand curve;
  BenchCommand bench;
  StrandBenchCommand strand_bench;
  add_viewer_options(app, viewer_c, gui);
  CLI::App* render_cmd = add_render_command(app, render_c, render);
  CLI::App* reference_cmd = add_reference_command(app, reference_c, reference);
  CLI::App* curve_cmd = add_mse_curve_command(app, curve_c, curve);
  CLI::App* bench_cmd = add_bench_command(app, bench_c, bench, strand_bench);
  GibbsBenchCommand gibbs_bench;
  add_gibbs_bench_options(*bench_cmd, gibbs_bench);
  SchedModelCommand sched_model;
  CLI::App* sched_model_cmd = add_sched_model_command(app, sched_model);
  SortBenchCommand sort_bench;
  CLI::App* sort_bench_cmd = add_sort_bench_command(app, sort_bench);
  Common bound_c;
  CLI::App* bound_cmd = add_allocation_bound_command(app, bound_c);
  SchedBenchCommand sched_bench;
  CLI::App* sched_bench_cmd = add_sched_bench_command(app, sched_bench);
  StrandsCommand strands;
  CLI::App* strands_cmd = add_strands_command(app, strands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    report(parse_error_text(e, app));
    return e.get_exit_code();
  }

  if (app.get_subcommands().empty()) {  // the viewer reports a missing display itself
    gui.session = finish(viewer_c);
    // A lattice workload's lattice size and seed are the viewer's --width, --height and --seed when given.
    if (const LatticeWorkloadEntry* lattice = find_lattice_workload(gui.strand_workload)) {
      const std::pair<const char*, std::string> shared[] = {{"width", std::to_string(gui.session.width)},
                                                            {"height", std::to_string(gui.session.height)},
                                                            {"seed", std::to_string(gui.session.task.seed)}};
      for (const auto& [name, text] : shared)
        if (app.count(std::string("--") + name) > 0 && find_param(lattice->knobs, name))
          gui.session.knobs[name] = text;
    }
    gui.strand_knobs = gui.session.knobs;  // strand mode reads the strand strategies' knobs of the same map
    // The viewer is for watching the priorities work: without --spp it keeps refining up to the
    // reference's sample count (about 20 s on an H100 at 800x600), not just the scene's experiment target.
    if (app.count("--spp") == 0) gui.session.task.target_spp = kViewerTargetSpp;
    check_strand_options(gui);
    check_workload_knob_values(app, gui);
    for (const SmokeAction& a : gui.smoke_actions)  // a step after the last frame would never run
      if (gui.frames > 0 && a.frame > gui.frames)
        throw InputError("", "--smoke-at",
                         fmt::format("step \"{}:{}\" is at frame {}, after the last of --frames {}", a.frame, a.action,
                                     a.frame, gui.frames));
    // A folder given is checked now; the default (captures/ here) only when a capture is made, so that the
    // viewer also opens where the working folder is read-only.
    if (app.count("--capture-dir") > 0) cli::check_output_folder(gui.capture_dir, "--capture-dir");
    if (!gui.window_shot.empty()) {  // checked before the window opens, never replaced after the frames
      if (gui.frames == 0)
        throw InputError("", "--window-shot",
                         viewer_cmd_frames_given(app) ? "needs --frames of at least 1 (the shot is taken after the last frame), got 0"
                                                      : "needs --frames N (the shot is taken after N frames)");
      sibling_path(gui.window_shot, "--window-shot", ".png", ".png");
      cli::check_output_file(gui.window_shot, "--window-shot");
    }
    return run_gui(gui);
  }
  // Options before the subcommand belong to the viewer; say so rather than ignore them.
  const std::string sub = app.get_subcommands().front()->get_name();
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0)
      throw InputError(
          "", opt->get_name(),
          "comes before `" + sub + "`, so it is the viewer's option; give `" + sub + "`'s options after its name");
  if (render_cmd->parsed()) {
    if (render_cmd->count("--spp") == 0 && render.time_ms <= 0.0)
      throw InputError("", "render", "give --spp N (samples per pixel) or --time-ms T (busy time), or both");
    render.session = finish(render_c);
    run_render(render);
  } else if (reference_cmd->parsed()) {
    reference.session = finish(reference_c);
    run_reference(reference);
  } else if (curve_cmd->parsed()) {
    curve.session = finish(curve_c);
    if (curve.compare.empty()) {
      curve.compare =
          !curve.session.force_cpu && gpu_available()
              ? std::vector<std::string>{"uniform", "sorted-waves:convergence", "sorted-waves:variance"}
              : std::vector<std::string>{"cpu-waves:none", "cpu-waves:convergence", "cpu-waves:variance"};
    }
    run_mse_curve(curve);
  } else if (bench_cmd->parsed()) {
    const bool gibbs = is_gibbs_bench(strand_bench.workloads);
    check_bench_mode(*bench_cmd, gibbs);
    if (gibbs) return run_gibbs_bench(gibbs_bench, *bench_cmd), 0;
    if (bench_cmd->count("--workload") > 0) {
      strand_bench.repeat = bench.repeat;
      strand_bench.csv = bench.csv;
      strand_bench.force_cpu = bench_c.session.force_cpu;
      strand_bench.knobs = bench_c.session.knobs;
      strand_bench.task_knobs = bench_c.session.knobs;  // --queue etc. reach the megakernel on strands too
      run_strand_bench(strand_bench);
      return 0;
    }
    // The path tracer's bench: --strategy names patch strategies (the strand bench checks its own).
    const CLI::Validator known = cli::one_of(patch_strategies().names());
    for (std::string name : strand_bench.strategies)
      if (const std::string why = known(name); !why.empty()) throw InputError("", "--strategy", why);
    bench.strategies = strand_bench.strategies;
    bench.session = finish(bench_c);
    run_bench(bench);
  } else if (sched_model_cmd->parsed()) {
    run_sched_model(sched_model);
  } else if (sort_bench_cmd->parsed()) {
    run_sort_bench(sort_bench);
  } else if (bound_cmd->parsed()) {
    AllocationBoundCommand b;
    b.session = finish(bound_c);
    run_allocation_bound(b);
  } else if (sched_bench_cmd->parsed()) {
    run_sched_bench(sched_bench);
  } else if (strands_cmd->parsed()) {
    check_strands_view_options(*strands_cmd, strands);
    run_strands(strands);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    report(e.what());
  } catch (const CudaError& e) {
    report(std::string("CUDA error: ") + e.what());
  } catch (const std::exception& e) {
    report(e.what());
  }
  return 1;
}
