// Lehmann 2023's GPU strand strategies (sched/gpu/strand_bsp.cuh, sched/gpu/strand_batch.cuh,
// sched/gpu/strand_global_queue.cuh): each one, under many grids (auto, n·b far above the strand count, b
// not a power of two, c = 1, c not dividing N, c larger than N), gives the same mandelbrot image and
// per-strand step counts as `sequential`, bit for bit; runs every strand exactly once to completion
// (counted on the device by the test workload); honours max_steps; and reports its launches. Skipped
// without a GPU (MV_REQUIRE_GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/device_buffer.h"
#include "sched/strand_registry.cuh"
#include "strand_test_workloads.h"
#include "test_support.h"

namespace mv {
namespace {

const StrandStrategyRegistry<test::CountingStrands>& counting_strategies() {
  static const StrandStrategyRegistry<test::CountingStrands> r = make_strand_registry<test::CountingStrands>();
  return r;
}

std::vector<GridConfig> test_grids() {
  return {GridConfig{},                 // auto: occupancy API
          make_grid(1, 32, 1),          // one warp does everything
          make_grid(3, 64, 7),          // c does not divide N
          make_grid(5, 96, 1),          // b a multiple of 32 but not a power of two
          make_grid(64, 128, 2),        //
          make_grid(1000, 1024, 1),     // n·b ≫ N: most threads find no strand
          make_grid(4, 32, 1u << 20)};  // one work unit holds every strand
}

bool is_bsp(const StrategyInfo& i) {
  return i.name == "cuda" || i.name == "cuda-permute" || i.name == "cuda-unified-memory";
}

class GpuStrandStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuStrandStrategy, MandelbrotMatchesSequentialBitwiseUnderEveryGrid) {
  MV_REQUIRE_GPU();
  const StrategyInfo& info = mandelbrot_strand_strategies().find(GetParam()).info;
  for (const MandelbrotStrands& w : test::mandelbrot_cases()) {
    const StrandResult seq = test::run_mandelbrot(w, "sequential");
    const uint32_t longest = step_statistics(seq.steps).max;
    for (const GridConfig& g : test_grids()) {
      StrandRunSettings s;
      s.grid = g;
      const StrandResult r = test::run_mandelbrot(w, GetParam(), s);
      EXPECT_TRUE(test::same_result(seq, r)) << GetParam() << " grid " << g.str();
      EXPECT_TRUE(r.timing.cuda_events);
      EXPECT_GT(r.timing.ms, 0.0);
      EXPECT_FALSE(r.timing.grid.automatic) << "the grid used is reported resolved";
      if (!g.automatic) EXPECT_EQ(r.timing.grid, g);
      if (is_bsp(info)) {
        EXPECT_EQ(r.timing.super_steps, longest) << "BSP: one super-step per update of the longest strand";
        EXPECT_EQ(r.timing.launches, longest + 1) << "init + one launch per super-step";
      } else {
        EXPECT_EQ(r.timing.super_steps, 0u);
        EXPECT_EQ(r.timing.launches, 1u) << "batch and queue: one launch";
      }
    }
  }
}

TEST_P(GpuStrandStrategy, EveryStrandRunsExactlyOnceUnderEveryGrid) {
  MV_REQUIRE_GPU();
  auto strategy = counting_strategies().find(GetParam()).make();
  for (uint32_t n : {1u, 1000u, 4099u}) {
    for (const GridConfig& g : test_grids()) {
      for (uint32_t max_steps : {0xffffffffu, 17u, 0u}) {
        DeviceBuffer<uint32_t> inits(n + 1), updates(n + 1);
        inits.zero();
        updates.zero();
        test::CountingStrands w;
        w.n = n;
        w.init_calls = inits.data();
        w.update_calls = updates.data();
        StrandRunSettings s;
        s.grid = g;
        s.max_steps = max_steps;
        s.permute_seed = n;
        const StrandRun<test::CountingStrands> r = strategy->run(w, s);
        std::vector<uint32_t> hi(n + 1), hu(n + 1);
        inits.download(hi.data(), n + 1);
        updates.download(hu.data(), n + 1);
        MV_CUDA_CHECK(cudaDeviceSynchronize());
        EXPECT_TRUE(test::ran_exactly_once(r, hi, hu, n, max_steps))
            << GetParam() << " n " << n << " grid " << g.str() << " max_steps " << max_steps;
      }
    }
  }
}

TEST_P(GpuStrandStrategy, NoStrandsLaunchNothing) {
  MV_REQUIRE_GPU();
  test::CountingStrands w;  // n = 0
  const StrandRun<test::CountingStrands> r = counting_strategies().find(GetParam()).make()->run(w, {});
  EXPECT_TRUE(r.steps.empty());
  EXPECT_EQ(r.timing.launches, 0u);
}

TEST_P(GpuStrandStrategy, OutOfRangeSettingsThrowInputErrorBeforeAnyWork) {
  // No GPU needed: settings are checked first.
  auto strategy = mandelbrot_strand_strategies().find(GetParam()).make();
  StrandRunSettings s;
  s.grid.automatic = false;
  s.grid.blocks = 64;
  s.grid.threads = 100;
  EXPECT_THROW(strategy->run(mandelbrot_workload(8, 8), s), InputError);
  s.grid.threads = 64;
  s.grid.work_unit = 0;
  EXPECT_THROW(strategy->run(mandelbrot_workload(8, 8), s), InputError);
}

INSTANTIATE_TEST_SUITE_P(AppendixA, GpuStrandStrategy,
                         ::testing::Values("cuda", "cuda-permute", "cuda-batch", "cuda-batch-permute",
                                           "cuda-unified-memory", "cuda-global-queue",
                                           "cuda-global-queue-unified-memory"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// ---------------------------------------------------------------- the task strategies on strands
// sequential-priority, uniform, sorted-waves and megakernel run groups of 32 strands as tasks that
// re-enqueue after each quantum of updates (sched/adapters/strand_task_strategy.cuh). Whatever the quantum, the
// group priority and the strategy, every strand sees run_item's calls exactly, so results equal
// `sequential`'s bit for bit. sequential-priority runs on the CPU (these tests run in CI); the other
// three skip without a GPU.

class TaskStrandStrategy : public ::testing::TestWithParam<std::string> {
 protected:
  bool needs_gpu() const { return GetParam() != "sequential-priority"; }
};

const StrandTaskPriority kTaskPriorities[] = {StrandTaskPriority::Fifo, StrandTaskPriority::MostRemaining,
                                              StrandTaskPriority::LeastRemaining};

TEST_P(TaskStrandStrategy, MandelbrotMatchesSequentialBitwiseForEveryQuantumAndPriority) {
  if (needs_gpu()) MV_REQUIRE_GPU();
  const StrategyInfo& info = mandelbrot_strand_strategies().find(GetParam()).info;
  EXPECT_TRUE(info.reads("task-quantum"));
  EXPECT_EQ(info.needs_gpu(), needs_gpu());
  for (const MandelbrotStrands& w : test::mandelbrot_cases()) {
    const StrandResult seq = test::run_mandelbrot(w, "sequential");
    for (uint32_t q : {1u, 7u, 64u}) {
      for (StrandTaskPriority p : kTaskPriorities) {
        StrandRunSettings s;
        s.task_quantum = q;
        s.task_priority = p;
        const StrandResult r = test::run_mandelbrot(w, GetParam(), s);
        const std::string label = GetParam() + " q" + std::to_string(q) + " " + strand_task_priority_name(p);
        EXPECT_TRUE(test::same_result(seq, r)) << label;
        EXPECT_EQ(r.timing.cuda_events, needs_gpu()) << label;
        EXPECT_GT(r.timing.ms, 0.0) << label;
        EXPECT_NE(r.timing.notes.find("quantum " + std::to_string(q)), std::string::npos) << r.timing.notes;
      }
    }
  }
}

TEST_P(TaskStrandStrategy, EveryStrandRunsExactlyOnceWhateverTheGroupsAndQuantum) {
  if (needs_gpu()) MV_REQUIRE_GPU();
  auto strategy = counting_strategies().find(GetParam()).make();
  for (uint32_t n : {1u, 1000u, 4099u}) {  // one partial group; 4099 = 128 full groups + 3 strands
    for (uint32_t q : {1u, 16u}) {
      for (uint32_t max_steps : {0xffffffffu, 17u, 0u}) {
        std::vector<uint32_t> hi(n + 1, 0u), hu(n + 1, 0u);
        DeviceBuffer<uint32_t> inits, updates;
        test::CountingStrands w;
        w.n = n;
        if (needs_gpu()) {
          inits.resize(n + 1);
          updates.resize(n + 1);
          inits.zero();
          updates.zero();
          w.init_calls = inits.data();
          w.update_calls = updates.data();
        } else {
          w.init_calls = hi.data();
          w.update_calls = hu.data();
        }
        StrandRunSettings s;
        s.task_quantum = q;
        s.max_steps = max_steps;
        s.task_priority = kTaskPriorities[n % 3];
        const StrandRun<test::CountingStrands> r = strategy->run(w, s);
        if (needs_gpu()) {
          inits.download(hi.data(), n + 1);
          updates.download(hu.data(), n + 1);
          MV_CUDA_CHECK(cudaDeviceSynchronize());
        }
        EXPECT_TRUE(test::ran_exactly_once(r, hi, hu, n, max_steps))
            << GetParam() << " n " << n << " quantum " << q << " max_steps " << max_steps;
      }
    }
  }
}

TEST_P(TaskStrandStrategy, NoStrandsRunNothing) {
  if (needs_gpu()) MV_REQUIRE_GPU();
  test::CountingStrands w;  // n = 0
  const StrandRun<test::CountingStrands> r = counting_strategies().find(GetParam()).make()->run(w, {});
  EXPECT_TRUE(r.steps.empty());
  EXPECT_NE(r.timing.notes.find("0 task executions"), std::string::npos) << r.timing.notes;
}

TEST_P(TaskStrandStrategy, OutOfRangeQuantumThrowsInputErrorNamingTheOption) {
  auto strategy = mandelbrot_strand_strategies().find(GetParam()).make();
  for (uint32_t q : {0u, 65537u}) {
    StrandRunSettings s;
    s.task_quantum = q;
    try {
      strategy->run(mandelbrot_workload(8, 8), s);
      ADD_FAILURE() << "quantum " << q << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--task-quantum"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("[1, 65536]"), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kerbl, TaskStrandStrategy,
                         ::testing::Values("sequential-priority", "uniform", "sorted-waves", "megakernel"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// The group priority rule itself, on the host view: unstarted groups first, then Σ of the active
// strands' ages (most-remaining), its negative (least-remaining) or 0 (fifo); finished groups last.
TEST(StrandTaskView, GroupPriorityIsTheActiveStrandsAgeSum) {
  const uint32_t n = 40;  // group 0: strands 0…31, group 1: strands 32…39
  for (StrandTaskPriority rule : kTaskPriorities) {
    test::CountingStrands w;
    w.n = n;
    std::vector<test::CountingStrands::State> state(n);
    std::vector<WorkStatus> status(n, WorkStatus::Active);
    std::vector<uint32_t> steps(n, 0u);
    std::vector<uint8_t> done(2, 0);
    std::vector<float> priority(2, kUnsampledPriority);
    for (uint32_t i = 0; i < n; ++i) state[i] = w.init(i);
    StrandTaskView<test::CountingStrands> v;
    v.workload = w;
    v.state = state.data();
    v.status = status.data();
    v.steps = steps.data();
    v.done = done.data();
    v.priority = priority.data();
    v.strands = n;
    v.quantum = 10;
    v.rule = rule;
    ASSERT_EQ(v.num_tasks(), 2u);
    // One execution of group 1: each strand takes min(10, target) updates.
    uint32_t expected_updates = 0, active = 0;
    float age_sum = 0.f;
    for (uint32_t i = 32; i < n; ++i) {
      const uint32_t t = test::CountingStrands::target(i);
      expected_updates += std::min(10u, t);
      if (t > 10) ++active, age_sum += 10.f;
    }
    ASSERT_GT(active, 0u) << "the test wants a group that stays active";
    EXPECT_EQ(v.run_task(1), expected_updates);
    EXPECT_FALSE(v.finished(1));
    const float want = rule == StrandTaskPriority::Fifo            ? 0.f
                       : rule == StrandTaskPriority::MostRemaining ? age_sum
                                                                   : -age_sum;
    EXPECT_EQ(priority[1], want) << strand_task_priority_name(rule);
    EXPECT_EQ(priority[0], kUnsampledPriority) << "group 0 has not run";
    // Run group 1 to its end: finished, last.
    while (!v.finished(1)) v.run_task(1);
    EXPECT_EQ(priority[1], kFinishedPriority);
    EXPECT_EQ(v.run_task(1), 0u) << "a finished group does no work";
    for (uint32_t i = 32; i < n; ++i) EXPECT_EQ(steps[i], test::CountingStrands::target(i)) << i;
  }
}

// Every GPU strategy records its finish order when asked (the viewer's fill-in replay): a permutation of
// the strands; the BSP strategies finish a strand with fewer steps in an earlier super-step; the results
// themselves do not change.
TEST(GpuStrandStrategies, FinishOrderIsAPermutationAndBspFinishesByStepCount) {
  MV_REQUIRE_GPU();
  const MandelbrotStrands w = test::mandelbrot_cases()[0];
  const StrandResult seq = test::run_mandelbrot(w, "sequential");
  for (const auto& e : mandelbrot_strand_strategies().entries()) {
    if (!e.info.needs_gpu()) continue;
    StrandRunSettings s;
    s.record_finish_order = true;
    auto st = e.make();
    StrandRun<MandelbrotStrands> run = st->run(w, s);
    std::vector<uint32_t> order = run.finish_order;
    const StrandResult r = finish_strand_run(w, std::move(run), w.p.width, w.p.height);
    EXPECT_TRUE(test::same_result(seq, r)) << e.info.name;
    ASSERT_EQ(order.size(), seq.steps.size()) << e.info.name;
    const bool bsp = e.info.name == "cuda" || e.info.name == "cuda-permute" || e.info.name == "cuda-unified-memory";
    if (bsp)
      for (uint32_t i = 0; i < order.size(); ++i)
        for (uint32_t j = i % 89; j < order.size(); j += 89)
          if (seq.steps[i] < seq.steps[j]) ASSERT_LT(order[i], order[j]) << e.info.name << ": " << i << " vs " << j;
    std::sort(order.begin(), order.end());
    for (uint32_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], i) << e.info.name << ": not a permutation";
  }
}

TEST(StrandTaskPriorityNames, RoundTripAndBadNamesListTheAllowedOnes) {
  for (StrandTaskPriority p : kTaskPriorities) EXPECT_EQ(parse_strand_task_priority(strand_task_priority_name(p)), p);
  try {
    parse_strand_task_priority("soonest");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--task-priority"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fifo, most-remaining, least-remaining"), std::string::npos) << e.what();
  }
}

TEST(GpuStrandStrategies, UnifiedMemoryWithAndWithoutPrefetchOrManagedCounterAndAnyPermutationSeedAgree) {
  MV_REQUIRE_GPU();
  const MandelbrotStrands w = test::mandelbrot_cases()[1];
  const StrandResult seq = test::run_mandelbrot(w, "sequential");
  for (const char* name : {"cuda-unified-memory", "cuda-global-queue-unified-memory"}) {
    for (bool prefetch : {true, false}) {
      for (bool managed_counter : {false, true}) {
        StrandRunSettings s;
        s.prefetch = prefetch;
        s.managed_counter = managed_counter;
        const StrandResult r = test::run_mandelbrot(w, name, s);
        EXPECT_TRUE(test::same_result(seq, r)) << name << " prefetch " << prefetch << " counter " << managed_counter;
        EXPECT_NE(r.timing.notes.find("managed memory"), std::string::npos) << r.timing.notes;
        EXPECT_EQ(r.timing.notes.find("managed counter") != std::string::npos, managed_counter) << r.timing.notes;
      }
    }
  }
  for (const char* name : {"cuda-permute", "cuda-batch-permute"}) {
    for (uint64_t seed : {0ull, 1ull, 12345ull}) {
      StrandRunSettings s;
      s.permute_seed = seed;
      EXPECT_TRUE(test::same_result(seq, test::run_mandelbrot(w, name, s))) << name << " seed " << seed;
    }
  }
}

// The full benchmark of Fig 3.2 / Appendix A.3 (2000 × 2000 strands): the GPU's step counts, statistics
// and image equal the CPU's bit for bit.
TEST(GpuStrandStrategies, FullSizeMandelbrotMatchesSequentialAndFig32) {
  MV_REQUIRE_GPU();
  const MandelbrotStrands w = mandelbrot_workload(2000, 2000);
  const StrandResult seq = test::run_mandelbrot(w, "sequential");
  StrandRunSettings s;
  s.grid = make_grid(1024, 64, 1);
  const StrandResult gq = test::run_mandelbrot(w, "cuda-global-queue", s);
  EXPECT_TRUE(test::same_result(seq, gq));
  const StepStatistics st = step_statistics(gq.steps);
  EXPECT_EQ(st.count, 4000000u);
  EXPECT_NEAR(st.mean, 284.559, 0.001);
  EXPECT_NEAR(st.cv, 2.3615, 0.0001);
}

}  // namespace
}  // namespace mv
