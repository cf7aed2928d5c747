#include "app/session/strategy_catalogue.h"

#include <map>
#include <stdexcept>

#include "app/session/lattice_run.h"
#include "app/session/session.h"
#include "app/session/strand_workloads.h"
#include "base/errors.h"

namespace mv {

namespace {

/// Why a strand strategy has no form on the film, and why a film strategy has none on strands. Each reason
/// is the design's, not a gap in the code.
const std::map<std::string, std::string>& film_reasons() {
  static const std::string permuted =
      "the permutation spreads strands whose cost follows their index over the threads; the film's patches are "
      "started in priority or index order instead (uniform, cuda-batch)";
  static const std::string managed =
      "the film is device memory shared with OpenGL (CUDA-GL interop); managed memory would move it to the "
      "host at every displayed frame";
  static const std::map<std::string, std::string> r = {
      {"cuda", "on the film, Lehmann's BSP super-step (one update per unfinished item, one launch a pass) is "
               "`uniform`"},
      {"cuda-permute", permuted},
      {"cuda-batch-permute", permuted},
      {"cuda-unified-memory", managed},
      {"cuda-global-queue-unified-memory", managed},
  };
  return r;
}
const std::map<std::string, std::string>& strand_reasons() {
  static const std::string waves =
      "priority waves over single items; strands run under priorities as groups of 32 tasks: use sorted-waves "
      "or sequential-priority";
  static const std::map<std::string, std::string> r = {{"sequential-waves", waves}, {"cpu-waves", waves}};
  return r;
}

std::string reason(const std::map<std::string, std::string>& reasons, const std::string& name, const char* kind) {
  const auto it = reasons.find(name);
  if (it == reasons.end())
    throw std::logic_error("strategy \"" + name + "\" does not run " + kind + " and its catalogue entry says not why");
  return it->second;
}

std::vector<CatalogueEntry> build() {
  std::vector<CatalogueEntry> v;
  const auto& strands = find_strand_workload("mandelbrot").strategies;  // every strand workload has the same
  for (const StrategyInfo& i : strands) v.push_back({i, "", "", "", ""});
  for (const auto& e : patch_strategies().entries()) {
    CatalogueEntry* same = nullptr;
    for (CatalogueEntry& c : v)
      if (c.info.name == e.info.name) same = &c;
    if (!same) {
      v.push_back({e.info, "", reason(strand_reasons(), e.info.name, "strand programs"), "", ""});
      continue;
    }
    if (same->info.section != e.info.section || same->info.side != e.info.side)
      throw std::logic_error("strategy \"" + e.info.name + "\" names two algorithms: \"" + same->info.section +
                             "\" on strands, \"" + e.info.section + "\" on the film");
    same->info.progressive = true;
    same->info.priorities = same->info.priorities || e.info.priorities;
  }
  for (CatalogueEntry& c : v) {
    if (!c.info.progressive) c.film_why = reason(film_reasons(), c.info.name, "the film");
    c.lattice_why =
        "a lattice workload runs its own kernels: a super-step updates every site at once (a checkerboard sweep, "
        "a stencil iteration), so there are no work items of uneven cost for this strategy to order";
  }
  for (const LatticeWorkloadEntry& w : lattice_workloads())
    for (const StrategyInfo& i : w.strategies) {
      for (const CatalogueEntry& c : v)
        if (c.info.name == i.name)
          throw std::logic_error("lattice kernel \"" + i.name + "\" of " + w.name + " is named like another strategy");
      const std::string why = "a kernel of the " + w.name + " lattice workload: it updates whole lattices of sites, "
                              "not work items";
      CatalogueEntry e{i, why, why, "", w.name};
      v.push_back(std::move(e));
    }
  return v;
}

}  // namespace

const std::vector<CatalogueEntry>& strategy_catalogue() {
  static const std::vector<CatalogueEntry> catalogue = build();
  return catalogue;
}

const CatalogueEntry& find_catalogue_entry(std::string_view name) {
  std::string names;
  for (const CatalogueEntry& e : strategy_catalogue()) {
    if (e.info.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.info.name;
  }
  throw InputError("", "--strategy", "unknown strategy \"" + std::string(name) + "\" (allowed: " + names + ")");
}

}  // namespace mv
