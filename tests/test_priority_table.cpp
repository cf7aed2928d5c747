// The live priority table of the megakernel's queue designs `buckets` and `quanta`
// (sched/megakernel/priority_table.h): order-preserving bins, mid-ranks, rings and quanta, the credit rule; and
// tools/order_score.py, which recomputes S(n) from a sched-bench order log independently of megaview.
#include <gtest/gtest.h>

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "render/pathtracer/priority.h"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/score.h"
#include "test_support.h"

namespace mv {
namespace {

TEST(PriorityTable, BinsPreserveOrderOverTheWholeFloatRange) {
  const std::vector<float> ascending = {kFinishedPriority, -1e30f, -512.f, -511.f, -2.f, -1e-9f, -0.f, 0.f,
                                        1e-30f, 1e-9f, 0.5f, 1.f, 1.07f, 2.f, 1e20f, kUnsampledPriority};
  for (size_t i = 1; i < ascending.size(); ++i) {
    EXPECT_LT(priority_key(ascending[i - 1]), priority_key(ascending[i])) << ascending[i - 1] << " vs " << ascending[i];
    EXPECT_LE(priority_bin(ascending[i - 1]), priority_bin(ascending[i]));
  }
  for (float p : ascending) EXPECT_LT(priority_bin(p), kPriorityBins);
  // A bin spans at most a factor 1 + 1/16: 1.0 and 1.07 are apart, 1.0 and 1.05 share one.
  EXPECT_NE(priority_bin(1.f), priority_bin(1.07f));
  EXPECT_EQ(priority_bin(1.f), priority_bin(1.05f));
  // The spp of `none` (−spp) are told apart up to 16 spp exactly.
  for (int spp = 1; spp < 16; ++spp) EXPECT_LT(priority_bin(-static_cast<float>(spp + 1)), priority_bin(-static_cast<float>(spp)));
}

TEST(PriorityTable, MidRankAndQuantumOfAKnownHistogram) {
  // 100 live tasks: 10 in the top bin, 40 in the middle one, 50 in the bottom one.
  EXPECT_FLOAT_EQ(priority_mid_rank(0, 10, 100), 0.05f);
  EXPECT_FLOAT_EQ(priority_mid_rank(10, 40, 100), 0.30f);
  EXPECT_FLOAT_EQ(priority_mid_rank(50, 50, 100), 0.75f);
  EXPECT_EQ(priority_mid_rank(0, 0, 0), 0.f);
  EXPECT_LT(priority_mid_rank(100, 0, 100), 1.f) << "the rank stays below 1";
  EXPECT_NEAR(priority_quantum(0.f, 4), 4.f, 1e-5f);
  EXPECT_NEAR(priority_quantum(0.5f, 4), 1.f, 1e-6f);
  EXPECT_NEAR(priority_quantum(1.f, 4), 0.25f, 1e-6f);
  EXPECT_NEAR(priority_quantum(0.25f, 64), 8.f, 1e-4f);
}

TEST(PriorityTable, BandsAndTheCalendarWindow) {
  EXPECT_LE(priority_band(kUnsampledPriority), priority_band(1e30f));
  EXPECT_LT(priority_band(2.f), priority_band(1.f)) << "larger priorities have more urgent (smaller) bands";
  EXPECT_EQ(priority_band(1.f), priority_band(1.2f)) << "a band spans a quarter of an octave's mantissa";
  EXPECT_NE(priority_band(1.f), priority_band(1.25f));
  EXPECT_EQ(priority_band(1.f) - priority_band(2.f), 4u) << "four bands an octave";
  EXPECT_LT(priority_band(-1.f), priority_band(-2.f)) << "none: fewer spp is more urgent";
}

TEST(PriorityTable, BucketRingsUrgentFirstThenTheWindowsBandsThenFar) {
  const uint32_t K = 9;  // ring 0 urgent, rings 1..7 the window, ring 8 far
  EXPECT_EQ(window_width(K), 7u);
  EXPECT_EQ(bucket_ring(kUnsampledPriority, 10, K), 0u);
  EXPECT_EQ(bucket_ring(1e30f / 33.f, 10, K), 0u) << "below the minimum samples: urgent";
  const float top = 1.f;
  const uint32_t cur = priority_band(top);
  // The window's 7 bands land in 7 different rings 1..7, and the ring of band j is 1 + j mod 7.
  std::vector<bool> used(K, false);
  for (float p = top; priority_band(p) < cur + 7; p *= 0.99f) {
    const uint32_t r = bucket_ring(p, cur, K);
    ASSERT_GE(r, 1u);
    ASSERT_LT(r, K);
    EXPECT_EQ(r, 1u + priority_band(p) % 7u) << p;
    used[r] = true;
  }
  EXPECT_EQ(std::count(used.begin(), used.end(), true), 7);
  EXPECT_EQ(bucket_ring(1e-20f, cur, K), 8u) << "below the window: the far ring";
  EXPECT_EQ(bucket_ring(top / 4.1f, cur, K), 8u) << "just past 7 bands below cur: far";
  EXPECT_EQ(bucket_ring(1e20f, cur, K), bucket_ring(top, cur, K)) << "above the window: cur";
  EXPECT_EQ(bucket_ring(top, kNoBand, K), 1u + cur % 7u) << "no window yet: the priority's own band";
  EXPECT_EQ(bucket_ring(-5.f, kNoBand, K), 1u + priority_band(-5.f) % 7u) << "negative priorities (none) too";
}

TEST(PriorityTable, CreditRunsFractionalQuantaAtTheirMeanRate) {
  for (float q : {0.25f, 0.4f, 1.f, 2.5f, 3.9f}) {
    float credit = 0.f;
    uint32_t batches = 0, yields = 0;
    const int visits = 1000;
    for (int v = 0; v < visits; ++v) {
      const uint32_t k = draw_quantum(credit, q, 4);
      EXPECT_LE(k, 4u);
      batches += k;
      yields += k == 0;
      EXPECT_GE(credit, 0.f);
      EXPECT_LT(credit, 1.f) << "below the cap the fraction stays below one batch";
    }
    EXPECT_NEAR(static_cast<double>(batches) / visits, q, 1.0 / visits + 1e-6) << q;
    if (q >= 1.f) EXPECT_EQ(yields, 0u) << q;
  }
  // Above the cap at most Q batches run and the excess is kept only up to one more visit's worth.
  float credit = 0.f;
  EXPECT_EQ(draw_quantum(credit, 100.f, 4), 4u);
  EXPECT_EQ(credit, 4.f);
}

/// Writes an order log of `runs` in sched-bench's columns with each run's score as `score_of` gives it.
std::string write_log(const test::TempDir& dir, const std::vector<std::vector<float>>& runs,
                      const std::vector<double>& scores) {
  std::ostringstream s;
  s << "run,n,task_us,block,controllers,queue,controller,repeat,score,index,ticket,task,priority\n";
  s.precision(17);
  for (size_t r = 0; r < runs.size(); ++r)
    for (size_t i = 0; i < runs[r].size(); ++i)
      s << r << ',' << runs[r].size() << ",100,128,1,buckets,1,0," << scores[r] << ',' << i << ',' << i << ',' << i
        << ',' << runs[r][i] << '\n';
  const std::string path = dir / "order.csv";
  std::ofstream(path) << s.str();
  return path;
}

int run_script(const std::string& args) {
  const std::string cmd = "python3 '" MV_SOURCE_DIR "/tools/order_score.py' " + args + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(OrderLog, ScriptRecomputesTheProgramsScore) {
  test::TempDir dir("order-log");
  std::mt19937 rng(7);
  std::vector<std::vector<float>> runs;
  std::vector<double> scores;
  for (int r = 0; r < 3; ++r) {
    std::vector<float> l(2000 + 500 * r);
    for (float& x : l) x = static_cast<float>(rng() % 700);  // ties included
    if (r == 1) std::sort(l.begin(), l.end());               // ascending: the worst order
    runs.push_back(l);
    scores.push_back(order_score(l));
  }
  EXPECT_EQ(run_script("'" + write_log(dir, runs, scores) + "'"), 0);
  scores[2] += 1e-6;  // a score the log does not support
  test::TempDir other("order-log-bad");
  EXPECT_EQ(run_script("'" + write_log(other, runs, scores) + "'"), 1);
  EXPECT_NE(run_script("'" + dir / "missing.csv" + "'"), 0);
}

// The far ring's drain (MegakernelSettings::far_drain): a claim drains with probability
// min(1/2, batches · waiting / drain_batches), never when off or empty: the window keeps half the claims.
TEST(PriorityTable, FarDrainIsDueAtTheRateThatClaimsEveryEntryWithinTheDrain) {
  EXPECT_FALSE(far_drain_due(0u, 1, 100, 0));       // off
  EXPECT_FALSE(far_drain_due(0u, 1, 0, 5000));      // nothing waits
  EXPECT_TRUE(far_drain_due(0x7fffffffu, 50, 100, 5000));   // capped at 1/2
  EXPECT_FALSE(far_drain_due(0x80000000u, 50, 100, 5000));
  EXPECT_FALSE(far_drain_due(0xffffffffu, 1, 5000, 5000));
  EXPECT_FALSE(far_drain_due(0x40000000u, 1, 1249, 5000));  // the draw's quarter point: probability < 1/4
  EXPECT_TRUE(far_drain_due(0x3fffffffu, 1, 1250, 5000));
  std::mt19937 rng(7);
  const unsigned long long drain = 25ull * 3164;
  for (int waiting : {10, 300, 20000}) {
    for (uint32_t batches : {1u, 3u}) {
      const int n = 400000;
      int due = 0;
      for (int i = 0; i < n; ++i) due += far_drain_due(static_cast<uint32_t>(rng()), batches, waiting, drain);
      const double p = std::min(0.5, double(batches) * waiting / double(drain));
      EXPECT_NEAR(due / double(n), p, 5.0 * std::sqrt(p * (1 - p) / n) + 1e-6) << waiting << " " << batches;
    }
  }
}

}  // namespace
}  // namespace mv
