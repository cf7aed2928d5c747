// The headless commands behind `megaview render | reference | mse-curve | bench`; app/main.cpp parses
// the command line into these structs. Each command prints its results on stdout and progress on
// stderr, writes its files without ever replacing an existing one (app/core/output_file.h), and reports
// bad input by throwing InputError (one line naming the file, field or range) for main to print.
//
// Times are the Session's busy time: strategy steps only (CUDA events around the kernels on the GPU,
// wall clock on the CPU), excluding scene loading, film allocation, MSE evaluation and display.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/session.h"

namespace mv {

/// `megaview render`: renders one image, writes F.png (tone-mapped, default display settings) and F.exr
/// (linear mean radiance) beside it, prints a summary and, with a reference, `MSE <value>`.
struct RenderCommand {
  SessionOptions session;  ///< task.target_spp 0: the scene's target
  double time_ms = 0.0;    ///< stop after this much busy time; 0: run until every patch reaches the target
  std::string out;         ///< F.png
};
void run_render(const RenderCommand& c);

/// `megaview reference`: renders the ground truth to `session.task.target_spp` with a progress bar,
/// writes R.exr and the sidecar R.json (how it was made).
/// The default seed of `megaview reference`: renders use seed 0 by default, and a reference sharing their
/// random streams would share their first samples too, making the MSE look smaller than it is.
inline constexpr uint32_t kReferenceSeed = 1;

struct ReferenceCommand {
  SessionOptions session;  ///< strategy empty: the fastest available (uniform on a GPU, else cpu-parallel)
  std::string out;         ///< R.exr
  bool force = false;      ///< replace an existing R.exr / R.json
};
void run_reference(const ReferenceCommand& c);

/// `megaview mse-curve`: MSE against a reference over busy time for several strategy:priority series
/// (Kerbl 2012, Fig 9). Writes P.csv, P-time.png and P-samples.png and prints a summary table.
struct MseCurveCommand {
  SessionOptions session;            ///< strategy unused; task.priority: the default of non-uniform entries
  std::vector<std::string> compare;  ///< entries "strategy[:priority]"
  double duration_ms = 2000.0;       ///< busy time per series
  double interval_ms = 50.0;         ///< busy time between records
  std::string out_prefix;            ///< P
};
void run_mse_curve(const MseCurveCommand& c);

/// `megaview bench`: `repeat` full renders per strategy (fresh Session each, after one untimed warm-up),
/// printed as a table of medians; optionally every run as CSV.
struct BenchCommand {
  SessionOptions session;               ///< strategy unused
  std::vector<std::string> strategies;  ///< empty: the GPU strategies with a GPU in use, else the CPU ones
  int repeat = 5;
  std::string csv;  ///< empty: no CSV
};
void run_bench(const BenchCommand& c);

// ---- helpers shared by the commands ----

/// `path` with its extension `ext` (e.g. ".png") replaced by `new_ext`; InputError naming `field` if
/// `path` does not end in `ext`.
std::string sibling_path(const std::string& path, const std::string& field, const std::string& ext,
                         const std::string& new_ext);
/// The display settings a headless image is written with: the defaults, heat-map scale at the target.
ToneMapSettings default_display(const Session& s);
/// The strategies that run on one side (GPU: Side::Device), in registry order.
std::vector<std::string> strategies_on(Side side);
/// Millions of samples (paths) per second of busy time.
double msamples_per_second(uint64_t paths, double busy_ms);

}  // namespace mv
