// Volume strand workloads: transfer functions (render/strands/transfer_function.h), the ray
// camera and clipping (volume_ray.h), vr-lite-cam and illust-vr on an analytic sphere and on ch2, the
// device volume's checks that need no GPU, the volume pre-filter, and `megaview strands`. The GPU run of
// the same workloads is tests/test_volume_strands_gpu.cu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

#include "app/session/image_io.h"
#include "app/session/volume_strand_workloads.h"
#include "base/errors.h"
#include "render/field/device_volume.h"
#include "render/field/volume_filter.h"
#include "render/field/volume_io.h"
#include "render/gpu.h"
#include "test_support.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

using test::expect_input_error;
using test::kEyeDistance;
using test::kSphereRadius;

float max_abs_diff(Vec3 a, Vec3 b) { return fmaxf(fabsf(a.x - b.x), fmaxf(fabsf(a.y - b.y), fabsf(a.z - b.z))); }

// ---------------------------------------------------------------------------------------------------
// 1D transfer function

TEST(TransferFunction1D, ValidationNamesTheFieldAndTheRange) {
  TransferFunction1D tf;
  tf.points = {{0.f, Vec3{1.f}, 0.f}};
  expect_input_error([&] { tf.validate("vr-lite-cam"); }, "vr-lite-cam", "tf.points", {"1 control points", "2 to 64"});
  tf.points = {{0.f, Vec3{1.f}, 0.f}, {1.f, Vec3{1.f}, 1.5f}};
  expect_input_error([&] { tf.validate("vr-lite-cam"); }, "vr-lite-cam", "tf.points[1].opacity",
                     {"1.5 is out of range [0, 1]"});
  tf.points = {{0.f, Vec3{1.f}, 0.f}, {1.f, {0.5f, -0.1f, 0.f}, 1.f}};
  expect_input_error([&] { tf.validate("x"); }, "x", "tf.points[1].color.g", {"-0.1 is out of range [0, 1]"});
  tf.points = {{0.f, Vec3{1.f}, 0.f}, {2.f, Vec3{1.f}, 1.f}, {2.f, Vec3{1.f}, 1.f}};
  expect_input_error([&] { tf.validate("x"); }, "x", "tf.points[2].value", {"increase strictly", "previous point 2"});
  tf.points = {{NAN, Vec3{1.f}, 0.f}, {2.f, Vec3{1.f}, 1.f}};
  expect_input_error([&] { tf.validate("x"); }, "x", "tf.points[0].value", {"not a finite"});
  tf.points = {{0.f, Vec3{1.f}, 0.f}, {2.f, Vec3{1.f}, 1.f}};
  expect_input_error([&] { sample_tf1d(tf, 0.f, "x"); }, "x", "step_voxels", {"out of range (0, 1000]"});
  EXPECT_NO_THROW(ch2_vr_lite_tf().validate("ch2"));
  EXPECT_NO_THROW(ch2_illust_tf().validate("ch2"));
}

TEST(TransferFunction1D, PresetsAreTheirAssetFilesAndFilesLoadThePoints) {
  // The presets are embedded copies of assets/tf-ch2-*.json: the same points as the files in the tree.
  for (const auto& [preset, file] : {std::pair{ch2_vr_lite_tf(), "tf-ch2-vr-lite.json"}, {ch2_illust_tf(), "tf-ch2-illust.json"}}) {
    const TransferFunction1D on_disk = load_tf1d(std::string(MV_SOURCE_DIR) + "/assets/" + file);
    ASSERT_EQ(preset.points.size(), on_disk.points.size()) << file;
    for (size_t i = 0; i < preset.points.size(); ++i) {
      EXPECT_EQ(preset.points[i].value, on_disk.points[i].value) << file << " " << i;
      EXPECT_EQ(preset.points[i].opacity, on_disk.points[i].opacity) << file << " " << i;
      EXPECT_EQ(max_abs_diff(preset.points[i].color, on_disk.points[i].color), 0.f) << file << " " << i;
    }
  }
  // vr-lite-cam's map, point by point (the values the ray caster's images were measured with).
  const TransferFunction1D vr = ch2_vr_lite_tf();
  ASSERT_EQ(vr.points.size(), 6u);
  const float values[] = {0.f, 35.f, 60.f, 95.f, 130.f, 255.f}, opacities[] = {0.f, 0.f, 0.04f, 0.25f, 0.8f, 1.f};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(vr.points[i].value, values[i]);
    EXPECT_EQ(vr.points[i].opacity, opacities[i]);
  }
  EXPECT_EQ(max_abs_diff(vr.points[2].color, Vec3{0.85f, 0.55f, 0.4f}), 0.f);
  EXPECT_EQ(ch2_illust_tf().points.size(), 4u);
  EXPECT_EQ(ch2_illust_tf().points[2].opacity, 0.5f);
  // A file of the same format, read back.
  const TransferFunction1D two = parse_tf1d(
      R"({"about": "a ramp", "points": [{"value": -1, "color": [0, 0.5, 1], "opacity": 0},
                                        {"value": 2.5, "color": [1, 1, 1], "opacity": 0.75}]})",
      "ramp.json");
  ASSERT_EQ(two.points.size(), 2u);
  EXPECT_EQ(two.points[0].value, -1.f);
  EXPECT_EQ(two.points[0].color.y, 0.5f);
  EXPECT_EQ(two.points[1].opacity, 0.75f);
  expect_input_error([] { parse_tf1d(R"({"points": [], "extra": 1})", "f.json"); }, "f.json", "tf.extra",
                     {"unknown field (allowed: points, about)"});
  expect_input_error([] { parse_tf1d(R"({"points": [{"value": "0", "color": [0, 0, 0], "opacity": 0}]})", "f.json"); },
                     "f.json", "tf.points[0].value", {"expected a number, got string"});
}

TEST(TransferFunction1D, TableFollowsThePiecewiseLinearMapAndClampsOutside) {
  const TransferFunction1D tf = ch2_vr_lite_tf();
  const Tf1DTable t = sample_tf1d(tf, 1.f, "ch2");  // step of one voxel: opacities as given
  // Between table nodes the table interpolates linearly; near a control point it cuts the corner by at
  // most half a node spacing times the slope change.
  const float node = 255.f / (kTf1DEntries - 1);
  float worst = 0.f;
  for (int i = 0; i <= 2550; ++i) {
    const float v = i * 0.1f;
    const Rgba a = t.lookup(v), b = tf.eval(v);
    worst = fmaxf(worst, fmaxf(fabsf(a.a - b.a), max_abs_diff(a.rgb(), b.rgb())));
  }
  EXPECT_LT(worst, 0.5f * node * (0.55f / 35.f + 0.04f / 25.f) + 1e-3f);  // steepest slopes: 0→35 colour, 35→60 α
  // Exact at the nodes, clamped outside.
  for (int j = 0; j < kTf1DEntries; j += 7) {
    const float v = node * j;
    EXPECT_NEAR(t.lookup(v).a, tf.eval(v).a, 1e-5f) << v;
  }
  EXPECT_EQ(t.lookup(-100.f).a, tf.eval(0.f).a);
  EXPECT_NEAR(t.lookup(1e6f).r, 1.f, 1e-6f);
  EXPECT_NEAR(t.lookup(1e6f).a, 1.f, 1e-6f);
  EXPECT_EQ(t.lookup(NAN).a, t.node[0].a);
}

