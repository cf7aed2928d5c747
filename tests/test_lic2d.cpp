// lic2d (render/strands/lic2d.h): the midpoint rule keeps a strand on its streamline of a circular flow, the
// LIC image of that flow shows concentric streaks, the step statistics are Fig 3.2's at the paper's size,
// and every strategy agrees with sequential (the CPU ones bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/session/strand_workloads.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "render/strands/lic2d.h"

namespace mv {
namespace {

Lic2dStrands circular(uint32_t side) {
  Lic2dStrands w;
  w.width = w.height = side;
  w.flow = Lic2dFlow::Circular;
  w.validate();
  return w;
}

TEST(Lic2d, IsRegisteredAtThePapersSize) {
  const StrandWorkloadEntry& e = find_strand_workload("lic2d");
  EXPECT_EQ(e.default_width * e.default_height, 572220u);  // Fig 3.2
  EXPECT_EQ(e.strategies.size(), find_strand_workload("mandelbrot").strategies.size());
}

TEST(Lic2d, RefusesBadParameters) {
  EXPECT_THROW(lic2d_workload(1, 10, Side::Host, {}), InputError);
  Lic2dStrands w;
  w.h = 0.f;
  EXPECT_THROW(w.validate(), InputError);
  w = Lic2dStrands{};
  w.steps = 0;
  EXPECT_THROW(w.validate(), InputError);
}

TEST(Lic2d, CircularFlowKeepsStrandsOnTheirCircles) {
  // Midpoint rule on the unit tangent of a circle of radius r: each step moves the radius outward by
  // h⁴/(16 r³) + O(h⁶/r⁵) (expand |x + h·t̂(x_mid)|²), and turns it by ≈ h/r.
  const Lic2dStrands w = circular(121);
  const float c = 60.f;
  int checked = 0;
  for (uint32_t idx = 0; idx < w.num_strands(); ++idx) {
    Lic2dStrands::State s = w.init(idx);
    const float x0 = s.x - c, y0 = s.y - c, r0 = std::hypot(x0, y0);
    if (r0 < 8.f || r0 > 50.f) continue;
    uint32_t steps = 0;
    ASSERT_EQ(run_item(w, idx, s, steps), WorkStatus::Stable);
    ASSERT_EQ(steps, w.steps) << "strand " << idx << " left the field";
    ASSERT_EQ(s.samples, w.steps + 1);
    const float r = std::hypot(s.x - c, s.y - c);
    const double drift = w.steps * std::pow(w.h, 4.0) / (16.0 * r0 * r0 * r0);
    ASSERT_NEAR(r - r0, drift, 0.2 * drift + 2e-4 * r0) << "strand " << idx << " at r0 = " << r0;
    // It went round, anticlockwise in (x, y) with y down the rows, by the arc length steps·h.
    const double turned = std::atan2(x0 * (s.y - c) - y0 * (s.x - c), x0 * (s.x - c) + y0 * (s.y - c));
    ASSERT_NEAR(turned * r0, w.steps * w.h, 0.01 * w.steps * w.h) << "strand " << idx;
    ++checked;
  }
  EXPECT_GT(checked, 7000);
}

TEST(Lic2d, CircularFlowGivesConcentricStreaks) {
  // The LIC value changes little along a streak (tangentially: the neighbours share most samples) and
  // much across streaks (radially: independent noise).
  Lic2dStrands w = circular(161);
  w.h = 1.f;
  w.steps = 30;  // longer streaks than the default 10 · 1.5 pixels, so the pattern is plain
  std::vector<float> v(w.num_strands(), -1.f);
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    Lic2dStrands::State s = w.init(i);
    uint32_t steps = 0;
    run_item(w, i, s, steps);
    if (s.samples) v[i] = s.sum / static_cast<float>(s.samples);
  }
  const float c = 80.f;
  auto at = [&](float x, float y) { return v[static_cast<uint32_t>(std::lround(y)) * w.width + std::lround(x)]; };
  double along = 0, across = 0;
  int n = 0;
  for (uint32_t j = 0; j < w.height; ++j)
    for (uint32_t i = 0; i < w.width; ++i) {
      const float dx = static_cast<float>(i) - c, dy = static_cast<float>(j) - c, r = std::hypot(dx, dy);
      if (r < 25.f || r > 70.f) continue;
      const float tx = -dy / r, ty = dx / r;  // the flow's direction: the streak runs backwards from here
      const float a = v[j * w.width + i];
      along += std::fabs(a - at(i - 2.f * tx, j - 2.f * ty));
      across += std::fabs(a - at(i + 2.f * dx / r, j + 2.f * dy / r));
      ++n;
    }
  ASSERT_GT(n, 1000);
  EXPECT_LT(along / n, 0.5 * across / n) << "along " << along / n << ", across " << across / n;
}

TEST(Lic2d, StepStatisticsMatchFig32) {
  // The last column and row lie outside the tent-reconstructed texture and take one update. The walls of
  // the cellular flow and the cells' boundaries are streamlines, so a strand leaves early only when it
  // starts on one of them within reach (steps·h) of the domain's edge: the normalised field keeps its
  // speed through the stagnation point where that streamline meets the edge.
  const StrandWorkloadEntry& e = find_strand_workload("lic2d");
  const uint32_t W = e.default_width, H = e.default_height;
  const StrandResult r = e.run("sequential", W, H, StrandRunSettings{}, false);
  ASSERT_EQ(r.steps.size(), static_cast<size_t>(W) * H);
  double sum = 0, sum2 = 0;
  uint32_t early = 0;
  for (uint32_t i = 0; i < r.steps.size(); ++i) {
    const uint32_t x = i % W, y = i / W;
    const bool edge = x == W - 1 || y == H - 1;
    ASSERT_EQ(r.status[i], WorkStatus::Stable);
    if (edge) {
      ASSERT_EQ(r.steps[i], 1u) << "strand " << i;
    } else if (r.steps[i] != 10u) {
      ++early;
      const Lic2dStrands w = lic2d_workload(W, H, Side::Host, {});
      const bool on_streamline_boundary = x == 0 || y == 0 || (x * w.cells_x) % (W - 1) == 0 || (y * w.cells_y) % (H - 1) == 0;
      const uint32_t reach = static_cast<uint32_t>(w.steps * w.h) + 1;
      const bool near_edge = x <= reach || y <= reach || W - 1 - x <= reach || H - 1 - y <= reach;
      EXPECT_TRUE(on_streamline_boundary && near_edge)
          << "strand (" << x << ", " << y << ") left after " << r.steps[i] << " steps";
    }
    sum += r.steps[i];
    sum2 += static_cast<double>(r.steps[i]) * r.steps[i];
  }
  EXPECT_LE(early, 100u);  // measured: 10
  const double mu = sum / r.steps.size(), cv = std::sqrt(sum2 / r.steps.size() - mu * mu) / mu;
  std::printf("[ lic2d %ux%u ] mu %.4f  CV %.4f  strands leaving early %u\n", W, H, mu, cv, early);
  EXPECT_NEAR(mu, 9.975, 0.1 * 9.975);   // Fig 3.2: μ 9.975
  EXPECT_NEAR(cv, 0.048, 0.15 * 0.048);  // CV 0.048
}

TEST(Lic2d, EveryStrategyAgreesWithSequential) {
  const StrandWorkloadEntry& e = find_strand_workload("lic2d");
  constexpr uint32_t kW = 150, kH = 83;
  const StrandResult ref = e.run("sequential", kW, kH, StrandRunSettings{}, true);
  int ran = 0;
  for (const StrategyInfo& info : e.strategies) {
    if (info.needs_gpu() && !gpu_available()) continue;
    const StrandResult r = e.run(info.name, kW, kH, StrandRunSettings{}, true);
    // The CPU strategies run the same host code: identical step counts and image bytes.
    EXPECT_EQ(strand_disagreement(ref, r, info.needs_gpu() ? e.tolerance : StrandTolerance{}), "") << info.name;
    ++ran;
  }
  EXPECT_GE(ran, gpu_available() ? static_cast<int>(e.strategies.size()) : 2);
}

}  // namespace
}  // namespace mv
