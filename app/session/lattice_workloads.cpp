// The lattice workloads' registry: one line per workload.
#include "app/session/lattice_run.h"

namespace mv {

const std::vector<LatticeWorkloadEntry>& lattice_workloads() {
  static const std::vector<LatticeWorkloadEntry> entries = [] {
    std::vector<LatticeWorkloadEntry> v;
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