TEST(TransferFunction1D, OpacityIsCorrectedForTheStep) {
  TransferFunction1D tf;
  tf.points = {{0.f, Vec3{1.f}, 0.84f}, {1.f, Vec3{1.f}, 0.84f}};
  EXPECT_NEAR(sample_tf1d(tf, 1.f, "x").lookup(0.5f).a, 0.84f, 1e-6f);
  EXPECT_NEAR(sample_tf1d(tf, 0.5f, "x").lookup(0.5f).a, 0.6f, 1e-6f);  // 1 − 0.16^½
  EXPECT_NEAR(sample_tf1d(tf, 2.f, "x").lookup(0.5f).a, 1.f - 0.16f * 0.16f, 1e-6f);
  // Two half steps through the corrected opacity leave what one full step leaves.
  const float a = sample_tf1d(tf, 0.5f, "x").lookup(0.5f).a;
  EXPECT_NEAR((1.f - a) * (1.f - a), 0.16f, 1e-6f);
}

// ---------------------------------------------------------------------------------------------------
// 2D curvature transfer function

TEST(CurvatureTransferFunction, ClassifiesTheSurfaceTypes) {
  const float k = 0.1f, flat = 0.01f;
  EXPECT_EQ(classify_curvature(k, k, flat), CurvatureClass::EllipticConvex);
  EXPECT_EQ(classify_curvature(k, 0.5f * k, flat), CurvatureClass::EllipticConvex);
  EXPECT_EQ(classify_curvature(-0.5f * k, -k, flat), CurvatureClass::EllipticConcave);
  EXPECT_EQ(classify_curvature(k, -k, flat), CurvatureClass::Hyperbolic);
  EXPECT_EQ(classify_curvature(k, 0.f, flat), CurvatureClass::CylindricalConvex);
  EXPECT_EQ(classify_curvature(0.f, -k, flat), CurvatureClass::CylindricalConcave);
  EXPECT_EQ(classify_curvature(0.001f, -0.002f, flat), CurvatureClass::Flat);
  EXPECT_NEAR(shape_index(k, k), 1.f, 1e-6f);
  EXPECT_NEAR(shape_index(-k, -k), -1.f, 1e-6f);
  EXPECT_NEAR(shape_index(k, -k), 0.f, 1e-6f);
  EXPECT_NEAR(shape_index(k, 0.f), 0.5f, 1e-6f);
  EXPECT_STREQ(curvature_class_name(CurvatureClass::Hyperbolic), "hyperbolic");
}

TEST(CurvatureTransferFunction, TableReproducesTheClassColours) {
  const CurvatureColors c;  // defaults
  const CurvatureTfTable t = sample_curvature_tf(c, "illust-vr");
  const float big = c.kappa_max;  // saturated (curvedness ≥ saturation·κmax)
  EXPECT_LT(max_abs_diff(t.lookup(big, big), c.convex), 1.5f / 255.f);
  EXPECT_LT(max_abs_diff(t.lookup(-big, -big), c.concave), 1.5f / 255.f);
  EXPECT_LT(max_abs_diff(t.lookup(big, -big), c.saddle), 1.5f / 255.f);
  EXPECT_LT(max_abs_diff(t.lookup(big, 0.f), c.ridge), 1.5f / 255.f);
  EXPECT_LT(max_abs_diff(t.lookup(0.f, -big), c.valley), 1.5f / 255.f);
  EXPECT_LT(max_abs_diff(t.lookup(0.f, 0.f), c.flat), 1.5f / 255.f);
  // Clamped beyond the range.
  EXPECT_LT(max_abs_diff(t.lookup(100.f, 100.f), c.convex), 1.5f / 255.f);
  // Between nodes the table stays close to the function it samples.
  float worst = 0.f;
  for (float a = -0.29f; a < 0.3f; a += 0.013f)
    for (float b = -0.29f; b <= a; b += 0.011f) worst = fmaxf(worst, max_abs_diff(t.lookup(a, b), c.eval(a, b)));
  EXPECT_LT(worst, 0.2f);
}

TEST(CurvatureTransferFunction, ValidationNamesTheField) {
  CurvatureColors c;
  c.kappa_max = 0.f;
  expect_input_error([&] { c.validate("illust-vr"); }, "illust-vr", "curvature.kappa_max", {"0 is out of range (0, 1e6]"});
  c = CurvatureColors{};
  c.ridge = {1.f, 2.f, 0.f};
  expect_input_error([&] { sample_curvature_tf(c, "illust-vr"); }, "illust-vr", "curvature.ridge.g", {"2 is out of range [0, 1]"});
  c = CurvatureColors{};
  c.saturation = 1.5f;
  expect_input_error([&] { c.validate("illust-vr"); }, "illust-vr", "curvature.saturation", {"(0, 1]"});
}

// ---------------------------------------------------------------------------------------------------
// camera, clipping

TEST(VolumeRay, CameraValidation) {
  PinholeCamera c = test::axis_camera();
  EXPECT_NO_THROW(make_ray_camera(c, 10, 10, "t"));
  c.look_at = c.eye;
  expect_input_error([&] { make_ray_camera(c, 10, 10, "t"); }, "t", "camera.look_at", {"equals the eye"});
  c = test::axis_camera();
  c.up = {0.f, 0.f, 1.f};
  expect_input_error([&] { make_ray_camera(c, 10, 10, "t"); }, "t", "camera.up", {"parallel"});
  c = test::axis_camera();
  c.fov_deg = 180.f;
  expect_input_error([&] { make_ray_camera(c, 10, 10, "t"); }, "t", "camera.fov_deg", {"180 is out of range (0, 180)"});
  c = test::axis_camera();
  c.eye.x = INFINITY;
  expect_input_error([&] { make_ray_camera(c, 10, 10, "t"); }, "t", "camera.eye", {"finite"});
  expect_input_error([&] { make_ray_camera(test::axis_camera(), 0, 10, "t"); }, "t", "size", {"[1, 16384]"});
}

