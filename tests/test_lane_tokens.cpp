// Concurrent executions of one patch (MegakernelSettings::patch_lanes): the token rules of
// sched/megakernel/lane_tokens.h and the batch reservation of render/pathtracer/patch_task.h, on the CPU.
// A random interleaving of warps that follow the rules, as the GPU workers do, keeps every task's primary
// token until it is finished, ends it once, never holds more than D tokens, and reserves each sample once.
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
  EXPECT_EQ(lane_token_release(false, false), TokenRelease::Requeue);
  EXPECT_EQ(lane_token_release(false, true), TokenRelease::Finish);
  EXPECT_EQ(lane_token_release(true, false), TokenRelease::Drop);
  EXPECT_EQ(lane_token_release(true, true), TokenRelease::Drop);
}

TEST(LaneTokens, SecondaryEntriesCarryTheirTask) {
  for (uint32_t t : {0u, 1u, 12345u, kSecondaryEntry - 1u}) {
    EXPECT_FALSE(entry_is_secondary(t)) << t;
    EXPECT_EQ(entry_task(t), t);
    EXPECT_TRUE(entry_is_secondary(secondary_entry(t))) << t;
    EXPECT_EQ(entry_task(secondary_entry(t)), t);
  }
}

// One task, W warps, random interleavings of claim / batch (+ spawn) / release as worker_warp_buckets does
// (entries in a FIFO; a secondary entry may also wait for ever, as one stranded in a ring the window moved
// past): the primary token is always queued or held until the task is finished, exactly one release ends
// the task, at most D tokens exist, and every sample index is reserved once.
TEST(LaneTokens, RandomInterleavingsKeepThePrimaryAndEndTheTaskOnce) {
  for (uint32_t lanes : {1u, 2u, 4u, 8u}) {
    for (uint32_t seed = 0; seed < 50; ++seed) {
      std::mt19937 rng(seed * 131u + lanes);
      const PatchTaskParams p = params(37 + seed % 7, 1 + seed % 3);
      const uint32_t warps = 6;
      std::vector<int> queue = {0};      // entries: 0 primary, 1 secondary
      std::vector<int> held(warps, -1);  // -1 idle, else the token held
      uint32_t extra = 0, spp = 0, finishes = 0, stranded = 0;
      std::vector<int> reserved(p.target_spp, 0);
      for (int step = 0; step < 200000; ++step) {
        const uint32_t w = rng() % warps;
        if (held[w] < 0) {
          if (queue.empty()) {
            bool any = false;
            for (int h : held) any = any || h >= 0;
            if (!any) break;
            continue;
          }
          // A secondary entry at the front may be stranded (never claimed): it keeps its count.
          if (queue.front() == 1 && rng() % 8 == 0) {
            queue.erase(queue.begin());
            ++stranded;
            continue;
          }
          held[w] = queue.front();
          queue.erase(queue.begin());
        } else {
          const uint32_t k = shared_batch_samples(spp, 0, p);
          for (uint32_t j = 0; j < k; ++j) ++reserved[spp + j];
          spp += k;
          const bool open = k != 0 && !patch_finished(spp, 0, p);
          if (open && rng() % 2 == 0 && lane_token_may_spawn(extra, lanes)) {  // leads: spawn
            ++extra;
            queue.push_back(1);
          }
          if (open && rng() % 3 == 0) continue;  // runs again
          switch (lane_token_release(held[w] == 1, patch_finished(spp, 0, p))) {
            case TokenRelease::Drop: --extra; break;
            case TokenRelease::Finish: ++finishes; break;
            case TokenRelease::Requeue: queue.push_back(0); break;
          }
          held[w] = -1;
        }
        int primaries = 0, secondaries = static_cast<int>(stranded), holders = 0;
        for (int e : queue) (e == 0 ? primaries : secondaries) += 1;
        for (int h : held) {
          if (h == 0) ++primaries;
          if (h == 1) ++secondaries;
          if (h >= 0) ++holders;
        }
        ASSERT_EQ(primaries, finishes == 0 ? 1 : 0) << "lanes " << lanes << " seed " << seed;
        ASSERT_EQ(static_cast<uint32_t>(secondaries), extra);
        ASSERT_LE(static_cast<uint32_t>(primaries + secondaries), lanes);
        if (lanes == 1) ASSERT_LE(holders, 1);
      }
      EXPECT_EQ(finishes, 1u) << "lanes " << lanes << " seed " << seed;
      EXPECT_EQ(extra, stranded);
      EXPECT_EQ(spp, p.target_spp);
      for (uint32_t i = 0; i < p.target_spp; ++i) ASSERT_EQ(reserved[i], 1) << "sample " << i;
    }
  }
}

}  // namespace
}  // namespace mv
