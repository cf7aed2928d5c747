// The program's one list of strategies (app/session/strategy_catalogue.h): every name once, one algorithm
// per name across the film and the strand programs, and a reason wherever a strategy cannot run a kind of
// workload (the GUI's picker shows it on the greyed-out entry).
#include <gtest/gtest.h>

#include <set>

#include "app/session/lattice_run.h"
#include "app/session/session.h"
#include "app/session/strand_workloads.h"
#include "app/session/strategy_catalogue.h"

namespace mv {
namespace {

TEST(StrategyCatalogue, EveryNameOnceAndEveryRegisteredStrategyIn) {
  const std::vector<CatalogueEntry>& c = strategy_catalogue();
  std::set<std::string> names;
  for (const CatalogueEntry& e : c) EXPECT_TRUE(names.insert(e.info.name).second) << e.info.name << " twice";
  for (const auto& e : patch_strategies().entries()) {
    ASSERT_TRUE(names.count(e.info.name)) << e.info.name;
    EXPECT_TRUE(find_catalogue_entry(e.info.name).runs(WorkloadKind::Film)) << e.info.name;
  }
  for (const StrandWorkloadEntry& w : strand_workloads())
    for (const StrategyInfo& i : w.strategies) {
      ASSERT_TRUE(names.count(i.name)) << w.name << ": " << i.name;
      EXPECT_TRUE(find_catalogue_entry(i.name).runs(WorkloadKind::Strands)) << i.name;
    }
  size_t lattice_kernels = 0;
  for (const LatticeWorkloadEntry& w : lattice_workloads()) lattice_kernels += w.strategies.size();
  EXPECT_EQ(c.size(), 15u + lattice_kernels)
      << "Lehmann's nine, Kerbl's four on both kinds, the film's two CPU waves and the lattice kernels";
}

TEST(StrategyCatalogue, ANameOnBothKindsIsOneAlgorithmAndAMissingKindHasAReason) {
  int both = 0;
  for (const CatalogueEntry& e : strategy_catalogue()) {
    for (WorkloadKind k : {WorkloadKind::Film, WorkloadKind::Strands, WorkloadKind::Lattice})
      EXPECT_NE(e.runs(k), !e.why_not(k).empty()) << e.info.name << ": a reason exactly where it does not run";
    if (e.runs(WorkloadKind::Film) && e.runs(WorkloadKind::Strands)) {
      ++both;
      const StrategyInfo& film = patch_strategies().find(e.info.name).info;
      const StrategyInfo& strands = find_strand_workload("lic2d").strategy(e.info.name);
      EXPECT_EQ(film.section, strands.section) << e.info.name;
      EXPECT_EQ(film.side, strands.side) << e.info.name;
    }
  }
  // sequential, cpu-parallel, cuda-batch, cuda-global-queue (Lehmann) and sequential-priority, uniform,
  // sorted-waves, megakernel (Kerbl) run both kinds.
  EXPECT_EQ(both, 8);
  EXPECT_NE(find_catalogue_entry("cuda").why_not(WorkloadKind::Film).find("uniform"), std::string::npos);
  EXPECT_NE(find_catalogue_entry("cpu-waves").why_not(WorkloadKind::Strands).find("sorted-waves"), std::string::npos);
  EXPECT_TRUE(find_catalogue_entry("megakernel").info.priorities);
  EXPECT_FALSE(find_catalogue_entry("cuda-global-queue").info.priorities);
  EXPECT_THROW(find_catalogue_entry("warp-drive"), InputError);
}

// The lattice workloads' kernels are strategies too (app/session/lattice_run.h): each is in the catalogue
// under a name of its own, runs its own lattice workload only, and says why it runs nothing else; the
// film's and the strands' strategies say why they run no lattice workload.
TEST(StrategyCatalogue, LatticeKernelsAreEntriesOfTheirOwnWorkload) {
  size_t kernels = 0;
  for (const LatticeWorkloadEntry& w : lattice_workloads()) {
    const auto run = w.make({{"width", "16"}, {"height", "16"}, {"size", "64"}}, false);  // the CPU reference
    ASSERT_FALSE(w.strategies.empty()) << w.name;
    for (const std::string& n : run->strategies()) {
      const CatalogueEntry& e = find_catalogue_entry(n);
      EXPECT_EQ(e.lattice_workload, w.name) << n;
    }
    for (const StrategyInfo& i : w.strategies) {
      const CatalogueEntry& e = find_catalogue_entry(i.name);
      ++kernels;
      EXPECT_TRUE(e.runs(WorkloadKind::Lattice)) << i.name;
      EXPECT_FALSE(e.runs(WorkloadKind::Film)) << i.name;
      EXPECT_FALSE(e.runs(WorkloadKind::Strands)) << i.name;
      EXPECT_EQ(e.why_not(WorkloadKind::Lattice, w.name), "") << i.name;
      EXPECT_NE(e.why_not(WorkloadKind::Film).find("a kernel of the " + w.name), std::string::npos) << i.name;
      for (const LatticeWorkloadEntry& other : lattice_workloads())
        if (other.name != w.name)
          EXPECT_EQ(e.why_not(WorkloadKind::Lattice, other.name),
                    "a kernel of the " + w.name + " workload, not of " + other.name);
    }
  }
  EXPECT_GE(kernels, 7u);  // gibbs' six and the stencil's deep-halo
  size_t others = 0;
  std::set<std::string> names;
  for (const CatalogueEntry& e : strategy_catalogue()) {
    EXPECT_TRUE(names.insert(e.info.name).second) << e.info.name << " twice";
    if (!e.lattice_workload.empty()) continue;
    ++others;
    EXPECT_FALSE(e.runs(WorkloadKind::Lattice)) << e.info.name;
    EXPECT_NE(e.why_not(WorkloadKind::Lattice, "gibbs").find("its own kernels"), std::string::npos) << e.info.name;
  }
  EXPECT_EQ(others + kernels, strategy_catalogue().size());
}

}  // namespace
}  // namespace mv