TEST(VolumeRay, PixelRaysAreCentredAndMirrorSymmetric) {
  const RayCamera cam = make_ray_camera(test::axis_camera(30.f), 33, 21, "t");
  // Odd sizes: the centre pixel looks straight ahead.
  const Vec3 d = cam.ray_dir(16, 10);
  EXPECT_EQ(d.x, 0.f);
  EXPECT_EQ(d.y, 0.f);
  EXPECT_EQ(d.z, 1.f);
  // Top row looks up, the image's right (u = w × up = −x here) to the right; the vertical half angle is
  // fov/2 at the image's edge (half a pixel beyond the outermost pixel centre).
  EXPECT_GT(cam.ray_dir(16, 0).y, 0.f);
  EXPECT_LT(cam.ray_dir(32, 10).x, 0.f);
  const Vec3 top = cam.ray_dir(16, 0);
  EXPECT_NEAR(top.y / top.z, std::tan(15.0 * M_PI / 180.0) * 20.0 / 21.0, 1e-6);
  for (uint32_t j = 0; j < 21; ++j)
    for (uint32_t i = 0; i < 33; ++i) {
      const Vec3 a = cam.ray_dir(i, j), b = cam.ray_dir(32 - i, j), c = cam.ray_dir(i, 20 - j);
      ASSERT_EQ(a.x, -b.x);
      ASSERT_EQ(a.y, b.y);
      ASSERT_EQ(a.y, -c.y);
      ASSERT_NEAR(length(a), 1.f, 1e-6f);
    }
}

TEST(VolumeRay, ClipsToTheFieldBox) {
  const Volume v = test::sphere_volume();
  const VolumeView view = make_view(v);
  const IndexBox box = field_box(view, KernelKind::Ctmr);  // index [1, 31]: world [−15, 15]
  EXPECT_EQ(box.lo.x, 1.f);
  EXPECT_EQ(box.hi.z, 31.f);
  float tn = 0, tf = 0;
  ASSERT_TRUE(clip_ray(view, box, {0.f, 0.f, -kEyeDistance}, {0.f, 0.f, 1.f}, tn, tf));
  EXPECT_EQ(tn, 85.f);
  EXPECT_EQ(tf, 115.f);
  // Diagonal through the centre: the box corner at (15, 15, 15)·… .
  const Vec3 dia = normalize(Vec3{1.f, 1.f, 1.f});
  ASSERT_TRUE(clip_ray(view, box, dia * -50.f, dia, tn, tf));
  EXPECT_NEAR(tn, 50.f - 15.f * std::sqrt(3.f), 1e-4f);
  EXPECT_NEAR(tf, 50.f + 15.f * std::sqrt(3.f), 1e-4f);
  // Missing (parallel outside, passing beside), behind the eye, and starting inside.
  EXPECT_FALSE(clip_ray(view, box, {20.f, 0.f, -kEyeDistance}, {0.f, 0.f, 1.f}, tn, tf));
  EXPECT_FALSE(clip_ray(view, box, {0.f, 0.f, -kEyeDistance}, normalize(Vec3{1.f, 0.f, 1.f}), tn, tf));
  EXPECT_FALSE(clip_ray(view, box, {0.f, 0.f, -kEyeDistance}, {0.f, 0.f, -1.f}, tn, tf));
  ASSERT_TRUE(clip_ray(view, box, {0.f, 0.f, 5.f}, {0.f, 0.f, 1.f}, tn, tf));
  EXPECT_EQ(tn, 0.f);
  EXPECT_EQ(tf, 10.f);
}

TEST(VolumeRay, OrbitCameraAndTheCh2Default) {
  // ch2's grid without its samples: 181 × 217 × 181 at 1 mm, origin (−90, −125, −71).
  VolumeView ch2;
  ch2.nx = 181, ch2.ny = 217, ch2.nz = 181;
  ch2.index_to_world.origin = {-90.f, -125.f, -71.f};
  ch2.world_to_index = ch2.index_to_world.inverse();
  const Vec3 c = volume_centre(ch2);
  EXPECT_EQ(c.x, 0.f);
  EXPECT_EQ(c.y, -17.f);
  EXPECT_EQ(c.z, 19.f);
  EXPECT_NEAR(volume_radius(ch2), 0.5f * std::sqrt(180.f * 180.f + 216.f * 216.f + 180.f * 180.f), 1e-3f);
  EXPECT_EQ(min_spacing(ch2), 1.f);
  const PinholeCamera def = ch2_camera();
  const PinholeCamera orb = orbit_camera(ch2, kCh2Azimuth, kCh2Elevation, kCh2Distance, kCh2Fov);
  EXPECT_LT(max_abs_diff(def.eye, orb.eye), 1e-3f);
  EXPECT_LT(max_abs_diff(def.look_at, orb.look_at), 1e-6f);
  EXPECT_EQ(def.fov_deg, orb.fov_deg);
  // Azimuth 0: in front (+y); 90: on the subject's right (+x); elevation lifts the eye.
  const PinholeCamera front = orbit_camera(ch2, 0.f, 0.f, 100.f);
  EXPECT_LT(max_abs_diff(front.eye, c + Vec3{0.f, 100.f, 0.f}), 1e-4f);
  const PinholeCamera right = orbit_camera(ch2, 90.f, 30.f, 100.f);
  EXPECT_NEAR(right.eye.x, 100.f * std::cos(30.0 * M_PI / 180.0), 1e-3f);
  EXPECT_NEAR(right.eye.z - c.z, 50.f, 1e-3f);
  // Distance 0 frames the grid: its bounding sphere fits the vertical field of view.
  const PinholeCamera framed = orbit_camera(ch2, 10.f, 10.f, 0.f, 40.f);
  EXPECT_NEAR(length(framed.eye - c) * std::sin(20.0 * M_PI / 180.0), volume_radius(ch2), 1e-2f);
  expect_input_error([&] { orbit_camera(ch2, 0.f, 90.f, 1.f); }, "camera", "elevation", {"90 is out of range [-89, 89]"});
  expect_input_error([&] { orbit_camera(ch2, NAN, 0.f, 1.f); }, "camera", "azimuth", {"finite"});
}

// ---------------------------------------------------------------------------------------------------
// vr-lite-cam on the sphere

