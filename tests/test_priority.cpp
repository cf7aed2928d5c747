// Priority functions: the per-pixel terms on hand-computed values, and their effect on the error.
#include <gtest/gtest.h>

#include "render/metrics.h"
#include "render/pathtracer/priority.h"
#include "render/pathtracer/scene_io.h"
#include "test_support.h"

namespace mv {
namespace {

TEST(Priority, TermsMatchHandComputedValues) {
  const Vec3 old_sum{1.f, 2.f, 3.f};  // old mean (0.5, 1, 1.5) from 2 samples
  const Vec3 sum{3.f, 4.f, 5.f};      // new mean (0.75, 1, 1.25) from 4 samples
  const Vec3 sum_sq{3.f, 5.f, 7.f};
  EXPECT_FLOAT_EQ(pixel_priority_term(PriorityFunction::Intensity, old_sum, 2, sum, sum_sq, 4), 3.f);
  EXPECT_FLOAT_EQ(pixel_priority_term(PriorityFunction::Convergence, old_sum, 2, sum, sum_sq, 4), 0.25f + 0.f + 0.25f);
  // Unbiased variance per channel: (sum_sq/n - mean²)·n/(n-1) = (0.75-0.5625, 1.25-1, 1.75-1.5625)·4/3
  const float var = (0.1875f + 0.25f + 0.1875f) * 4.f / 3.f;
  EXPECT_FLOAT_EQ(pixel_priority_term(PriorityFunction::Variance, old_sum, 2, sum, sum_sq, 4), var / 16.f);
  EXPECT_FLOAT_EQ(pixel_priority_term(PriorityFunction::RelativeError, old_sum, 2, sum, sum_sq, 4),
                  std::sqrt(var / 4.f) / (3.f + 0.01f));
  EXPECT_EQ(pixel_priority_term(PriorityFunction::None, old_sum, 2, sum, sum_sq, 4), 0.f);
}

TEST(Priority, PatchPriorityOrdersFinishedLastAndUnderSampledFirst) {
  EXPECT_EQ(patch_priority(PriorityFunction::Convergence, 5.f, 16, 512, 512), kFinishedPriority);
  EXPECT_EQ(patch_priority(PriorityFunction::None, 0.f, 16, 6, 512), -6.f);
  // Below the minimum spp the variance estimate is not trusted: ranked above any adaptive value.
  EXPECT_GT(patch_priority(PriorityFunction::Variance, 0.f, 16, 2, 512),
            patch_priority(PriorityFunction::Variance, 1e20f, 16, 64, 512));
  EXPECT_GT(patch_priority(PriorityFunction::Variance, 0.f, 16, 2, 512),
            patch_priority(PriorityFunction::Variance, 0.f, 16, 4, 512));
}

// Neyman: the pixel term is the one-sample variance; the patch priority is the shrinkage of the patch's
// mean pixel variance toward its neighbours' estimate, divided by n².
TEST(Priority, NeymanPatchMathMatchesHandComputedValues) {
  const Vec3 old_sum{1.f, 2.f, 3.f};
  const Vec3 sum{3.f, 4.f, 5.f};
  const Vec3 sum_sq{3.f, 5.f, 7.f};
  const float var = (0.1875f + 0.25f + 0.1875f) * 4.f / 3.f;  // as in TermsMatchHandComputedValues
  EXPECT_FLOAT_EQ(pixel_priority_term(PriorityFunction::Neyman, old_sum, 2, sum, sum_sq, 4), var);
  EXPECT_EQ(pixel_priority_term(PriorityFunction::Neyman, old_sum, 0, sum, sum_sq, 1), 0.f);
  // Own estimate 0.5 per pixel (16 pixels), 4 spp, neighbour prior 2: (4·0.5 + 4·2) / 8 = 1.25, / 16.
  EXPECT_FLOAT_EQ(neyman_variance(0.5f, 4, 2.f), 1.25f);
  EXPECT_FLOAT_EQ(patch_priority(PriorityFunction::Neyman, 8.f, 16, 4, 512, 2.f), 1.25f / 16.f);
  // A partial patch of 6 pixels is ranked by its mean pixel variance, as the bound weighs it.
  EXPECT_FLOAT_EQ(patch_priority(PriorityFunction::Neyman, 3.f, 6, 4, 512, 2.f), 1.25f / 16.f);
  // The prior's weight decays with the patch's own samples: at 36 spp it is a tenth.
  EXPECT_FLOAT_EQ(neyman_variance(0.f, 36, 10.f), 1.f);
  // A patch that saw only zeros still ranks above zero next to a noisy neighbour, and at zero alone.
  EXPECT_GT(patch_priority(PriorityFunction::Neyman, 0.f, 16, 8, 512, 1.f), 0.f);
  EXPECT_EQ(patch_priority(PriorityFunction::Neyman, 0.f, 16, 8, 512, 0.f), 0.f);
  // Urgent below kNeymanMinSpp (first batch), finished at the target.
  EXPECT_GT(patch_priority(PriorityFunction::Neyman, 0.f, 16, 1, 512), 1e27f);
  EXPECT_GT(patch_priority(PriorityFunction::Neyman, 0.f, 16, 0, 512), patch_priority(PriorityFunction::Neyman, 0.f, 16, 1, 512));
  EXPECT_LT(patch_priority(PriorityFunction::Neyman, 1e6f, 16, 2, 512), 1e27f);
  EXPECT_EQ(patch_priority(PriorityFunction::Neyman, 1.f, 16, 512, 512, 1.f), kFinishedPriority);
  // A neighbour's estimate is recovered from its ranked priority; unranked neighbours give nothing.
  EXPECT_FLOAT_EQ(neyman_neighbour_variance(neyman_rank(3.f, 6), 6, 512), 3.f);
  EXPECT_EQ(neyman_neighbour_variance(kUnsampledPriority, 0, 512), 0.f);
  EXPECT_EQ(neyman_neighbour_variance(1e30f / 2.f, 1, 512), 0.f);
  EXPECT_EQ(neyman_neighbour_variance(kFinishedPriority, 512, 512), 0.f);
  EXPECT_EQ(neyman_neighbour_variance(-6.f, 6, 512), 0.f);  // another function's order (none: −spp)
}

// Neyman on the caustic scene ends every patch at exactly the target, from one batch that does not divide
// it, under the priority order (sequential-priority) and under the parallel CPU waves.
TEST(Priority, NeymanEndsEveryPatchAtTheTarget) {
  Scene scene = load_scene(resolve_scene_path("caustic"));
  scene.width = 40;
  scene.height = 30;  // partial patches at the bottom
  for (const char* strategy : {"sequential-priority", "cpu-waves"}) {
    PatchTaskParams p;
    p.target_spp = 11;
    p.paths_per_pixel = 3;
    p.priority = PriorityFunction::Neyman;
    PatchWorkload w(scene, p, false);
    test::render_mean_image(w, strategy);
    for (uint32_t n : w.film().host_patch_spp()) ASSERT_EQ(n, 11u) << strategy;
    for (uint32_t n : w.film().host_spp()) ASSERT_EQ(n, 11u) << strategy;
    EXPECT_EQ(w.finished_tasks(), w.num_tasks()) << strategy;
  }
}

TEST(Priority, NamesRoundTripAndUnknownNamesAreRejected) {
  for (int i = 0; i < kNumPriorityFunctions; ++i) {
    const auto f = static_cast<PriorityFunction>(i);
    EXPECT_EQ(parse_priority(priority_name(f)), f);
  }
  EXPECT_THROW(parse_priority("brightest"), InputError);
}

// Kerbl 2012 §6.3 / Fig 9 in miniature: at equal samples spent on the room, the adaptive priorities
// reach a lower MSE against a ground truth than no priority. CPU, 64×48, target 64 spp, 25 % of the
// budget, waves of 8 of the 192 patches; the reference is a 1024-spp render with another seed.
TEST(Priority, ConvergenceAndVarianceBeatNoneAtEqualSamples) {
  Scene scene = load_scene(resolve_scene_path("room"));
  scene.width = 64;
  scene.height = 48;
  PatchTaskParams rp;
  rp.target_spp = 1024;
  rp.seed = 999;
  rp.priority = PriorityFunction::None;
  PatchWorkload ref(scene, rp, false);
  const std::vector<float> reference = test::render_mean_image(ref, "cpu-waves");

  auto mse_at_quarter = [&](PriorityFunction f) {
    double total = 0.0;
    for (uint32_t seed = 1; seed <= 2; ++seed) {
      PatchTaskParams p;
      p.target_spp = 64;
      p.seed = seed;
      p.priority = f;
      PatchWorkload w(scene, p, false);
      auto strategy = patch_strategies().find("cpu-waves").make();
      ScheduleSettings s;
      s.wave_size = 8;
      const uint64_t budget = 64ull * 48 * 64 / 4;
      uint64_t spent = 0;
      while (spent < budget) spent += strategy->step(w, std::min<uint64_t>(budget - spent, 8 * 32), s).work;
      EXPECT_LE(spent, budget + 8 * 32);
      total += mse_host(w.film().host_view_synced(), reference.data());
    }
    return total / 2.0;
  };
  const double none = mse_at_quarter(PriorityFunction::None);
  const double convergence = mse_at_quarter(PriorityFunction::Convergence);
  const double variance = mse_at_quarter(PriorityFunction::Variance);
  EXPECT_LT(convergence, 0.75 * none) << "convergence " << convergence << " none " << none;
  EXPECT_LT(variance, 0.75 * none) << "variance " << variance << " none " << none;
}

}  // namespace
}  // namespace mv
