// Kerbl's order score S(n) (sched/megakernel/score.h) and the exact-priority strategy that bounds it
// (sched/cpu/exact_priority.h).
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "render/pathtracer/priority.h"
#include "render/pathtracer/scene_io.h"
#include "sched/cpu/exact_priority.h"
#include "sched/megakernel/score.h"
#include "test_support.h"

namespace mv {
namespace {

/// §6.2's formula, literally: O(n²).
double naive_score(const std::vector<float>& L) {
  const size_t n = L.size();
  if (n < 2) return 1.0;
  double sum = 0.0;
  for (size_t i = 1; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      if (L[j] >= L[i]) sum += 1.0 / static_cast<double>(i);
  return sum / static_cast<double>(n - 1);
}

std::vector<float> iota_floats(size_t n, bool descending) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(descending ? n - 1 - i : i);
  return v;
}

TEST(Score, ExtremesAreOneAndZero) {
  for (size_t n : {2u, 3u, 17u, 1000u}) {
    EXPECT_DOUBLE_EQ(order_score(iota_floats(n, true)), 1.0) << n;
    EXPECT_DOUBLE_EQ(order_score(iota_floats(n, false)), 0.0) << n;
    EXPECT_DOUBLE_EQ(order_score(std::vector<float>(n, 3.5f)), 1.0) << n;  // ties count as in order
  }
}

TEST(Score, MatchesAHandComputedCase) {
  // L = 3 1 2 2: i=1 sees {3} ≥ 1 → 1/1; i=2 sees {3} ≥ 2 of {3,1} → 1/2; i=3 sees {3,2} of {3,1,2} → 2/3.
  // S = (1 + 1/2 + 2/3) / 3 = 13/18.
  EXPECT_DOUBLE_EQ(order_score({3.f, 1.f, 2.f, 2.f}), 13.0 / 18.0);
  EXPECT_DOUBLE_EQ(order_score({-1.f, 5.f}), 0.0);
  EXPECT_DOUBLE_EQ(order_score({5.f, -1.f}), 1.0);
}

TEST(Score, ShortSequencesAreOrderedAndNaNIsRejected) {
  EXPECT_EQ(order_score(std::vector<float>{}), 1.0);
  EXPECT_EQ(order_score({42.f}), 1.0);
  EXPECT_THROW(order_score({1.f, std::nanf(""), 0.f}), std::invalid_argument);
}

TEST(Score, AgreesWithTheNaiveFormulaOnRandomInputsWithDuplicates) {
  std::mt19937 rng(20120601);  // fixed: every run checks the same inputs, each case a fresh draw
  for (size_t n : {2u, 3u, 5u, 10u, 64u, 257u, 1000u, 2500u}) {
    for (int rep = 0; rep < 3; ++rep) {
      const int range = rep == 0 ? 3 : rep == 1 ? static_cast<int>(n) / 2 + 1 : 1 << 20;  // many, some, few ties
      std::uniform_int_distribution<int> value(-range, range);
      std::vector<float> L(n);
      for (float& x : L) x = static_cast<float>(value(rng)) * 0.25f;
      EXPECT_NEAR(order_score(L), naive_score(L), 1e-12) << "n " << n << " rep " << rep;
    }
  }
}

TEST(Score, HeldPrefixBoundMatchesTheScoreOfItsOrderAtAMillion) {
  // The order the bound describes: `held` lowest priorities ascending, then the rest descending.
  const size_t n = 1000000, held = 1280;
  std::vector<float> L(n);
  for (size_t i = 0; i < held; ++i) L[i] = static_cast<float>(i);
  for (size_t i = held; i < n; ++i) L[i] = static_cast<float>(n - 1 - (i - held));
  const double bound = ascending_held_prefix_bound(n, held);
  EXPECT_NEAR(order_score(L), bound, 1e-9);
  EXPECT_GT(bound, 0.98);
  EXPECT_LT(bound, 1.0);
  EXPECT_EQ(ascending_held_prefix_bound(n, 0), 1.0);
  EXPECT_EQ(ascending_held_prefix_bound(n, n), 0.0);
  EXPECT_EQ(ascending_held_prefix_bound(1, 1), 1.0);
}

// ---- sequential-priority ----

/// One execution as the strategy chose it.
struct Pick {
  uint32_t task;
  float priority;          ///< the task's priority when it was taken
  uint32_t outranked_by;   ///< unfinished tasks that should have gone first (higher, or equal and smaller index)
};

/// A PatchWorkload whose view records every execution and checks it against all unfinished tasks.
struct RecordingWorkload {
  struct View {
    PatchTaskView inner;
    std::vector<Pick>* log;
    float* priority;
    bool finished(uint32_t t) const { return inner.finished(t); }
    uint32_t run_task(uint32_t t) const {
      Pick p{t, priority[t], 0};
      for (uint32_t u = 0; u < inner.num_tasks(); ++u)
        if (u != t && !inner.finished(u) && (priority[u] > priority[t] || (priority[u] == priority[t] && u < t)))
          ++p.outranked_by;
      log->push_back(p);
      return inner.run_task(t);
    }
  };
  PatchWorkload& w;
  std::vector<Pick> log;
  uint32_t num_tasks() const { return w.num_tasks(); }
  uint32_t work_per_task() const { return w.work_per_task(); }
  void make_current(Side s) { w.make_current(s); }
  View view(Side s) {
    const PatchTaskView v = w.view(s);
    return View{v, &log, v.priority};
  }
};

Scene small_room() {
  Scene s = load_scene(resolve_scene_path("room"));
  s.width = 32;
  s.height = 24;
  return s;
}

/// Runs sequential-priority to the end in steps of `budget` paths; returns the number of steps.
int run_to_end(RecordingWorkload& rw, uint64_t budget) {
  ExactPriorityStrategy<RecordingWorkload> strategy;
  EXPECT_EQ(strategy.info().side, Side::Host);
  rw.make_current(Side::Host);
  int steps = 0;
  while (strategy.step(rw, budget, ScheduleSettings{}).tasks > 0) ++steps;
  return steps;
}

TEST(SequentialPriority, EveryExecutionTakesTheMostUrgentUnfinishedTask) {
  PatchTaskParams p;
  p.target_spp = 16;
  p.priority = PriorityFunction::Convergence;  // priorities rise and fall between executions
  PatchWorkload w(small_room(), p, false);
  RecordingWorkload rw{w, {}};
  // Budgets of 40 paths: several executions per step, and steps that end mid-way (heap rebuilt each step).
  EXPECT_GT(run_to_end(rw, 40), 10);
  ASSERT_EQ(rw.log.size(), size_t{w.num_tasks()} * 8);  // 16 spp at 2 paths per pixel: 8 runs a patch
  size_t bad = 0;
  for (const Pick& pk : rw.log) bad += pk.outranked_by > 0;
  EXPECT_EQ(bad, 0u) << "executions that skipped a more urgent task";
  for (uint32_t spp : w.film().host_patch_spp()) EXPECT_EQ(spp, 16u);
}

TEST(SequentialPriority, ScoresOneWhenPrioritiesOnlyFall) {
  // Priority `none` is −spp: every execution lowers its task's priority, so the exact queue's order,
  // rated by the priorities at dequeue time, never rises: S = 1.
  PatchTaskParams p;
  p.target_spp = 8;
  p.priority = PriorityFunction::None;
  PatchWorkload w(test::furnace_scene(0.5f, 1.f, true, 16), p, false);
  RecordingWorkload rw{w, {}};
  run_to_end(rw, 1u << 20);
  std::vector<float> L;
  for (const Pick& pk : rw.log) L.push_back(pk.priority);
  ASSERT_EQ(L.size(), size_t{w.num_tasks()} * 4);
  EXPECT_EQ(order_score(L), 1.0);
  for (uint32_t spp : w.film().host_patch_spp()) EXPECT_EQ(spp, 8u);
  EXPECT_EQ(w.finished_tasks(), w.num_tasks());
}

TEST(SequentialPriority, IsRegisteredAndRendersEveryPatchToTheTarget) {
  EXPECT_EQ(patch_strategies().find("sequential-priority").info.side, Side::Host);
  PatchTaskParams p;
  p.paths_per_pixel = 3;
  p.target_spp = 8;  // 3 + 3 + 2: the last execution is partial
  Scene s = load_scene(resolve_scene_path("cornell"));
  s.width = s.height = 16;
  PatchWorkload small(s, p, false);
  test::render_mean_image(small, "sequential-priority");
  for (uint32_t spp : small.film().host_patch_spp()) EXPECT_EQ(spp, 8u);
  for (uint32_t spp : small.film().host_spp()) EXPECT_EQ(spp, 8u);
  EXPECT_EQ(small.remaining_paths(), 0u);
}

}  // namespace
}  // namespace mv
