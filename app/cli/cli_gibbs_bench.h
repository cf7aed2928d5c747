// `megaview bench --workload gibbs`: times the Poisson-Ising Gibbs sampler's kernels (app/session/gibbs_run.h)
// with CUDA events and redoes the source document's block-shape benchmark ("Poisson-Icing: Gibbs sampling
// with a GPU using CuPy", ../shared/papers/poisson-ising-gibbs-cupy.txt, "Benchmarks" and Figs 15-19).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/params.h"

namespace mv {

struct GibbsBenchCommand {
  std::vector<std::string> strategies;  ///< --strategy (default: every GPU strategy, or gibbs-cpu)
  std::string block;                    ///< --block WxH (default: the knob's, GibbsSettings)
  std::string padding;                  ///< --padding on|off ("" = the knob's default, off)
  uint64_t sweeps = 0;                  ///< --sweeps N timed per repeat (0: 20,000, or 200 with --sweep-blocks)
  int repeat = 5;                       ///< --repeat (with --sweep-blocks: 32 unless given)
  bool repeat_given = false;
  std::string csv;                      ///< --csv F
  bool sweep_blocks = false;            ///< --sweep-blocks: every block shape of the document's Fig 19
  std::string out_prefix;               ///< --out-prefix P for --sweep-blocks (P.csv, P.json, figures)
  bool force_cpu = false;
  ParamValues knobs;                    ///< gibbs knobs given as options (--gamma, --lambda, …)
};

/// Registers the gibbs bench's own options on `bench` (those it shares with other benches — --workload,
/// --strategy, --repeat, --csv, --out-prefix, --width, --height, --seed — are read from them).
void add_gibbs_bench_options(CLI::App& bench, GibbsBenchCommand& g);
/// Whether --workload names gibbs (the gibbs bench takes it, not the strand bench).
bool is_gibbs_bench(const std::vector<std::string>& workloads);
/// Runs it. `bench` is the parsed subcommand: the options it shares with the other benches (--strategy,
/// --repeat, --csv, --out-prefix, --cpu, --width, --height, --seed) are read from it. Throws InputError for
/// bad options.
void run_gibbs_bench(GibbsBenchCommand& g, const CLI::App& bench);

}  // namespace mv
