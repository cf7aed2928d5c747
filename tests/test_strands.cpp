// Strand concept and the mandelbrot workload.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "render/strands/mandelbrot.h"

namespace mv {
namespace {

// Step statistics of Lehmann 2023 Fig 3.2 (μ 284.571, CV 2.388), on every 5th strand of each 5th row of
// the 2000² grid (160,000 strands: fast enough for CI; the full grid gives μ 284.56, CV 2.361).
TEST(Mandelbrot, StepStatisticsAreCloseToThePapers) {
  const MandelbrotStrands w{};
  double s = 0.0, s2 = 0.0;
  uint64_t count = 0;
  for (uint32_t j = 2; j < w.p.height; j += 5) {
    for (uint32_t i = 2; i < w.p.width; i += 5) {
      MandelbrotStrands::State st;
      uint32_t steps = 0;
      const WorkStatus status = run_item(w, j * w.p.width + i, st, steps);
      ASSERT_EQ(status, WorkStatus::Stable);
      ASSERT_GE(steps, 1u);
      ASSERT_LE(steps, w.p.max_iterations);
      s += steps;
      s2 += static_cast<double>(steps) * steps;
      ++count;
    }
  }
  const double mu = s / count, sigma = std::sqrt(s2 / count - mu * mu);
  EXPECT_NEAR(mu, 284.571, 0.04 * 284.571) << "sigma " << sigma;
  EXPECT_NEAR(sigma / mu, 2.388, 0.05 * 2.388) << "mu " << mu;
}

TEST(Mandelbrot, KnownPointsEscapeOrStayAsTheoryPredicts) {
  MandelbrotParams p;
  p.width = p.height = 2;
  p.x0 = -2.f;
  p.x1 = 2.f;
  p.y0 = -2.f;
  p.y1 = 2.f;  // pixel centres at (±1, ±1)
  p.max_iterations = 50;
  const MandelbrotStrands w{p};
  for (uint32_t k = 0; k < 4; ++k) {
    MandelbrotStrands::State st;
    uint32_t steps = 0;
    run_item(w, k, st, steps);
    // c = ±1 ± i: z1 = c with |c|² = 2, z2 = c² + c with |z2|² = 2·|c+1|²… all four escape at step 2 or 3.
    EXPECT_LT(steps, 4u) << "strand " << k;
    EXPECT_GT(st.zx * st.zx + st.zy * st.zy, 4.f);
  }
  // c = 0 (the centre of a 1-pixel view around the origin) never escapes: it runs to the cap.
  MandelbrotParams q;
  q.width = q.height = 1;
  q.x0 = q.y0 = -0.5f;
  q.x1 = q.y1 = 0.5f;
  q.max_iterations = 77;
  MandelbrotStrands::State st;
  uint32_t steps = 0;
  EXPECT_EQ(run_item(MandelbrotStrands{q}, 0, st, steps), WorkStatus::Stable);
  EXPECT_EQ(steps, 77u);
  EXPECT_EQ(MandelbrotStrands{q}.color(st, WorkStatus::Stable).x, 0.f);  // inside is black
}

TEST(Strands, RunStrandStopsAtTheStepBound) {
  MandelbrotParams q;
  q.width = q.height = 1;
  q.x0 = q.y0 = -0.5f;
  q.x1 = q.y1 = 0.5f;
  q.max_iterations = 1000;
  MandelbrotStrands::State st;
  uint32_t steps = 0;
  EXPECT_EQ(run_item(MandelbrotStrands{q}, 0, st, steps, 10), WorkStatus::Active);
  EXPECT_EQ(steps, 10u);
}

}  // namespace
}  // namespace mv