TEST(VrLiteCam, CentralRayStopsWhereItLeavesTheBox) {
  const Volume v = test::sphere_volume();
  VrLiteCamParams p = test::sphere_vr_params();
  TransferFunction1D clear;
  clear.points = {{-4.f, Vec3{1.f}, 0.f}, {4.f, Vec3{1.f}, 0.f}};
  p.tf = clear;
  const VrLiteCam w = make_vr_lite_cam(make_view(v), p);
  EXPECT_EQ(w.num_strands(), 33u * 33u);
  EXPECT_EQ(w.ray.step, 0.5f);
  VrLiteCam::State s;
  uint32_t steps = 0;
  const uint32_t centre = 16 * 33 + 16;
  EXPECT_EQ(run_item(w, centre, s, steps), WorkStatus::Stable);
  // Samples at t = 85, 85.5, …, 115 (z = −15 … 15): (115 − 85)/0.5 + 1.
  EXPECT_EQ(steps, 61u);
  EXPECT_EQ(s.k, 61u);
  EXPECT_EQ(s.alpha, 0.f);
  EXPECT_EQ(w.color(s, WorkStatus::Stable).x, 0.f);
  // Every ray: one sample per half unit of its clipped length; a miss takes one update.
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    run_item(w, i, s, steps);
    float tn, tf;
    if (clip_ray(w.ray.vol, w.ray.box, w.ray.cam.eye, w.ray.cam.ray_dir(i % 33, i / 33), tn, tf))
      ASSERT_EQ(steps, static_cast<uint32_t>(std::floor((tf - tn) / 0.5f)) + 1u) << i;
    else
      ASSERT_EQ(steps, 1u) << i;
  }
}

TEST(VrLiteCam, CentralRayTerminatesEarlyInsideTheSphere) {
  const Volume v = test::sphere_volume();
  const VrLiteCamParams p = test::sphere_vr_params();
  const VrLiteCam w = make_vr_lite_cam(make_view(v), p);
  VrLiteCam::State s;
  uint32_t steps = 0;
  EXPECT_EQ(run_item(w, 16 * 33 + 16, s, steps), WorkStatus::Stable);
  // z = −15 … −8.5 (14 samples) are outside (distance ≥ 0.25): transparent. From z = −8 on each sample
  // has α = 0.6: A = 0.6, 0.84, 0.936, 0.9744 ≥ 0.95 after the 4th → 18 updates.
  EXPECT_EQ(steps, 18u);
  EXPECT_NEAR(s.alpha, 1.f - std::pow(0.4f, 4.f), 1e-5f);
  // Head-on: |n·l| = 1, so every sample is white·(ka + kd) + ks.
  const float lit = p.ka + p.kd + p.ks;
  EXPECT_NEAR(w.color(s, WorkStatus::Stable).x, lit * s.alpha, 1e-3f);
  // A larger threshold needs one more sample; threshold 1 goes on until A rounds to 1 in float.
  VrLiteCamParams q = p;
  q.opacity_threshold = 0.98f;
  run_item(make_vr_lite_cam(make_view(v), q), 16 * 33 + 16, s, steps);
  EXPECT_EQ(steps, 19u);
  q.opacity_threshold = 1.f;
  run_item(make_vr_lite_cam(make_view(v), q), 16 * 33 + 16, s, steps);
  uint32_t inside = 0;
  for (float a = 0.f; a < 1.f; a += (1.f - a) * 0.6f) ++inside;
  EXPECT_EQ(steps, 14u + inside);
  EXPECT_EQ(s.alpha, 1.f);
  EXPECT_LT(steps, 61u);
}

TEST(VrLiteCam, OutsideTheSilhouetteIsBackground) {
  const Volume v = test::sphere_volume();
  VrLiteCamParams p = test::sphere_vr_params();
  p.background = {0.1f, 0.2f, 0.3f};
  const VrLiteCam w = make_vr_lite_cam(make_view(v), p);
  const auto run = test::run_all_cpu(w);
  int outside = 0, inside = 0;
  for (uint32_t j = 0; j < 33; ++j)
    for (uint32_t i = 0; i < 33; ++i) {
      const uint32_t idx = j * 33 + i;
      // Distance of the sphere's centre from the pixel's ray.
      const Vec3 d = w.ray.cam.ray_dir(i, j);
      const float miss = kEyeDistance * std::sqrt(std::fmax(0.f, 1.f - d.z * d.z));
      if (miss > kSphereRadius + 0.5f) {
        ++outside;
        ASSERT_EQ(run.state[idx].alpha, 0.f) << i << "," << j;
        ASSERT_EQ(run.color[idx].x, 0.1f);
        ASSERT_EQ(run.color[idx].z, 0.3f);
      } else if (miss < kSphereRadius - 1.f) {
        ++inside;
        ASSERT_GE(run.state[idx].alpha, p.opacity_threshold) << i << "," << j;
      }
    }
  EXPECT_GT(outside, 200);
  EXPECT_GT(inside, 100);
}

TEST(VrLiteCam, CentredViewGivesASymmetricImage) {
  const Volume v = test::sphere_volume();
  VrLiteCamParams p = test::sphere_vr_params(41);
  // A soft sphere so that colours vary smoothly across the image and across the termination.
  p.tf.points = {{-8.f, {1.f, 0.8f, 0.5f}, 0.3f}, {0.f, {0.5f, 0.6f, 1.f}, 0.05f}, {1.f, Vec3{1.f}, 0.f}};
  const VrLiteCam w = make_vr_lite_cam(make_view(v), p);
  const auto run = test::run_all_cpu(w);
  const uint32_t n = 41;
  float worst = 0.f;
  int step_differences = 0;
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t a = j * n + i;
      for (const uint32_t b : {j * n + (n - 1 - i), (n - 1 - j) * n + i, i * n + j}) {
        worst = fmaxf(worst, max_abs_diff(run.color[a], run.color[b]));
        step_differences += run.steps[a] != run.steps[b];
      }
    }
  EXPECT_LT(worst, 2e-3f);
  EXPECT_EQ(step_differences, 0);
  // …and not trivially: the image has structure.
  EXPECT_GT(max_abs_diff(run.color[20 * n + 20], run.color[20 * n + 12]), 0.05f);
}

