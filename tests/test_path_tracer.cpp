// The path tracer against analytic answers, and the GPU against the CPU.
#include <gtest/gtest.h>

#include <set>

#include "render/metrics.h"
#include "render/pathtracer/scene_io.h"
#include "test_support.h"

namespace mv {
namespace {

using test::channel_mean;
using test::furnace_scene;
using test::render_mean_image;

struct FurnaceCase {
  bool quads;
  const char* strategy;
};

class Furnace : public ::testing::TestWithParam<FurnaceCase> {};

// White furnace: inside a closed diffuse enclosure of albedo a and emission E the radiance is E/(1-a)
// everywhere. Checks the estimator (NEE + BSDF sampling + Russian roulette) is unbiased, on CPU and GPU.
TEST_P(Furnace, RadianceIsEmissionOverOneMinusAlbedo) {
  const FurnaceCase c = GetParam();
  if (patch_strategies().find(c.strategy).info.side == Side::Device) MV_REQUIRE_GPU();
  const float albedo = 0.6f, emission = 0.5f;
  const Scene scene = furnace_scene(albedo, emission, c.quads);
  PatchTaskParams p;
  p.target_spp = 64;
  p.priority = PriorityFunction::None;
  PatchWorkload w(scene, p, gpu_available());
  const test::ImageStats st = channel_mean(render_mean_image(w, c.strategy));
  const double expected = emission / (1.0 - albedo);
  // Pixels are independent estimates: 5 standard errors, plus 0.5 % for float accumulation.
  EXPECT_NEAR(st.mean, expected, 5.0 * st.stderr_ + 0.005 * expected)
      << "stderr " << st.stderr_ << " strategy " << c.strategy << (c.quads ? " quads" : " box");
  EXPECT_LT(st.stderr_, 0.02 * expected);  // the test has power
}

INSTANTIATE_TEST_SUITE_P(PathTracer, Furnace,
                         ::testing::Values(FurnaceCase{false, "sequential"}, FurnaceCase{true, "sequential"},
                                           FurnaceCase{false, "uniform"}, FurnaceCase{true, "uniform"}),
                         [](const auto& info) {
                           return std::string(info.param.quads ? "Quads_" : "Box_") +
                                  (info.param.strategy[0] == 'u' ? "GPU" : "CPU");
                         });

// Furnace with albedo 0: camera rays see exactly the emission, with no noise at all.
TEST(PathTracer, BlackFurnaceIsExactlyTheEmission) {
  const Scene scene = furnace_scene(0.f, 0.75f, true, 8);
  PatchTaskParams p;
  p.target_spp = 4;
  PatchWorkload w(scene, p, false);
  const std::vector<float> img = render_mean_image(w, "sequential");
  for (float v : img) ASSERT_NEAR(v, 0.75f, 1e-6f);
}

// The same samples on the GPU and the CPU: the images differ far less than two independent renders do.
TEST(PathTracer, GpuImageMatchesCpuImage) {
  MV_REQUIRE_GPU();
  // A small lit scene with every material; 28 rows is not a multiple of 4.
  const Scene scene = test::all_materials_scene(40, 28);
  PatchTaskParams p;
  p.target_spp = 32;
  p.priority = PriorityFunction::Variance;
  PatchWorkload cpu(scene, p, true), gpu(scene, p, true);
  PatchTaskParams p2 = p;
  p2.seed = 12345;
  PatchWorkload other(scene, p2, true);
  const auto a = render_mean_image(cpu, "cpu-parallel");
  const auto b = render_mean_image(gpu, "sorted-waves", 37);
  const auto c = render_mean_image(other, "cpu-parallel");
  test::expect_same_samples_image(a, b, c);
}

// The shipped caustic scene (scenes/caustic.json) renders on the CPU: a few samples give a finite image
// with light in it, and the glass sphere is in the middle of the picture.
TEST(PathTracer, CausticSceneRendersOnTheCpu) {
  Scene scene = load_scene(resolve_scene_path("caustic"));
  scene.width = 40;
  scene.height = 30;
  bool has_glass = false;
  for (const Material& m : scene.materials) has_glass = has_glass || m.type == MaterialType::Glass;
  EXPECT_TRUE(has_glass);
  PatchTaskParams p;
  p.target_spp = 4;
  PatchWorkload w(scene, p, false);
  const std::vector<float> img = render_mean_image(w, "cpu-parallel");
  for (float v : img) ASSERT_TRUE(std::isfinite(v));
  const test::ImageStats st = channel_mean(img);
  EXPECT_GT(st.mean, 0.0);
  // The centre ray of the camera meets the glass sphere first.
  const SceneView view = scene.host_view();
  const Ray centre = camera_ray(view, scene.width / 2, scene.height / 2, 0.5f, 0.5f);
  Hit hit;
  ASSERT_TRUE(intersect_scene(view, centre, view.epsilon, FLT_MAX, hit));
  EXPECT_EQ(scene.materials[hit.material].type, MaterialType::Glass);
}

TEST(PatchGrid, PatchesCoverEveryPixelExactlyOnce) {
  for (auto [w, h] : {std::pair{4, 4}, {5, 7}, {33, 17}, {64, 48}, {801, 599}}) {
    const PatchGrid g(w, h);
    std::vector<int> hits(static_cast<size_t>(w) * h, 0);
    for (uint32_t p = 0; p < g.num_patches(); ++p) {
      for (int i = 0; i < kPatchPixels; ++i) {
        int x, y;
        if (!g.pixel(p, i, x, y)) continue;
        ASSERT_LT(x, w);
        ASSERT_LT(y, h);
        ASSERT_EQ(g.patch_of(x, y), p);
        ++hits[static_cast<size_t>(y) * w + x];
      }
    }
    for (int v : hits) ASSERT_EQ(v, 1) << w << "x" << h;
    EXPECT_EQ(g.num_patches(), static_cast<uint32_t>(((w + 3) / 4) * ((h + 3) / 4)));
  }
}

class ExactTarget : public ::testing::TestWithParam<const char*> {};

// Every patch ends at exactly the target, also when paths per execution do not divide it.
TEST_P(ExactTarget, EveryPatchEndsAtExactlyTheTargetSpp) {
  const char* strategy = GetParam();
  const bool device = patch_strategies().find(strategy).info.side == Side::Device;
  if (device) MV_REQUIRE_GPU();
  Scene scene = furnace_scene(0.5f, 1.f, false, 4);
  scene.width = 37;
  scene.height = 22;
  scene.finalize();
  PatchTaskParams p;
  p.paths_per_pixel = 3;
  p.target_spp = 10;
  p.priority = PriorityFunction::Convergence;
  PatchWorkload w(scene, p, device);
  render_mean_image(w, strategy, 7);
  const auto& patch_spp = w.film().host_patch_spp();
  for (uint32_t t = 0; t < w.num_tasks(); ++t) ASSERT_EQ(patch_spp[t], 10u) << "patch " << t;
  for (uint32_t n : w.film().host_spp()) ASSERT_EQ(n, 10u);
  EXPECT_EQ(w.finished_tasks(), w.num_tasks());
  EXPECT_EQ(w.remaining_paths(), 0u);
  for (float pr : w.host_priorities()) EXPECT_EQ(pr, kFinishedPriority);
}

INSTANTIATE_TEST_SUITE_P(Strategies, ExactTarget,
                         ::testing::Values("sequential", "cpu-parallel", "sequential-waves", "cpu-waves", "uniform", "sorted-waves"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Metrics, MseMatchesAHandComputedCase) {
  // Two pixels: means (1,2,3) from 2 samples and (0.5,0,0) from 1 sample; reference (1,1,1), (0,0,0).
  Rgba32f sum[2] = {{2.f, 4.f, 6.f, 0.f}, {0.5f, 0.f, 0.f, 0.f}};
  Rgba32f sq[2] = {};
  uint32_t spp[2] = {2, 1};
  uint32_t patch_spp[1] = {1};
  FilmView f;
  f.grid = PatchGrid(2, 1);
  f.sum = sum;
  f.sum_sq = sq;
  f.spp = spp;
  f.patch_spp = patch_spp;
  const float ref[6] = {1.f, 1.f, 1.f, 0.f, 0.f, 0.f};
  // ((0)² + 1² + 2² + 0.5²) / 6 = 5.25 / 6
  EXPECT_DOUBLE_EQ(mse_host(f, ref), 5.25 / 6.0);
  const float a[6] = {1, 2, 3, 0.5f, 0, 0};
  EXPECT_DOUBLE_EQ(mse_images(a, ref, 2), 5.25 / 6.0);
}

TEST(Registry, HasTheFourStrategiesAndRejectsUnknownNames) {
  const auto names = patch_strategies().names();
  const std::set<std::string> got(names.begin(), names.end());
  for (const char* n : {"sequential", "cpu-parallel", "uniform", "sorted-waves"}) EXPECT_TRUE(got.count(n)) << n;
  try {
    patch_strategies().find("warp-drive");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sorted-waves"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mv
