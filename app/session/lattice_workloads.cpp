// The lattice workloads' registry: one line per workload.
#include "app/session/lattice_run.h"

#include "app/session/gibbs_run.h"

namespace mv {

const std::vector<LatticeWorkloadEntry>& lattice_workloads() {
  static const std::vector<LatticeWorkloadEntry> entries = [] {
    std::vector<LatticeWorkloadEntry> v;
    v.push_back({"gibbs", "the Poisson-Ising Gibbs sampler (poisson-ising-gibbs-cupy)",
                 [](const ParamValues& k, bool gpu) -> std::unique_ptr<LatticeRun> { return std::make_unique<GibbsRun>(k, gpu); }});
    return v;
  }();
  return entries;
}

const LatticeWorkloadEntry* find_lattice_workload(const std::string& name) {
  for (const LatticeWorkloadEntry& e : lattice_workloads())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace mv