TEST(VrLiteCam, ParamsAndVolumeAreValidated) {
  const Volume v = test::sphere_volume();
  const VolumeView view = make_view(v);
  VrLiteCamParams p = test::sphere_vr_params();
  p.step_voxels = 0.f;
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "step_voxels", {"0 is out of range (0, 16]"});
  p = test::sphere_vr_params();
  p.opacity_threshold = 1.5f;
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "opacity_threshold", {"(0, 1]"});
  p = test::sphere_vr_params();
  p.shininess = 0;
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "shininess", {"[1, 1024]"});
  p = test::sphere_vr_params();
  p.width = 0;
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "width", {"0 is out of range [1, 16384]"});
  p = test::sphere_vr_params();
  p.background = {0.f, 0.f, 2.f};
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "background.b");
  p = test::sphere_vr_params();
  p.tf.points[1].opacity = -1.f;
  expect_input_error([&] { make_vr_lite_cam(view, p); }, "vr-lite-cam", "tf.points[1].opacity");
  VolumeView thin = view;
  thin.nz = 3;
  expect_input_error([&] { make_vr_lite_cam(thin, test::sphere_vr_params()); }, "vr-lite-cam", "volume.nz",
                     {"3 samples; kernel ctmr needs at least 4"});
  VolumeView empty = view;
  empty.data = nullptr;
  expect_input_error([&] { make_vr_lite_cam(empty, test::sphere_vr_params()); }, "vr-lite-cam", "volume", {"null"});
  // The defaults are valid (ch2 framing, 460 × 360 strands as in Lehmann 2023 Fig 3.2).
  const VrLiteCamParams d;
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.width * d.height, 165600u);
  EXPECT_EQ(d.kernel, KernelKind::Ctmr);
  EXPECT_TRUE(std::is_trivially_copyable_v<VrLiteCam>);
}

// ---------------------------------------------------------------------------------------------------
// illust-vr on the sphere

TEST(IllustVr, ClassifiesASphereAsEllipticWithCurvatureOneOverR) {
  for (const bool bright : {false, true}) {
    const Volume v = test::sphere_volume(bright);
    IllustVrParams p = test::sphere_illust_params();
    // Dark sphere (distance field): convex in megaview's convention; bright (r − |x|): in Kindlmann's.
    p.convention = bright ? CurvatureConvention::Kindlmann : CurvatureConvention::Megaview;
    p.tf = test::solid_sphere_tf(bright ? -1.f : 1.f);
    const IllustVr w = make_illust_vr(make_view(v), p);
    for (const Vec3 dir : {Vec3{0.f, 0.f, 1.f}, normalize(Vec3{1.f, 2.f, -2.f})}) {
      const Vec3 at = dir * -(kSphereRadius - 0.3f);  // just inside the surface facing the camera: α > 0
      const IllustSample s = w.sample(at, dir);
      ASSERT_GT(s.alpha, 0.f);
      ASSERT_TRUE(s.curv.valid);
      const float rho = length(at);
      EXPECT_NEAR(s.curv.k1, 1.f / rho, 0.03f / rho) << "bright " << bright;
      EXPECT_NEAR(s.curv.k2, 1.f / rho, 0.03f / rho) << "bright " << bright;
      EXPECT_EQ(classify_curvature(s.curv.k1, s.curv.k2, 0.01f), CurvatureClass::EllipticConvex);
    }
    // The other convention sees the same sphere as concave.
    IllustVrParams q = p;
    q.convention = bright ? CurvatureConvention::Megaview : CurvatureConvention::Kindlmann;
    const IllustSample s = make_illust_vr(make_view(v), q).sample({0.f, 0.f, -8.f}, {0.f, 0.f, 1.f});
    EXPECT_EQ(classify_curvature(s.curv.k1, s.curv.k2, 0.01f), CurvatureClass::EllipticConcave);
    EXPECT_NEAR(s.curv.k1, -1.f / 8.f, 0.03f / 8.f);
  }
}

TEST(IllustVr, ImageShowsTheConvexColourAndDarkContoursAtTheSilhouette) {
  const Volume v = test::sphere_volume();
  IllustVrParams p = test::sphere_illust_params();
  p.contour_strength = 0.f;
  const IllustVr plain = make_illust_vr(make_view(v), p);
  p.contour_strength = 1.f;
  p.contour_thickness = 1.5f;
  const IllustVr lined = make_illust_vr(make_view(v), p);
  const auto a = test::run_all_cpu(plain);
  const auto b = test::run_all_cpu(lined);
  // Centre: the ray meets the sphere head on, curvature ≈ (1/r, 1/r) → the table's convex colour, shaded
  // by ka + kd·1 = 1, composited to A ≥ 0.95; no contour (|n·v| = 1).
  const uint32_t centre = 16 * 33 + 16;
  const float rho = kSphereRadius - 0.25f;
  const Vec3 expect = plain.curvature_tf.lookup(1.f / rho, 1.f / rho) * a.state[centre].alpha;
  EXPECT_LT(max_abs_diff(a.color[centre], expect), 0.04f);
  EXPECT_GT(a.color[centre].x, a.color[centre].y);  // convex: red dominates
  EXPECT_GT(a.color[centre].x, a.color[centre].z);
  EXPECT_EQ(b.color[centre].x, a.color[centre].x);
  // Rim pixels (rays passing the centre within [r − 1.5, r − 0.3]) meet the surface at grazing angles:
  // the contour darkens them.
  int rim = 0, darker = 0;
  for (uint32_t i = 0; i < plain.num_strands(); ++i) {
    const Vec3 d = plain.ray.cam.ray_dir(i % 33, i / 33);
    const float miss = kEyeDistance * std::sqrt(std::fmax(0.f, 1.f - d.z * d.z));
    if (miss > kSphereRadius - 1.5f && miss < kSphereRadius - 0.3f) {
      ++rim;
      darker += luminance(b.color[i]) < 0.6f * luminance(a.color[i]);
    }
  }
  EXPECT_GT(rim, 10);
  EXPECT_GE(darker, rim * 9 / 10) << darker << " of " << rim;
}

TEST(IllustVr, ParamsAreValidated) {
  const Volume v = test::sphere_volume();
  IllustVrParams p = test::sphere_illust_params();
  p.kernel = KernelKind::Tent;
  expect_input_error([&] { make_illust_vr(make_view(v), p); }, "illust-vr", "kernel", {"tent has no usable Hessian"});
  p = test::sphere_illust_params();
  p.contour_strength = 2.f;
  expect_input_error([&] { make_illust_vr(make_view(v), p); }, "illust-vr", "contour_strength", {"2 is out of range [0, 1]"});
  p = test::sphere_illust_params();
  p.contour_thickness = -1.f;
  expect_input_error([&] { make_illust_vr(make_view(v), p); }, "illust-vr", "contour_thickness");
  p = test::sphere_illust_params();
  p.curvature.kappa_max = -1.f;
  expect_input_error([&] { make_illust_vr(make_view(v), p); }, "illust-vr", "curvature.kappa_max");
  const IllustVrParams d;
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.width * d.height, 307200u);
  EXPECT_EQ(d.kernel, KernelKind::Bspln3);
}

