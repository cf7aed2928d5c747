// Strand views (item 5: orbit/zoom for the volumes, pan/zoom for the mandelbrot): the default view
// is today's bit for bit, a changed view changes the run, bad views are refused naming the field, and the
// viewer's drag and wheel arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/session/strand_view_params.h"
#include "app/session/strand_workloads.h"
#include "app/session/volume_strand_workloads.h"
#include "base/errors.h"
#include "sched/strand_stats.h"
#include "strand_test_workloads.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

const StrandRunSettings kSettings{};

TEST(StrandViewParams, DefaultMandelbrotViewIsTodaysRegionBitForBit) {
  // The bench's size: the same four floats as MandelbrotParams' defaults, so its μ 284.559 / CV 2.3615 stay.
  const MandelbrotParams today;
  const MandelbrotStrands bench = mandelbrot_workload(2000, 2000);
  EXPECT_EQ(bench.p.x0, today.x0);
  EXPECT_EQ(bench.p.x1, today.x1);
  EXPECT_EQ(bench.p.y0, today.y0);
  EXPECT_EQ(bench.p.y1, today.y1);
  EXPECT_EQ(bench.p.max_iterations, today.max_iterations);

  // A small square run through the registry, with and without the view, against today's parameters.
  MandelbrotParams p;
  p.width = p.height = 64;
  const StrandResult old = test::run_mandelbrot(MandelbrotStrands{p}, "sequential");
  const StrandWorkloadEntry& w = find_strand_workload("mandelbrot");
  const StrandResult plain = w.run("sequential", 64, 64, kSettings, true);
  const StrandResult viewed = w.run("sequential", 64, 64, kSettings, true, StrandViewParams{});
  EXPECT_EQ(plain.steps, old.steps);
  EXPECT_EQ(plain.checksum(), old.checksum());
  EXPECT_EQ(viewed.steps, old.steps);
  EXPECT_EQ(viewed.checksum(), old.checksum());
}

TEST(StrandViewParams, MandelbrotKeepsPixelsSquare) {
  StrandViewParams v;
  v.center_x = 0.25;
  v.center_y = -0.5;
  v.half_height = 0.5;
  const MandelbrotStrands m = mandelbrot_workload(300, 100, Side::Host, v);
  EXPECT_FLOAT_EQ(m.p.x0, 0.25f - 1.5f);
  EXPECT_FLOAT_EQ(m.p.x1, 0.25f + 1.5f);
  EXPECT_FLOAT_EQ(m.p.y0, -1.f);
  EXPECT_FLOAT_EQ(m.p.y1, 0.f);
  EXPECT_FLOAT_EQ((m.p.x1 - m.p.x0) / 300.f, (m.p.y1 - m.p.y0) / 100.f);
}

TEST(StrandViewParams, ZoomingIntoTheBoundaryTakesMoreSteps) {
  const StrandWorkloadEntry& w = find_strand_workload("mandelbrot");
  const StrandResult def = w.run("sequential", 48, 48, kSettings, false);
  StrandViewParams v;
  v.center_x = 0.25;  // e^{iθ}/2 − e^{2iθ}/4 at θ = π/2: a point of the main cardioid's boundary
  v.center_y = 0.5;
  v.half_height = 0.01;
  const StrandResult zoom = w.run("sequential", 48, 48, kSettings, false, v);
  const double mu_def = step_statistics(def.steps).mean, mu_zoom = step_statistics(zoom.steps).mean;
  EXPECT_GT(mu_zoom, 1.5 * mu_def) << "default mu " << mu_def << ", zoomed mu " << mu_zoom;
}

TEST(StrandViewParams, DefaultVolumeViewIsTodaysCameraAndAnOrbitChangesTheImage) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const StrandWorkloadEntry& w = find_strand_workload("vr-lite-cam");
  const StrandResult plain = w.run("sequential", 46, 36, kSettings, true);
  const StrandResult viewed = w.run("sequential", 46, 36, kSettings, true, StrandViewParams{});
  EXPECT_EQ(viewed.steps, plain.steps);
  EXPECT_EQ(viewed.checksum(), plain.checksum());
  // Today's workload: ch2_camera(), built by hand.
  VrLiteCamParams p;
  p.width = 46, p.height = 36;
  const auto today = test::run_all_cpu(make_vr_lite_cam(shared_volume_view("ch2", Side::Host), p));
  EXPECT_EQ(plain.steps, today.steps);
  const PinholeCamera c = ch2_view_camera(shared_volume_view("ch2", Side::Host), StrandViewParams{});
  const PinholeCamera d = ch2_camera();
  EXPECT_EQ(c.eye.x, d.eye.x);
  EXPECT_EQ(c.eye.y, d.eye.y);
  EXPECT_EQ(c.eye.z, d.eye.z);

  StrandViewParams v;
  v.azimuth_deg += 90.f;  // from the subject's right-front to its back-right
  const StrandResult turned = w.run("sequential", 46, 36, kSettings, true, v);
  EXPECT_NE(turned.checksum(), plain.checksum());
  EXPECT_NE(turned.steps, plain.steps);
  // Closer: the head fills more of the image, so more rays stop in it instead of running on to the far
  // plane (rays march from the near to the far plane, render/strands/volume_ray.h), and the mean falls.
  StrandViewParams near;
  near.distance = 0.6f * kCh2Distance;
  const StrandResult closer = w.run("sequential", 46, 36, kSettings, false, near);
  EXPECT_LT(step_statistics(closer.steps).mean, step_statistics(plain.steps).mean);
}

