// sched/strand_image.h strand_disagreement: exact agreement for mandelbrot, the stated tolerance for the
// volume renderers (steps within 2 for ≥ 99.5 % identical strands, colours within 2e-3 for ≥ 99.5 % of
// pixels and 0.1 everywhere).
#include <gtest/gtest.h>

#include "sched/strand_image.h"

namespace mv {
namespace {

StrandResult make(size_t n) {
  StrandResult r;
  r.width = static_cast<uint32_t>(n);
  r.height = 1;
  r.steps.assign(n, 10);
  r.status.assign(n, WorkStatus::Stable);
  r.rgba.assign(4 * n, 0.5f);
  return r;
}

TEST(StrandTolerance, ExactNeedsIdenticalStepsAndImageBytes) {
  const StrandTolerance exact;
  const StrandResult a = make(1000);
  StrandResult b = a;
  EXPECT_EQ(strand_disagreement(a, b, exact), "");
  b.steps[3] = 11;
  EXPECT_NE(strand_disagreement(a, b, exact), "");
  b = a;
  b.rgba[7] = 0.5000001f;
  EXPECT_EQ(strand_disagreement(a, b, exact), "image differs");
  b = a;
  b.status[0] = WorkStatus::Dead;
  EXPECT_NE(strand_disagreement(a, b, exact), "");
}

TEST(StrandTolerance, VolumeToleranceAcceptsRareSmallDifferencesOnly) {
  StrandTolerance t;
  t.exact = false;
  const StrandResult a = make(1000);
  StrandResult b = a;
  for (int i = 0; i < 5; ++i) b.steps[i * 100] += 2;  // 0.5 % differ, by 2
  for (int i = 0; i < 5; ++i) b.rgba[4 * i * 100] += 0.05f;
  EXPECT_EQ(strand_disagreement(a, b, t), "");
  StrandResult c = b;
  c.steps[1] += 3;  // a difference of 3
  EXPECT_NE(strand_disagreement(a, c, t), "");
  c = b;
  c.steps[1] += 1;  // 0.6 % differ
  EXPECT_NE(strand_disagreement(a, c, t), "");
  c = b;
  c.rgba[4 * 7 + 1] += 0.2f;  // one pixel beyond 0.1
  EXPECT_NE(strand_disagreement(a, c, t), "");
  c = b;
  for (int i = 0; i < 6; ++i) c.rgba[4 * (i * 100 + 1)] += 0.01f;  // 1.1 % of pixels beyond 2e-3
  EXPECT_NE(strand_disagreement(a, c, t), "");
}

}  // namespace
}  // namespace mv