// ---------------------------------------------------------------------------------------------------
// the ray caster both volume workloads embed (volume_ray.h: VolumeRayCaster, make_volume_ray_caster)

/// Every field of two ray casters equal (the 1D tables byte for byte: floats only, no padding).
void expect_same_caster(const VolumeRayCaster& a, const VolumeRayCaster& b) {
  EXPECT_EQ(a.vol.data, b.vol.data);
  EXPECT_EQ(a.vol.nx, b.vol.nx);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.box.lo[i], b.box.lo[i]);
    EXPECT_EQ(a.box.hi[i], b.box.hi[i]);
    EXPECT_EQ(a.cam.eye[i], b.cam.eye[i]);
    EXPECT_EQ(a.cam.u[i], b.cam.u[i]);
    EXPECT_EQ(a.cam.v[i], b.cam.v[i]);
    EXPECT_EQ(a.cam.w[i], b.cam.w[i]);
    EXPECT_EQ(a.background[i], b.background[i]);
  }
  EXPECT_EQ(a.cam.tan_half, b.cam.tan_half);
  EXPECT_EQ(a.march, b.march);
  EXPECT_EQ(a.z_near, b.z_near);
  EXPECT_EQ(a.z_far, b.z_far);
  EXPECT_EQ(a.cam.width, b.cam.width);
  EXPECT_EQ(a.cam.height, b.cam.height);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.threshold, b.threshold);
  static_assert(sizeof(Tf1DTable) == (2 + 4 * kTf1DEntries) * sizeof(float), "the table holds floats only");
  EXPECT_EQ(std::memcmp(&a.tf, &b.tf, sizeof(Tf1DTable)), 0);
}

TEST(VolumeRayCaster, BothWorkloadsEmbedTheOneMadeFromTheirParams) {
  EXPECT_TRUE(std::is_trivially_copyable_v<VolumeRayCaster>);
  const Volume v = test::sphere_volume();
  const VolumeView view = make_view(v);
  VrLiteCamParams vp = test::sphere_vr_params();
  vp.step_voxels = 0.25f;
  vp.background = {0.1f, 0.2f, 0.3f};
  const VolumeRayCaster vr = make_volume_ray_caster(view, volume_ray_spec(vp, VrLiteCam::kDerivatives), "test");
  expect_same_caster(make_vr_lite_cam(view, vp).ray, vr);
  // What the caster holds: the field box of the kernel, the camera for the size, the step in world units
  // and the 1D table corrected for that step.
  EXPECT_EQ(vr.kernel, KernelKind::Ctmr);
  EXPECT_EQ(vr.box.lo.x, 1.f);   // R − 1 for ctmr's radius 2
  EXPECT_EQ(vr.box.hi.z, 31.f);  // n − R
  EXPECT_EQ(vr.cam.width * vr.cam.height, vp.width * vp.height);
  EXPECT_EQ(vr.num_strands(), vp.width * vp.height);
  EXPECT_EQ(vr.step, 0.25f * min_spacing(view));
  EXPECT_EQ(vr.threshold, vp.opacity_threshold);
  EXPECT_EQ(vr.background.y, 0.2f);
  const Tf1DTable table = sample_tf1d(vp.tf, 0.25f, "test");
  EXPECT_EQ(std::memcmp(&vr.tf, &table, sizeof table), 0);

  IllustVrParams ip = test::sphere_illust_params();
  ip.opacity_threshold = 0.8f;
  const VolumeRayCaster il = make_volume_ray_caster(view, volume_ray_spec(ip, IllustVr::kDerivatives), "test");
  expect_same_caster(make_illust_vr(view, ip).ray, il);
  EXPECT_EQ(il.kernel, KernelKind::Bspln3);
  EXPECT_EQ(il.threshold, 0.8f);
  EXPECT_EQ(il.background.x, ip.background.x);
  // Its strand steps are the workloads' own: the central ray starts where the sphere scene's box begins.
  const RayState s = il.start(16 * 33 + 16);
  EXPECT_FALSE(ray_missed(s));
  EXPECT_NEAR(il.sample_position(s).z, -15.f, 1e-4f);
}

// ---------------------------------------------------------------------------------------------------
// RayMarch::Planes: Diderot's march from the near to the far plane, probes gated by inside(x, F)

TEST(VolumeRayPlanes, EveryRayTakesTheSamplesBetweenThePlanesAtDepthSteps) {
  const Volume v = test::sphere_volume();
  VrLiteCamParams p = test::sphere_vr_params();
  p.march = RayMarch::Planes;
  p.near_depth = -20.f, p.far_depth = 20.f;  // the field box is world z ∈ [−15, 15]
  TransferFunction1D clear;
  clear.points = {{-4.f, Vec3{1.f}, 0.f}, {4.f, Vec3{1.f}, 0.f}};
  p.tf = clear;
  const VrLiteCam w = make_vr_lite_cam(make_view(v), p);
  EXPECT_EQ(w.ray.z_near, 80.f);
  EXPECT_EQ(w.ray.z_far, 120.f);
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    VrLiteCam::State s;
    uint32_t steps = 0;
    ASSERT_EQ(run_item(w, i, s, steps), WorkStatus::Stable);
    ASSERT_EQ(steps, 81u) << i;  // (120 − 80)/0.5 + 1, rays beside the box included: nothing is clipped
    // The last sample lies on the far plane: depth z_far along the view axis, whatever the ray's angle.
    s.k = 80;
    ASSERT_NEAR(dot(w.ray.sample_position(s) - w.ray.cam.eye, w.ray.cam.w), 120.f, 1e-3f) << i;
  }
}

TEST(VolumeRayPlanes, ProbesOnlyInsideTheFieldAndMatchesTheClippedRayThere) {
  const Volume v = test::sphere_volume();
  VrLiteCamParams p = test::sphere_vr_params();
  const VrLiteCam clip = make_vr_lite_cam(make_view(v), p);
  p.march = RayMarch::Planes;
  p.near_depth = -20.f, p.far_depth = 20.f;
  const VrLiteCam planes = make_vr_lite_cam(make_view(v), p);
  const uint32_t centre = 16 * 33 + 16;
  VrLiteCam::State a, b;
  uint32_t sa = 0, sb = 0;
  run_item(clip, centre, a, sa);
  run_item(planes, centre, b, sb);
  // The clipped ray starts at z = −15; the planes' ray at z = −20 takes 10 samples outside first.
  EXPECT_EQ(sa, 18u);
  EXPECT_EQ(sb, 28u);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_LT(max_abs_diff(clip.color(a, WorkStatus::Stable), planes.color(b, WorkStatus::Stable)), 1e-6f);
  // An opacity map that is opaque for every value: a probe outside the field would stop the ray at once.
  TransferFunction1D opaque;
  opaque.points = {{-40.f, Vec3{1.f}, 0.84f}, {40.f, Vec3{1.f}, 0.84f}};
  p.tf = opaque;
  p.camera = test::axis_camera(40.f);  // wide enough that the corner rays pass beside the box
  const VrLiteCam fog = make_vr_lite_cam(make_view(v), p);
  run_item(fog, centre, b, sb);
  EXPECT_EQ(sb, 14u);  // 10 samples outside (z = −20 … −15.5) unprobed, then A reaches 0.95 after 4
  // A ray beside the box is never probed: it runs to the far plane with nothing composited.
  run_item(fog, 0, b, sb);
  EXPECT_EQ(sb, 81u);
  EXPECT_EQ(b.alpha, 0.f);
}

