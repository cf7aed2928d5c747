// The one info record of a strategy, whatever it runs: the film's patch tasks (Strategy<W>, sched/strategy.h)
// or a strand program (StrandStrategy<W>, sched/strand_strategy.h). The GUI's strategy picker, `--help`, the
// bench tables and the capture sidecars read it; app/session/strategy_catalogue.h merges the registries'
// records into one list in which a name means one algorithm everywhere.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/common.h"

namespace mv {

struct StrategyInfo {
  std::string name;         ///< registry key, unique across the program ("sorted-waves", "cuda-global-queue")
  std::string description;  ///< one line for the GUI tooltip and `--help`
  std::string section;      ///< the paper and section that describe it, e.g. "Lehmann 2023 §3.4"
  Side side = Side::Device; ///< where its work runs (Side::Device: refused without a usable GPU)
  bool uses_grid = false;   ///< reads the grid configuration n, b (Lehmann 2023's GPU strand strategies)
  /// The strand knobs (strand_params(), sched/strand_strategy.h) it reads; its own knobs are its params().
  std::vector<std::string> knobs;
  /// Reads the work items' priorities: the priority function changes what it does (Kerbl 2012 §6.3).
  bool priorities = false;
  // ---- capabilities: set by the registry that holds it (a name in both registries has both) ----
  /// Runs the progressive film a budget at a time (Strategy<W>::step): live switching keeps the picture.
  bool progressive = false;
  /// Runs a strand program from init to the last stable strand in one call (StrandStrategy<W>::run).
  bool run_to_completion = false;

  bool needs_gpu() const { return side == Side::Device; }
  bool reads(std::string_view knob) const {
    for (const std::string& k : knobs)
      if (k == knob) return true;
    return false;
  }
};

}  // namespace mv
