// Concurrent executions of one patch (MegakernelSettings::patch_lanes): the token rules of
// sched/megakernel/lane_tokens.h and the batch reservation of render/pathtracer/patch_task.h, on the CPU.
// A random interleaving of warps that follow the rules, as the GPU workers do, keeps every task alive until
// it is finished, ends it once, never runs it on more than D warps, and reserves each sample index once.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "render/pathtracer/patch_task.h"
#include "sched/megakernel/lane_tokens.h"

namespace mv {
namespace {

PatchTaskParams params(uint32_t target, uint32_t paths_per_pixel, PriorityFunction f = PriorityFunction::Neyman) {
  PatchTaskParams p;
  p.target_spp = target;
  p.paths_per_pixel = paths_per_pixel;
  p.priority = f;
  return p;
}

TEST(LaneTokens, BatchSamplesStopExactlyAtTheTarget) {
  const PatchTaskParams p = params(11, 2);
  EXPECT_EQ(shared_batch_samples(0, 0, p), 2u);
  EXPECT_EQ(shared_batch_samples(9, 0, p), 2u);
  EXPECT_EQ(shared_batch_samples(10, 0, p), 1u);
  EXPECT_EQ(shared_batch_samples(11, 0, p), 0u);
  EXPECT_EQ(shared_batch_samples(12, 0, p), 0u);
  // A stopped patch: finished under `adaptive` only.
  EXPECT_EQ(shared_batch_samples(4, kPatchStopped, p), 2u);
  EXPECT_EQ(shared_batch_samples(4, kPatchStopped, params(11, 2, PriorityFunction::Adaptive)), 0u);
  EXPECT_EQ(shared_batch_samples(0, 0, params(512, 64)), 64u);
}

TEST(LaneTokens, SpawnAndReleaseRules) {
  for (uint32_t e : {0u, 1u, 5u}) EXPECT_FALSE(lane_token_may_spawn(e, 1));
  EXPECT_TRUE(lane_token_may_spawn(0, 2));
  EXPECT_FALSE(lane_token_may_spawn(1, 2));
  EXPECT_TRUE(lane_token_may_spawn(2, 4));
  EXPECT_FALSE(lane_token_may_spawn(3, 4));
  EXPECT_FALSE(lane_token_may_spawn(kMaxPatchLanes - 1, kMaxPatchLanes));
  EXPECT_EQ(lane_token_release(0, false), TokenRelease::Requeue);
  EXPECT_EQ(lane_token_release(0, true), TokenRelease::Finish);
  EXPECT_EQ(lane_token_release(1, false), TokenRelease::Drop);
  EXPECT_EQ(lane_token_release(3, true), TokenRelease::Drop);
}

// One task, W warps, random interleavings of claim / batch (+ spawn) / release as worker_warp_buckets does.
TEST(LaneTokens, RandomInterleavingsKeepTheTaskAliveAndEndItOnce) {
  for (uint32_t lanes : {1u, 2u, 4u, 8u}) {
    for (uint32_t seed = 0; seed < 50; ++seed) {
      std::mt19937 rng(seed * 131u + lanes);
      const PatchTaskParams p = params(37 + seed % 7, 1 + seed % 3);
      const uint32_t warps = 6;
      uint32_t queued = 1, extra = 0, spp = 0, holders = 0, finishes = 0, max_holders = 0;
      std::vector<int> holding(warps, 0);
      std::vector<int> reserved(p.target_spp, 0);
      bool live = true;
      for (int step = 0; step < 100000; ++step) {
        const uint32_t w = rng() % warps;
        if (!holding[w]) {
          if (queued == 0) {
            bool any = false;
            for (int h : holding) any = any || h;
            if (!any) break;  // nothing left to run
            continue;
          }
          --queued;  // claim: the entry's token passes to the warp
          holding[w] = 1;
          ++holders;
        } else {
          const uint32_t k = shared_batch_samples(spp, 0, p);
          for (uint32_t j = 0; j < k; ++j) ++reserved[spp + j];
          spp += k;
          const bool open = k != 0 && !patch_finished(spp, 0, p);
          const bool leads = open && rng() % 2 == 0;
          if (leads && lane_token_may_spawn(extra, lanes)) {
            ++extra;
            ++queued;
          }
          if (open && rng() % 3 == 0) continue;  // runs again
          switch (lane_token_release(extra, patch_finished(spp, 0, p))) {
            case TokenRelease::Drop: --extra; break;
            case TokenRelease::Finish:
              ++finishes;
              live = false;
              break;
            case TokenRelease::Requeue: ++queued; break;
          }
          holding[w] = 0;
          --holders;
        }
        max_holders = std::max(max_holders, holders);
        if (live) ASSERT_EQ(queued + holders, extra + 1) << "lanes " << lanes << " seed " << seed;
        ASSERT_LE(queued + holders, lanes);
      }
      EXPECT_EQ(finishes, 1u) << "lanes " << lanes << " seed " << seed;
      EXPECT_EQ(queued + holders + extra, 0u);
      EXPECT_EQ(spp, p.target_spp);
      for (uint32_t i = 0; i < p.target_spp; ++i) ASSERT_EQ(reserved[i], 1) << "sample " << i;
      if (lanes == 1) EXPECT_EQ(max_holders, 1u);
    }
  }
}

}  // namespace
}  // namespace mv
