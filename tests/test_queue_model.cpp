// The CPU model of Kerbl's priority queue and controller (sched/megakernel/queue_model.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <random>
#include <stdexcept>

#include "sched/megakernel/queue_model.h"
#include "sched/megakernel/score.h"
#include "test_support.h"

namespace mv {
namespace {

QueueModelParams small_params() {
  QueueModelParams p;
  p.n = 2048;
  p.segment = 32;
  p.workers = 8;
  p.task_us = 100.0;
  p.sort_us = {5.0, 3.0, 1.0};
  return p;
}

/// Durations drawn uniformly from [lo, hi] µs by a fixed seed.
std::vector<double> random_durations(uint32_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

TEST(QueueModel, WithoutControllerTheQueueRunsFifo) {
  for (InitialOrder order : {InitialOrder::Ascending, InitialOrder::Random, InitialOrder::Descending}) {
    QueueModelParams p = small_params();
    p.controller = false;
    p.order = order;
    p.task_us_each = random_durations(p.n, 10.0, 300.0, 7);  // finishing order differs from dequeue order
    const QueueModelResult r = run_queue_model(p);
    const std::vector<float> initial = initial_priorities(p.n, order, p.seed);
    EXPECT_EQ(r.executed, initial);
    EXPECT_DOUBLE_EQ(r.score, order_score(initial));
    EXPECT_EQ(r.sort_passes, 0u);
    EXPECT_EQ(r.collisions, 0u);
    if (order == InitialOrder::Ascending) EXPECT_EQ(r.score, 0.0);
    if (order == InitialOrder::Descending) EXPECT_EQ(r.score, 1.0);
    if (order == InitialOrder::Random) EXPECT_NEAR(r.score, 0.5, 0.05);
  }
}

// sched-model's progress and its bound on absurd runs: the callback sees the dequeues grow, and the estimate
// of controller passes is the makespan over the shortest sort.
TEST(QueueModel, ReportsProgressAndEstimatesItsControllerPasses) {
  QueueModelParams p;
  p.n = 200000;
  p.workers = 4;
  p.task_us = 1.0;
  p.sort_us = {2.0, 2.0, 2.0};
  std::vector<uint32_t> seen;
  p.progress = [&](uint32_t dequeued) { seen.push_back(dequeued); };
  const QueueModelResult r = run_queue_model(p);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_LE(seen.back(), p.n);
  EXPECT_LE(static_cast<double>(r.sort_passes), estimated_controller_passes(p));
  EXPECT_DOUBLE_EQ(estimated_controller_passes(p), 50000.0 * 1.0 / 2.0);
  p.n = 16777216;
  p.workers = 1;
  p.task_us = 1e7;
  EXPECT_GT(estimated_controller_passes(p), 1e13);
  p.controller = false;
  EXPECT_EQ(estimated_controller_passes(p), 0.0);
}

TEST(QueueModel, SortsATinyQueueAsWorkedOutByHand) {
  // 8 tasks, S = 2, one worker, 100 µs tasks, 1 µs passes. At t = 0 the worker takes position 0 (segment
  // 0 is in use from then on). Passes: (2,3) → [7 6][5 4]... see below; the queue settles at
  // 0 1 | 7 6 | 5 4 | 3 2 long before the worker returns at t = 100.
  //   t=0 (2,3): [4 5][6 7] → [7 6][5 4]    t=1 (1,2): [2 3][7 6] → [7 6][3 2]
  //   t=2 (0,1) unavailable → restart: (2,3): [3 2][5 4] → [5 4][3 2]    then no-op passes.
  for (bool tm : {false, true}) {
    QueueModelParams p;
    p.n = 8;
    p.segment = 2;
    p.workers = 1;
    p.task_us = 100.0;
    p.sort_us = {1.0, 1.0, 1.0};
    p.time_management = tm;
    const QueueModelResult r = run_queue_model(p);
    EXPECT_EQ(r.executed, (std::vector<float>{0, 1, 7, 6, 5, 4, 3, 2})) << "time management " << tm;
    EXPECT_DOUBLE_EQ(r.score, ascending_held_prefix_bound(8, 2));
    EXPECT_EQ(r.passes_by_method[0], 1u);  // (2,3) both unsorted
    EXPECT_EQ(r.passes_by_method[1], 1u);  // (1,2): 2 sorted, 1 not
    EXPECT_EQ(r.collisions, 0u);
    EXPECT_DOUBLE_EQ(r.total_us, 800.0);
  }
}

TEST(QueueModel, SortedFlagsChooseTheMethod) {
  // One worker, 16 segments of 4: the first sweep (14,15) … (1,2) is 1 unsorted–unsorted pass and 13
  // one-sorted passes; every later pass is sorted–sorted.
  QueueModelParams p;
  p.n = 64;
  p.segment = 4;
  p.workers = 1;
  p.sort_us = {1.0, 1.0, 1.0};
  const QueueModelResult r = run_queue_model(p);
  EXPECT_EQ(r.passes_by_method[0], 1u);
  EXPECT_EQ(r.passes_by_method[1], 13u);
  EXPECT_GT(r.passes_by_method[2], 100u);
  EXPECT_EQ(r.sort_passes, r.passes_by_method[0] + r.passes_by_method[1] + r.passes_by_method[2]);
}

TEST(QueueModel, AFastControllerReachesTheBoundOfTheHeldSegments) {
  // With passes 5000× shorter than a task, the controller sorts every segment the workers have not
  // touched before they get there (a full sort of N = 64 segments takes about N² = 4096 passes, i.e.
  // 82 µs; the workers leave segment 0 after 4 × 100 µs). What it cannot sort: the ceil(W / S) segments
  // the workers hold from t = 0 (§6.2), here segment 0, holding the 32 lowest priorities. So the score
  // is ascending_held_prefix_bound(n, 32) = (1/(n−1)) Σ_{i=32}^{n−1} (i − 32)/i ≈ 0.92, and it cannot
  // be higher. (n is a multiple of S: a partial last segment would stay unsorted.)
  for (bool tm : {false, true}) {
    QueueModelParams p = small_params();
    p.sort_us = {0.02, 0.02, 0.02};
    p.time_management = tm;
    const QueueModelResult r = run_queue_model(p);
    const double bound = ascending_held_prefix_bound(p.n, 32);
    EXPECT_GT(bound, 0.91);
    EXPECT_GE(r.score, bound - 1e-12) << "time management " << tm;
    EXPECT_LE(r.score, bound + 1e-12);
  }
  // W = 40 > S = 32: the workers hold segments 0 and 1 from t = 0 (64 entries) and take 40 more at
  // t = 100 µs. Without time management the controller sorts segment 2 before that; with it, segment 2
  // is never sorted: as the front of pair (2, 3) its buffer is the 24 entries left in segment 1, fewer
  // than W, so floor(R / W) × d_min = 0 (the estimate does not know the workers are busy until 100 µs),
  // and the pair (1, 2) is unavailable. Then 96 entries stay in their initial order.
  for (bool tm : {false, true}) {
    QueueModelParams p = small_params();
    p.workers = 40;
    p.sort_us = {0.02, 0.02, 0.02};
    p.time_management = tm;
    EXPECT_NEAR(run_queue_model(p).score, ascending_held_prefix_bound(p.n, tm ? 96 : 64), 1e-12) << tm;
  }
}

QueueModelParams collision_prone() {
  QueueModelParams p;
  p.n = 4000;
  p.segment = 64;
  p.workers = 16;
  p.task_us_each = random_durations(p.n, 50.0, 150.0, 11);  // the segments' shortest tasks: the estimates
  p.sort_us = {30.0, 20.0, 10.0};
  return p;
}

TEST(QueueModel, TimeManagementAvoidsEveryCollision) {
  QueueModelParams p = collision_prone();
  p.time_management = false;
  const QueueModelResult unmanaged = run_queue_model(p);
  EXPECT_GT(unmanaged.collisions, 0u);  // the setting does collide without time management
  EXPECT_GT(unmanaged.wait_us, 0.0);
  p.time_management = true;
  for (double mult : {1.0, 0.5}) {  // the provable bound, and a more cautious one
    p.buffer_multiplier = mult;
    const QueueModelResult r = run_queue_model(p);
    EXPECT_EQ(r.collisions, 0u) << "multiplier " << mult;
    EXPECT_EQ(r.wait_us, 0.0);
    EXPECT_GT(r.sort_passes, 1000u);
    EXPECT_GT(r.score, 0.6);
  }
  // Counting W = 16 times the entries ahead (as if one worker ran them all) is optimistic: collisions
  // come back.
  p.buffer_multiplier = 16.0;
  EXPECT_GT(run_queue_model(p).collisions, 0u);
}

TEST(QueueModel, WorkersNeverIdleWhileTasksRemain) {
  for (bool tm : {false, true}) {
    QueueModelParams p = collision_prone();
    p.time_management = tm;
    const QueueModelResult r = run_queue_model(p);
    ASSERT_EQ(r.workers.size(), p.workers);
    uint32_t tasks = 0;
    double exec = 0.0;
    for (const WorkerTimeline& w : r.workers) {
      // From 0 to the moment it found the queue empty, a worker executed or waited on a lock: no gaps,
      // and none stopped before the last entry was taken.
      EXPECT_NEAR(w.exec_us + w.wait_us, w.done_us, 1e-6);
      EXPECT_GE(w.done_us, r.last_dequeue_us);
      tasks += w.tasks;
      exec += w.exec_us;
    }
    EXPECT_EQ(tasks, p.n);
    const double work = std::accumulate(p.task_us_each.begin(), p.task_us_each.end(), 0.0);
    EXPECT_NEAR(exec, work, 1e-3);
    EXPECT_GE(r.total_us, work / p.workers);
  }
}

TEST(QueueModel, IsDeterministicForASeed) {
  QueueModelParams p = collision_prone();
  p.order = InitialOrder::Random;
  p.time_management = false;
  const QueueModelResult a = run_queue_model(p), b = run_queue_model(p);
  EXPECT_EQ(a.executed, b.executed);
  EXPECT_EQ(a.total_us, b.total_us);
  EXPECT_EQ(a.sort_passes, b.sort_passes);
  EXPECT_EQ(a.collisions, b.collisions);
  EXPECT_EQ(a.wait_us, b.wait_us);
  p.seed = 2;
  EXPECT_NE(run_queue_model(p).executed, a.executed);
}

TEST(QueueModel, RejectsParametersOutOfRange) {
  auto bad = [](auto change) {
    QueueModelParams p = small_params();
    change(p);
    EXPECT_THROW(run_queue_model(p), std::invalid_argument);
  };
  bad([](QueueModelParams& p) { p.n = 0; });
  bad([](QueueModelParams& p) { p.segment = 0; });
  bad([](QueueModelParams& p) { p.segment = p.n + 1; });
  bad([](QueueModelParams& p) { p.workers = 0; });
  bad([](QueueModelParams& p) { p.task_us = 0.0; });
  bad([](QueueModelParams& p) { p.task_us_each = {1.0}; });
  bad([](QueueModelParams& p) { p.sort_us[2] = 0.0; });
  bad([](QueueModelParams& p) { p.buffer_multiplier = 0.0; });
}

// `megaview sched-model`: the table's scores are the model's, written as CSV beside its metadata JSON,
// never over an existing file. (The figure is tools/figures.py's: test_figures.cpp.)
TEST(SchedModelCommand, PrintsTheModelsScoresAndWritesCsvAndMetadata) {
  const std::string bin = test::megaview_binary();
  test::TempDir dir("sched-model");
  const std::string prefix = dir / "model";
  const std::string cmd = "MV_FIGURES_SCRIPT='" + (dir / "absent.py") + "' '" + bin + "' sched-model --n 2048,4096 --task-us 100 --workers 8 --segment 32 " +
                          "--sort-us 5,3,1 --out-prefix '" + prefix + "' > '" + (dir / "out.txt") + "' 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << test::slurp(dir / "out.txt");
  std::istringstream csv(test::slurp(prefix + ".csv"));
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("n,task_us,workers,segment,", 0), 0u) << header;
  QueueModelParams p = small_params();  // 2048 tasks of 100 µs, S = 32, W = 8, passes 5/3/1 µs
  for (uint32_t n : {2048u, 4096u}) {
    ASSERT_TRUE(std::getline(csv, row));
    std::vector<std::string> f;
    std::istringstream cells(row);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    ASSERT_EQ(f.size(), 22u) << row;
    p.n = n;
    const QueueModelResult r = run_queue_model(p);
    EXPECT_EQ(std::stoul(f[0]), n);
    EXPECT_NEAR(std::stod(f[11]), r.score, 1e-6) << row;
    EXPECT_EQ(std::stod(f[12]), 0.0);  // FIFO of an ascending queue
    EXPECT_EQ(std::stoull(f[14]), r.sort_passes);
  }
  EXPECT_FALSE(std::getline(csv, row));
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(prefix + ".json"));
  EXPECT_EQ(meta["kind"], "sched-model");
  EXPECT_EQ(meta["redoes"], "Kerbl 2012, Figs 4-5");
  EXPECT_EQ(meta["units"]["task_us"], "us");
  EXPECT_TRUE(meta["gpu"].is_null());
  EXPECT_FALSE(std::filesystem::exists(prefix + ".png"));
  status = std::system(cmd.c_str());  // again: the outputs exist
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  EXPECT_NE(test::slurp(dir / "out.txt").find("already exists"), std::string::npos);
}

}  // namespace
}  // namespace mv