TEST(VolumeRayPlanes, PlanesAreValidatedAndTheNearPlaneStaysInFrontOfTheEye) {
  VolumeRaySpec s = volume_ray_spec(test::sphere_vr_params(), 1);
  s.march = RayMarch::Planes;
  s.near_depth = 5.f;
  s.far_depth = 5.f;
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "far_depth", {"beyond near_depth"});
  s.far_depth = NAN;
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "far_depth");
  s.near_depth = -200.f;
  s.far_depth = -100.f;  // the eye is 100 from the look-at point: the far plane would pass through it
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "far_depth", {"in front of the eye"});
  s.near_depth = INFINITY;
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "near_depth", {"finite"});
  // A near plane behind the eye starts the samples at the eye.
  s.near_depth = -150.f;
  s.far_depth = 20.f;
  const Volume v = test::sphere_volume();
  const VolumeRayCaster c = make_volume_ray_caster(make_view(v), s, "ctx");
  EXPECT_EQ(c.z_near, 0.f);
  EXPECT_EQ(c.z_far, 120.f);
}

TEST(VolumeRayCaster, SpecIsValidatedFieldByFieldAndTheKernelMustHaveTheDerivatives) {
  const Volume v = test::sphere_volume();
  const VolumeView view = make_view(v);
  const VolumeRaySpec good = volume_ray_spec(test::sphere_vr_params(), 1);
  EXPECT_NO_THROW(validate_volume_ray(good, "ctx"));
  VolumeRaySpec s = good;
  s.kernel = KernelKind::Tent;  // a gradient is enough for one derivative…
  EXPECT_NO_THROW(make_volume_ray_caster(view, s, "ctx"));
  s.derivatives = 2;  // …not for two
  expect_input_error([&] { make_volume_ray_caster(view, s, "ctx"); }, "ctx", "kernel", {"tent has no usable Hessian"});
  s = good;
  s.width = 0;
  s.background = {2.f, 0.f, 0.f};  // the first bad field is the one reported
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "width", {"[1, 16384]"});
  s = good;
  s.opacity_threshold = 0.f;
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "opacity_threshold", {"(0, 1]"});
  s = good;
  s.camera.fov_deg = 180.f;
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "camera.fov_deg");
  s = good;
  s.tf.points.resize(1);
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "tf.points");
  s = good;
  s.background = {0.f, -0.5f, 0.f};
  expect_input_error([&] { validate_volume_ray(s, "ctx"); }, "ctx", "background.g");
  VolumeView empty = view;
  empty.data = nullptr;
  expect_input_error([&] { make_volume_ray_caster(empty, good, "ctx"); }, "ctx", "volume", {"null"});
}

// ---------------------------------------------------------------------------------------------------
// step statistics on ch2 (Lehmann 2023 Fig 3.2's μ, σ, CV), small images

TEST(VolumeStrandsCh2, StepStatisticsMatchFig32AtAQuarterSize) {
  std::string why;
  const std::string ch2 = test::ch2_path(why);
  if (ch2.empty()) GTEST_SKIP() << why;
  const Volume vol = load_volume(ch2);
  const VolumeView view = make_view(vol);
  VrLiteCamParams vp;
  vp.width = 115, vp.height = 90;  // a quarter of 460 × 360 per side: the same framing, 1/16 of the rays
  const auto vr = test::run_all_cpu(make_vr_lite_cam(view, vp));
  IllustVrParams ip;
  ip.width = 160, ip.height = 120;  // a quarter of 640 × 480 per side
  const auto il = test::run_all_cpu(make_illust_vr(view, ip));
  // Lehmann 2023 Fig 3.2: μ and CV; the targets are μ within 10 % and CV within 15 %.
  struct Case {
    const char* name;
    const std::vector<uint32_t>* steps;
    const std::vector<WorkStatus>* status;
    uint32_t samples_between_planes;
    double mu, cv;
  };
  for (const Case& c : {Case{"vr-lite-cam", &vr.steps, &vr.status, 787u, 457.903, 0.679},
                        Case{"illust-vr", &il.steps, &il.status, 1175u, 775.904, 0.488}}) {
    const test::StepSummary s = test::summarize(*c.steps);
    std::printf("[ ch2 %-11s ] %zu strands: mu %.3f  sigma %.3f  CV %.3f  min %u  max %u\n", c.name, c.steps->size(),
                s.mean, s.sigma, s.cv, s.min, s.max);
    for (WorkStatus st : *c.status) ASSERT_EQ(st, WorkStatus::Stable) << c.name;
    // Rays beside the head run from the near to the far plane; rays into it stop early, after the empty
    // space between the near plane and the head.
    EXPECT_EQ(s.max, c.samples_between_planes) << c.name;
    EXPECT_GT(s.min, 50u) << c.name;
    EXPECT_NEAR(s.mean, c.mu, 0.1 * c.mu) << c.name;
    EXPECT_NEAR(s.cv, c.cv, 0.15 * c.cv) << c.name;
  }
  // The head is in the picture: the centre pixel is opaque, a corner is background.
  const uint32_t c = 45 * 115 + 57;
  EXPECT_GT(vr.state[c].alpha, 0.9f);
  EXPECT_EQ(vr.state[0].alpha, 0.f);
}

// ---------------------------------------------------------------------------------------------------
// device volume checks that need no GPU; pre-filter

TEST(DeviceVolume, RefusesAVolumeTooLargeWithItsSize) {
  Volume huge;  // dimensions only: the check reads nx·ny·nz, not the data
  huge.source = "huge.nrrd";
  huge.nx = huge.ny = huge.nz = 100000;
  expect_input_error([&] { DeviceVolume d(huge); }, "huge.nrrd", "size", {"MiB"});
}

