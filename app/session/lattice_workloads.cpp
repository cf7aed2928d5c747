// The lattice workloads' registry: one line per workload.
#include "app/session/lattice_run.h"
#include "app/session/stencil_run.h"

namespace mv {

const std::vector<LatticeWorkloadEntry>& lattice_workloads() {
  static const std::vector<LatticeWorkloadEntry> entries = [] {
    std::vector<LatticeWorkloadEntry> v;
    v.push_back({"stencil", "deep-halo Jacobi/Laplace stencil over P partitions on G GPUs (Valen 2023)", [](const ParamValues& k, bool gpu) { return std::unique_ptr<LatticeRun>(new StencilRun(k, gpu)); }});
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