TEST(StrandViewParams, BadViewsAreRefusedNamingTheField) {
  const auto expect_field = [](const StrandWorkloadEntry& w, StrandViewParams v, const std::string& field) {
    try {
      w.run("sequential", 8, 8, kSettings, false, v);
      ADD_FAILURE() << field << ": accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "view") << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find("must be a finite number in ["), std::string::npos) << e.what();
    }
  };
  const StrandWorkloadEntry& m = find_strand_workload("mandelbrot");
  StrandViewParams v;
  v.half_height = 0.0;
  expect_field(m, v, "--half-height");
  v = {};
  v.half_height = -1.0;
  expect_field(m, v, "--half-height");
  v = {};
  v.center_x = NAN;
  expect_field(m, v, "--center-x");
  v = {};
  v.center_y = INFINITY;
  expect_field(m, v, "--center-y");
  v = {};
  v.distance = 0.f;
  expect_field(m, v, "--distance");  // every workload checks the whole view
  v = {};
  v.distance = -5.f;
  expect_field(m, v, "--distance");
  v = {};
  v.elevation_deg = 90.f;
  expect_field(m, v, "--elevation");
  v = {};
  v.azimuth_deg = NAN;
  expect_field(m, v, "--azimuth");
  EXPECT_THROW(mandelbrot_workload(8, 8, Side::Host, v), InputError);
}

TEST(StrandViewParams, DragOrbitsOrPansAndTheWheelZooms) {
  const StrandViewParams d;
  // Orbit: a drag across the image height turns 180°; elevation stops at ±89.
  StrandViewParams o = strand_view_drag(StrandViewKind::Orbit, d, -50.f, 0.f, 100.f);
  EXPECT_FLOAT_EQ(o.azimuth_deg, d.azimuth_deg + 90.f);
  EXPECT_FLOAT_EQ(o.elevation_deg, d.elevation_deg);
  o = strand_view_drag(StrandViewKind::Orbit, d, 0.f, 1000.f, 100.f);
  EXPECT_EQ(o.elevation_deg, 89.f);
  o = strand_view_drag(StrandViewKind::Orbit, d, 0.f, -1000.f, 100.f);
  EXPECT_EQ(o.elevation_deg, -89.f);
  EXPECT_NO_THROW(o.validate());
  EXPECT_EQ(o.center_x, d.center_x);  // the orbit leaves the plane alone
  // Plane: the grabbed point follows the cursor (a drag of the image height moves 2·half_height).
  StrandViewParams p = strand_view_drag(StrandViewKind::Plane, d, 100.f, 50.f, 100.f);
  EXPECT_DOUBLE_EQ(p.center_x, d.center_x - 2.0 * d.half_height);
  EXPECT_DOUBLE_EQ(p.center_y, d.center_y + d.half_height);
  EXPECT_EQ(p.azimuth_deg, d.azimuth_deg);
  // Wheel: ×0.9 per step; the plane keeps the point under the cursor in place.
  o = strand_view_zoom(StrandViewKind::Orbit, d, 2.f, 10.f, 10.f, 100.f);
  EXPECT_NEAR(o.distance, d.distance * 0.81f, 1e-3f);
  p = strand_view_zoom(StrandViewKind::Plane, d, 3.f, 30.f, -20.f, 100.f);
  EXPECT_NEAR(p.half_height, d.half_height * 0.729, 1e-12);
  const auto under = [](const StrandViewParams& v, double ox, double oy) {
    return std::pair<double, double>{v.center_x + ox * 2.0 * v.half_height / 100.0,
                                     v.center_y - oy * 2.0 * v.half_height / 100.0};
  };
  EXPECT_NEAR(under(p, 30, -20).first, under(d, 30, -20).first, 1e-12);
  EXPECT_NEAR(under(p, 30, -20).second, under(d, 30, -20).second, 1e-12);
  EXPECT_NO_THROW(strand_view_zoom(StrandViewKind::Plane, d, -1000.f, 0.f, 0.f, 100.f).validate());
  EXPECT_NO_THROW(strand_view_zoom(StrandViewKind::Orbit, d, 1000.f, 0.f, 0.f, 100.f).validate());
  EXPECT_EQ(find_strand_workload("mandelbrot").view_kind, StrandViewKind::Plane);
  EXPECT_EQ(find_strand_workload("vr-lite-cam").view_kind, StrandViewKind::Orbit);
  EXPECT_EQ(find_strand_workload("illust-vr").view_kind, StrandViewKind::Orbit);
  EXPECT_EQ(find_strand_workload("path-tracer").view_kind, StrandViewKind::Fixed);
}

// A fixed view (path-tracer: the scene's camera) has nothing for the mouse to change.
TEST(StrandViewParams, AFixedViewIgnoresDragAndWheel) {
  StrandViewParams v;
  v.center_x = 0.25;
  v.azimuth_deg = 70.f;
  EXPECT_EQ(strand_view_drag(StrandViewKind::Fixed, v, 40.f, -30.f, 100.f), v);
  EXPECT_EQ(strand_view_zoom(StrandViewKind::Fixed, v, 3.f, 10.f, 5.f, 100.f), v);
  EXPECT_EQ(strand_view_text(StrandViewKind::Fixed, v), "fixed (the scene's camera)");
}

}  // namespace
}  // namespace mv
