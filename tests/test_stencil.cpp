// The deep-halo stencil on the CPU: the plan's geometry, and bitwise equality of every partitioned run
// (depth × exchange × overlap × partitions) with the single-partition reference (Valen 2023, §2.7–§3.4).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/errors.h"
#include "render/lattice/jacobi.h"
#include "stencil_cases.h"
#include "sched/lattice/halo_cpu.h"
#include "sched/lattice/halo_plan.h"

namespace mv {
namespace {

TEST(StencilRule, JacobiIsTheMeanOfTheFourNeighbours) {
  EXPECT_EQ(JacobiRule{}(9.f, 1.f, 2.f, 3.f, 4.f), 2.5f);
  EXPECT_EQ(stencil_initial(0, 0, 64), 0.f);
  EXPECT_EQ(stencil_initial(16, 20, 64), 1.f);  // the centre of the first hot spot (4/16, 5/16)
}

TEST(StencilRule, TheFieldRelaxesTowardsItsMean) {
  const int n = 48;
  std::vector<float> a = stencil_initial_field(n), b;
  double mean0 = 0, max0 = 0;
  for (float v : a) mean0 += v, max0 = std::max<double>(max0, v);
  for (int i = 0; i < 200; ++i) {
    halo_reference_step(a, b, n, JacobiRule{});
    a.swap(b);
  }
  double mean = 0, max = 0;
  for (float v : a) mean += v, max = std::max<double>(max, v);
  EXPECT_NEAR(mean / a.size(), mean0 / a.size(), 1e-4);  // periodic: heat is conserved
  EXPECT_LT(max, 0.5 * max0);                             // and spreads out
}

TEST(StencilPlan, TilesCoverTheGridOnceAndFollowTable32) {
  int px, py;
  halo_grid_shape(2, px, py);
  EXPECT_EQ(px * 10 + py, 12);
  halo_grid_shape(4, px, py);
  EXPECT_EQ(px * 10 + py, 22);
  halo_grid_shape(12, px, py);
  EXPECT_EQ(px * 10 + py, 34);
  HaloConfig c;
  c.n = 37;
  c.partitions = 6;
  c.gpus = 2;
  c.depth = 3;
  const HaloPlan p = make_halo_plan(c);
  std::vector<int> hits(size_t(c.n) * c.n, 0);
  for (const HaloTile& t : p.tiles)
    for (int y = 0; y < t.h; ++y)
      for (int x = 0; x < t.w; ++x) ++hits[size_t(t.gy0 + y) * c.n + size_t(t.gx0 + x)];
  for (int h : hits) ASSERT_EQ(h, 1);
  EXPECT_EQ(p.tiles.front().gpu, 0);
  EXPECT_EQ(p.tiles.back().gpu, 1);
  EXPECT_EQ(p.phases.size(), 2u);  // sync: west/east, then north/south
}

TEST(StencilPlan, BadSettingsAreRefusedNamingTheOption) {
  auto refused = [](HaloConfig c, const std::string& option) {
    try {
      make_halo_plan(c);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  HaloConfig c;
  c.n = 64;
  c.depth = 0;
  EXPECT_TRUE(refused(c, "--depth"));
  c.depth = 65;
  EXPECT_TRUE(refused(c, "--depth"));
  c.depth = 40;  // larger than a 32-wide partition
  c.partitions = 2;
  EXPECT_TRUE(refused(c, "smallest partition side"));
  c.depth = 1;
  c.gpus = 3;
  EXPECT_TRUE(refused(c, "--gpus"));
  c.gpus = 1;
  c.partitions = 0;
  EXPECT_TRUE(refused(c, "--partitions"));
  c.partitions = 1;
  EXPECT_FALSE(refused(c, ""));
}

// Every depth × exchange × overlap on P = 1, 2, 4, 6 partitions, after K iterations that are not a
// multiple of the depth: bitwise the single-partition reference.
TEST(StencilCpu, PartitionedRunsEqualTheReferenceBitwise) {
  const int n = 70, k = 23;
  const std::vector<float> ref = stencil_reference(n, k);
  for (int partitions : {1, 2, 4, 6})
    for (int depth : {1, 2, 3, 8, 11})
      for (HaloExchange ex : {HaloExchange::Sync, HaloExchange::Async})
        for (bool overlap : {false, true}) {
          HaloConfig c;
          c.n = n;
          c.partitions = partitions;
          c.depth = depth;
          c.exchange = ex;
          c.overlap = overlap;
          HaloCpu<JacobiRule> run(make_halo_plan(c));
          run.set_field(stencil_initial_field(n));
          run.step(k);
          std::vector<float> got;
          run.get_field(got);
          EXPECT_TRUE(same_bits(got, ref)) << "P=" << partitions << " depth=" << depth
                                               << " exchange=" << halo_exchange_name(ex) << " overlap=" << overlap;
          EXPECT_EQ(run.times().iterations, uint64_t(k));
          EXPECT_EQ(run.times().exchanges, uint64_t((k + depth - 1) / depth));
        }
}

// Depth 64 on the smallest partitions it allows (64 sites a side).
TEST(StencilCpu, DepthSixtyFourOnPartitionsOfItsOwnSize) {
  const int n = 128, k = 70;
  const std::vector<float> ref = stencil_reference(n, k);
  HaloConfig c;
  c.n = n;
  c.partitions = 4;
  c.depth = 64;
  c.overlap = true;
  HaloCpu<JacobiRule> run(make_halo_plan(c));
  run.set_field(stencil_initial_field(n));
  run.step(k);
  std::vector<float> got;
  run.get_field(got);
  EXPECT_TRUE(same_bits(got, ref));
}

}  // namespace
}  // namespace mv
