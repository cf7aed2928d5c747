// Every strategy of the program in one list: each name once, with its info record (sched/strategy_info.h)
// and the kinds of workload it runs. The path tracer's film (patch tasks, progressive: Strategy<W>) and the
// strand programs (run to completion: StrandStrategy<W>) keep a registry each, because their interfaces
// differ in what a call means (a budget of work on a persistent film, against a whole program); a name
// registered in both is one algorithm (the same section and side, checked here). A lattice workload's
// kernels (app/session/lattice_run.h) are strategies of that workload only. Where a strategy cannot run a
// kind of workload its entry says why. The GUI's one strategy picker lists this catalogue in every mode
// and greys out, with that reason, what the workload on screen cannot run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/strategy_info.h"

namespace mv {

/// The kinds of workload a strategy may run.
enum class WorkloadKind { Film, Strands, Lattice };

struct CatalogueEntry {
  /// The merged record: progressive if the film's registry has it, run_to_completion if the strands' has.
  StrategyInfo info;
  /// Why it does not run the film / strand programs / lattice workloads; empty where it does.
  std::string film_why, strands_why, lattice_why;
  /// The lattice workload whose kernel this is ("gibbs", "stencil"); empty for the film's and strands'.
  std::string lattice_workload;
  bool runs(WorkloadKind k) const {
    return k == WorkloadKind::Film ? info.progressive
           : k == WorkloadKind::Strands ? info.run_to_completion
                                        : !lattice_workload.empty();
  }
  /// Why it does not run `k` (on lattice workload `lattice`, for Lattice); empty where it does.
  std::string why_not(WorkloadKind k, const std::string& lattice = "") const {
    if (k == WorkloadKind::Film) return film_why;
    if (k == WorkloadKind::Strands) return strands_why;
    if (!lattice_why.empty() || lattice.empty() || lattice == lattice_workload) return lattice_why;
    return "a kernel of the " + lattice_workload + " workload, not of " + lattice;
  }
};

/// The catalogue: the strand registry's order (Lehmann 2023's nine, then Kerbl 2012's four on groups of
/// strands), then the strategies only the film has, then the lattice workloads' kernels. Throws
/// std::logic_error at first use if one name stands for two algorithms (different section or side in the
/// two registries, or a lattice kernel named like another strategy) or a strategy that misses a kind has
/// no reason: a programming error, which the tests catch.
const std::vector<CatalogueEntry>& strategy_catalogue();

/// The entry called `name`; throws InputError("", "--strategy", …) listing the names if there is none.
const CatalogueEntry& find_catalogue_entry(std::string_view name);

}  // namespace mv