TEST(DeviceVolume, WithoutAGpuSaysSo) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present (tests/test_volume_strands_gpu.cu uploads)";
  const Volume v = test::sphere_volume();
  try {
    DeviceVolume d(v);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    ADD_FAILURE() << "an InputError: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a CUDA GPU"), std::string::npos) << e.what();
  }
}

TEST(VolumeFilter, GaussianKeepsConstantsAndSmoothsASpike) {
  Volume v;
  v.source = "spike";
  v.nx = 9, v.ny = 8, v.nz = 7;
  v.data.assign(9 * 8 * 7, 2.f);
  Volume s = smooth_volume(v, 1.f);
  for (float x : s.data) ASSERT_NEAR(x, 2.f, 1e-5f);
  v.data[(3 * 8 + 4) * 9 + 4] = 2.f + 100.f;
  s = smooth_volume(v, 1.f);
  double excess = 0;
  for (float x : s.data) excess += x - 2.f;
  EXPECT_NEAR(excess, 100.0, 1e-2);                     // mass kept (spike away from the borders)
  const float peak = s.data[(3 * 8 + 4) * 9 + 4] - 2.f;  // (1/√(2π))³ ≈ 0.0635 of it at the centre
  EXPECT_NEAR(peak, 100.f * 0.0635f, 0.5f);
  EXPECT_NE(s.source.find("gaussian"), std::string::npos);
  EXPECT_EQ(smooth_volume(v, 0.f).data, v.data);
  expect_input_error([&] { smooth_volume(v, 20.f); }, "spike", "smooth", {"[0, 16]"});
}

// ---------------------------------------------------------------------------------------------------
// workloads by name (for the strand bench's registry)

TEST(VolumeStrandWorkloads, Ch2IsLoadedOnceAndShared) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const VolumeView& a = shared_volume_view("ch2", Side::Host);
  const VolumeView& b = shared_volume_view("ch2", Side::Host);
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.nx, 181);
  const VrLiteCam vr = vr_lite_cam_workload(46, 36, Side::Host);
  EXPECT_EQ(vr.ray.vol.data, a.data);
  EXPECT_EQ(vr.num_strands(), 46u * 36u);
  const IllustVr il = illust_vr_workload(64, 48, Side::Host);
  EXPECT_EQ(il.num_strands(), 64u * 48u);
  EXPECT_EQ(il.ray.kernel, KernelKind::Bspln3);
  // Same image as a workload built by hand on a freshly loaded ch2.
  VrLiteCamParams p;
  p.width = 46, p.height = 36;
  const Volume v = load_volume(test::ch2_path(why));
  const auto x = test::run_all_cpu(vr), y = test::run_all_cpu(make_vr_lite_cam(make_view(v), p));
  EXPECT_EQ(x.steps, y.steps);
  if (!gpu_available()) {
    EXPECT_THROW(shared_volume_view("ch2", Side::Device), std::runtime_error);
    EXPECT_THROW(vr_lite_cam_workload(46, 36, Side::Device), std::runtime_error);
  }
  expect_input_error([] { shared_volume_view("no-such-volume-xyz", Side::Host); }, "no-such-volume-xyz", "",
                     {"no volume found"});
}

TEST(VolumeStrandWorkloads, TheTfKnobLoadsAFileInsteadOfThePreset) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  test::TempDir dir("tf-knob");
  const std::string file = dir / "green.json";
  std::ofstream(file) << R"({"points": [{"value": 0, "color": [0, 0, 0], "opacity": 0},
                                        {"value": 40, "color": [0, 0, 0], "opacity": 0},
                                        {"value": 255, "color": [0.1, 0.9, 0.2], "opacity": 1}]})";
  // The same rays, opaque green: the first sample's colour and the steps differ from the preset's image.
  const auto preset = test::run_all_cpu(vr_lite_cam_workload(46, 36, Side::Host));
  const auto green = test::run_all_cpu(vr_lite_cam_workload(46, 36, Side::Host, {}, {{"tf", file}}));
  EXPECT_NE(preset.steps, green.steps);
  const IllustVr il = illust_vr_workload(16, 12, Side::Host, {}, {{"tf", file}});
  EXPECT_EQ(il.num_strands(), 16u * 12u);
  expect_input_error([&] { vr_lite_cam_workload(46, 36, Side::Host, {}, {{"tf", dir / "none.json"}}); },
                     dir / "none.json", "", {"no such file"});
}

// ---------------------------------------------------------------------------------------------------
// megaview strands

TEST(StrandsCli, WritesThePngAndPrintsStepStatistics) {
  test::TempDir dir("strands");
  const std::string out = dir / "m.png";
  const test::CliResult r = test::run_megaview(dir, "strands --workload mandelbrot --size 64x48 --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("64x48 = 3072 strands"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mu "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CV "), std::string::npos) << r.out;
  int w = 0, h = 0;
  const std::vector<uint32_t> px = read_png(out, w, h);
  EXPECT_EQ(w, 64);
  EXPECT_EQ(h, 48);
  // Never over an existing file.
  const std::string before = test::slurp(out);
  const test::CliResult again = test::run_megaview(dir, "strands --workload mandelbrot --size 64x48 --out '" + out + "'");
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(test::slurp(out), before);
  const test::CliResult bad = test::run_megaview(dir, "strands --workload mandelbrot --size 64by48 --out '" + (dir / "b.png") + "'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--size"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err_lines(), 1);
}

TEST(StrandsCli, RendersCh2WithBothRayCasters) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  test::TempDir dir("strands");
  for (const std::string wl : {"vr-lite-cam", "illust-vr"}) {
    const std::string out = dir / (wl + ".png");
    const test::CliResult r = test::run_megaview(dir, "strands --workload " + wl + " --size 96x72 --out '" + out + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("96x72 = 6912 strands"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("knobs: volume=ch2, smooth=0, kernel=" + std::string(wl == "vr-lite-cam" ? "ctmr" : "bspln3")),
              std::string::npos)
        << r.out;
    int w = 0, h = 0;
    const std::vector<uint32_t> px = read_png(out, w, h);
    ASSERT_EQ(px.size(), 96u * 72u);
    // The head covers the centre, the corners are background (black for vr-lite-cam, white for illust-vr).
    EXPECT_NE(px[36 * 96 + 48], px[0]) << wl;
    EXPECT_EQ(px[0], wl == "vr-lite-cam" ? 0xff000000u : 0xffffffffu) << wl;
  }
  const test::CliResult bad = test::run_megaview(dir, "strands --workload illust-vr --kernel tent --out '" + (dir / "t.png") + "'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("illust-vr: kernel: tent has no usable Hessian"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mv
