// Lehmann 2023's CPU strategies on the progressive film (sched/cpu/cpu_to_completion.h): `sequential` runs the
// patches to their target in index order, `cpu-parallel` gives every unfinished patch one batch per
// super-step, and a step's budget cuts either without changing the order. Both are the algorithms of the
// same names on strands (sched/cpu/strand_cpu.h): the same info records.
#include <gtest/gtest.h>

#include "app/session/strand_workloads.h"
#include "test_support.h"

namespace mv {
namespace {

PatchWorkload small_film(uint32_t target_spp) {
  Scene scene = test::furnace_scene(0.5f, 0.5f, false);
  scene.width = 24;  // 6 × 4 patches
  scene.height = 16;
  scene.finalize();
  PatchTaskParams p;
  p.target_spp = target_spp;
  p.paths_per_pixel = 2;
  p.priority = PriorityFunction::Variance;  // ignored by both
  return PatchWorkload(scene, p, false);
}

TEST(CpuToCompletion, SequentialRunsEachPatchToItsTargetInIndexOrder) {
  PatchWorkload w = small_film(8);
  auto s = patch_strategies().find("sequential").make();
  const uint64_t per_batch = w.work_per_task();  // 16 pixels × 2 paths
  const uint64_t per_patch = per_batch * 4;      // 8 spp in batches of 2
  // Two and a half patches' worth: patches 0 and 1 at the target, patch 2 half way, the rest untouched.
  StepStats st = s->step(w, 2 * per_patch + 2 * per_batch, ScheduleSettings{});
  EXPECT_EQ(st.work, 2 * per_patch + 2 * per_batch);
  EXPECT_EQ(st.finished, 2u);
  std::vector<uint32_t> spp = w.film().host_patch_spp();
  EXPECT_EQ(spp[0], 8u);
  EXPECT_EQ(spp[1], 8u);
  EXPECT_EQ(spp[2], 4u);
  for (uint32_t t = 3; t < w.num_tasks(); ++t) EXPECT_EQ(spp[t], 0u) << t;
  // The next step goes on with patch 2.
  st = s->step(w, 2 * per_batch, ScheduleSettings{});
  spp = w.film().host_patch_spp();
  EXPECT_EQ(spp[2], 8u);
  EXPECT_EQ(spp[3], 0u);
  EXPECT_EQ(st.finished, 1u);
}

TEST(CpuToCompletion, CpuParallelGivesEveryPatchOneBatchPerSuperStepAcrossSteps) {
  PatchWorkload w = small_film(8);
  auto s = patch_strategies().find("cpu-parallel").make();
  const uint32_t n = w.num_tasks();
  const uint64_t per_batch = w.work_per_task();
  // A super-step in two steps of 10 and n − 10 patches: every patch then has exactly one batch.
  s->step(w, 10 * per_batch, ScheduleSettings{});
  std::vector<uint32_t> spp = w.film().host_patch_spp();
  for (uint32_t t = 0; t < n; ++t) EXPECT_EQ(spp[t], t < 10 ? 2u : 0u) << t;
  s->step(w, (n - 10) * per_batch, ScheduleSettings{});
  spp = w.film().host_patch_spp();
  for (uint32_t t = 0; t < n; ++t) EXPECT_EQ(spp[t], 2u) << t;
  // The knob is the strands' cpu-block, and the film ends at exactly the target.
  ASSERT_NE(s->params(), nullptr);
  s->params()->apply({{"cpu-block", "3"}});
  for (int guard = 0; guard < 100 && s->step(w, 7 * per_batch, ScheduleSettings{}).work > 0; ++guard) {
  }
  for (uint32_t v : w.film().host_spp()) ASSERT_EQ(v, 8u);
  EXPECT_EQ(w.finished_tasks(), n);
}

TEST(CpuToCompletion, BothRenderTheSameImageAsThePriorityWaves) {
  PatchWorkload a = small_film(8), b = small_film(8), c = small_film(8);
  const std::vector<float> seq = test::render_mean_image(a, "sequential");
  EXPECT_EQ(test::render_mean_image(b, "cpu-parallel"), seq);  // the samples do not depend on the order
  EXPECT_EQ(test::render_mean_image(c, "cpu-waves"), seq);
}

TEST(CpuToCompletion, TheFilmAndTheStrandsShareOneInfoRecordPerName) {
  for (const char* name : {"sequential", "cpu-parallel"}) {
    const StrategyInfo& film = patch_strategies().find(name).info;
    const StrategyInfo& strands = find_strand_workload("mandelbrot").strategy(name);
    EXPECT_EQ(film.description, strands.description) << name;
    EXPECT_EQ(film.section, strands.section) << name;
    EXPECT_EQ(film.knobs, strands.knobs) << name;
    EXPECT_TRUE(film.progressive && !film.run_to_completion) << name;
    EXPECT_TRUE(strands.run_to_completion && !strands.progressive) << name;
  }
}

}  // namespace
}  // namespace mv
