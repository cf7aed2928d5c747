// The priority function `adaptive` (render/pathtracer/priority.h): Cycles' adaptive-sampling stopping rule on the
// patch tasks. Its formulas on hand-computed values, the one-pixel ring of the dilation, the film's
// half-sample buffer, and whole renders where the answer is known: a noise-free image stops everywhere at
// the first check, one noisy pixel keeps exactly its own and its 8-neighbourhood's patches sampling.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "render/pathtracer/integrator.h"
#include "render/pathtracer/priority.h"
#include "render/pathtracer/scene_io.h"
#include "test_support.h"

namespace mv {
namespace {

using test::furnace_scene;
using test::render_mean_image;

TEST(Adaptive, PixelErrorMatchesAHandComputation) {
  // n = 4 samples: I = sum / 4 = (0.75, 1, 1.25); half_sum = 2·Σ(odd samples) = (4, 2, 6), so
  // A = half_sum / 4 = (1, 0.5, 1.5). Σ|I − A| = 0.25 + 0.5 + 0.25 = 1; √(Σ I) = √3.
  const float e = adaptive_pixel_error(Vec3{3.f, 4.f, 5.f}, Vec3{4.f, 2.f, 6.f}, 4);
  EXPECT_FLOAT_EQ(e, 1.f / (1e-4f + std::sqrt(3.f)));
  // Converged when the error is below 5 × the threshold (Cycles scales the user's value by 5).
  EXPECT_TRUE(adaptive_pixel_converged(e, 0.12f));    // 0.577 < 0.6
  EXPECT_FALSE(adaptive_pixel_converged(e, 0.11f));   // 0.577 ≥ 0.55
  // An odd count: the 2 odd-indexed samples of 5 are averaged over 4 (half_sum / 4), not over 5.
  EXPECT_EQ(adaptive_pixel_error(Vec3{5.f}, Vec3{4.f}, 5), 0.f);
  // Black pixel: 0 / 1e-4; no odd sample yet: never converged.
  EXPECT_EQ(adaptive_pixel_error(Vec3{0.f}, Vec3{0.f}, 16), 0.f);
  EXPECT_EQ(adaptive_pixel_error(Vec3{1.f}, Vec3{0.f}, 1), FLT_MAX);
  EXPECT_FALSE(adaptive_pixel_converged(FLT_MAX, 1.f));
}

TEST(Adaptive, MinSamplesFollowCyclesAutomaticRule) {
  // max(4, ⌈16 / t^0.3⌉): the values the Cycles source lists (0.1 → 32, 0.01 → 64, 0.001 → 128).
  EXPECT_EQ(adaptive_min_spp(0.01f, 512), 64u);
  EXPECT_EQ(adaptive_min_spp(0.1f, 512), 32u);
  EXPECT_EQ(adaptive_min_spp(0.001f, 512), 128u);
  EXPECT_EQ(adaptive_min_spp(1.f, 512), 16u);
  EXPECT_EQ(adaptive_min_spp(0.05f, 512), 40u);  // ⌈39.3⌉
  EXPECT_EQ(adaptive_min_spp(kDefaultNoiseThreshold, 4096), 64u);
  // Capped at the target.
  EXPECT_EQ(adaptive_min_spp(0.01f, 50), 50u);
  EXPECT_EQ(adaptive_min_spp(1.f, 3), 3u);
}

TEST(Adaptive, ChecksComeEvery16SamplesAfterMoreThanMinPlusOne) {
  // min 64: Cycles' first filter after sample index 79 (80 samples), then 96, 112, ...
  EXPECT_FALSE(adaptive_check_due(62, 64, 64));
  EXPECT_TRUE(adaptive_check_due(78, 80, 64));
  EXPECT_FALSE(adaptive_check_due(80, 82, 64));
  EXPECT_TRUE(adaptive_check_due(94, 96, 64));
  EXPECT_TRUE(adaptive_check_due(77, 83, 64));  // crossing 80 in one execution of 6 paths per pixel
  // min 40: the first multiple of 16 above 41 is 48.
  EXPECT_FALSE(adaptive_check_due(30, 32, 40));
  EXPECT_TRUE(adaptive_check_due(46, 48, 40));
  // min 32: 32 is not > 33, so the first check is at 48.
  EXPECT_FALSE(adaptive_check_due(30, 32, 32));
  EXPECT_TRUE(adaptive_check_due(47, 49, 32));
}

TEST(Adaptive, RingIsTheEightNeighbourhoodOfThePatchClampedAtTheImage) {
  // 12 × 12 pixels: 3 × 3 patches, all pixels converged; the centre patch is 4.
  const PatchGrid g(12, 12);
  std::vector<uint32_t> state(g.num_patches(), kPatchPixelsConverged);
  FilmView f;
  f.grid = g;
  f.patch_state = state.data();
  EXPECT_TRUE(f.ring_converged(4));
  // Each neighbour's pixels next to the centre patch matter (bit i = 4·y + x in the neighbour)...
  struct Case {
    uint32_t patch;
    int bit;
    bool in_ring;
  };
  const Case cases[] = {
      {0, 15, true},  {0, 14, false}, {0, 11, false},  // above left: only its bottom-right corner
      {1, 12, true},  {1, 15, true},  {1, 8, false},   // above: its bottom row
      {2, 12, true},  {2, 13, false},                  // above right: its bottom-left corner
      {3, 3, true},   {3, 15, true},  {3, 2, false},   // left: its right column
      {5, 0, true},   {5, 12, true},  {5, 1, false},   // right: its left column
      {6, 3, true},   {6, 7, false},                   // below left: its top-right corner
      {7, 0, true},   {7, 3, true},   {7, 4, false},   // below: its top row
      {8, 0, true},   {8, 1, false},                   // below right: its top-left corner
      {4, 5, false},                                   // the patch itself is not its ring
  };
  for (const Case& c : cases) {
    state.assign(g.num_patches(), kPatchPixelsConverged);
    state[c.patch] &= ~(1u << c.bit);
    EXPECT_EQ(f.ring_converged(4), !c.in_ring) << "patch " << c.patch << " bit " << c.bit;
  }
  // At the image corner the ring has only the right, lower and lower-right neighbours.
  state.assign(g.num_patches(), kPatchPixelsConverged);
  state[8] = 0;
  EXPECT_TRUE(f.ring_converged(0));
  state[4] &= ~1u;  // the lower-right neighbour's top-left pixel
  EXPECT_FALSE(f.ring_converged(0));
  // The stopped bit is no pixel.
  state.assign(g.num_patches(), kPatchPixelsConverged | kPatchStopped);
  EXPECT_TRUE(f.ring_converged(4));
}

/// Samples 0 … n−1 of pixel (x, y) as run_task adds them: `per_task` at a time, summed, then added.
struct PixelSums {
  Vec3 sum{0.f}, sum_sq{0.f}, half{0.f};
};
PixelSums direct_sums(const Scene& scene, uint32_t seed, int x, int y, uint32_t n, uint32_t per_task) {
  const SceneView v = scene.host_view();
  PixelSums s;
  for (uint32_t first = 0; first < n; first += per_task) {
    PixelSums task;
    for (uint32_t j = first; j < first + per_task && j < n; ++j) {
      const Vec3 l = sanitize_sample(pixel_sample(v, seed, x, y, j));
      task.sum += l;
      task.sum_sq += l * l;
      if (j & 1u) task.half += l * 2.f;
    }
    s.sum += task.sum;
    s.sum_sq += task.sum_sq;
    s.half += task.half;
  }
  return s;
}

/// Runs `strategy` on `w` until it has nothing left; returns the finished tasks its steps counted.
uint64_t run_counting_finished(PatchWorkload& w, const std::string& strategy) {
  const auto& entry = patch_strategies().find(strategy);
  auto strat = entry.make();
  w.make_current(entry.info.side);
  ScheduleSettings s;
  uint64_t finished = 0;
  for (int guard = 0; guard < 100000; ++guard) {
    const StepStats st = strat->step(w, 1u << 12, s);
    finished += st.finished;
    if (st.work == 0) break;
  }
  w.make_current(Side::Host);
  return finished;
}

// The film is what it was for the other priority functions (every sample added once, in order), the
// half-sample buffer holds 2 × the odd-indexed samples, and only `adaptive` writes the patch state.
TEST(Adaptive, FilmHoldsAllSamplesAndTheOddHalfUnderEveryPriority) {
  const Scene scene = test::all_materials_scene(10, 6);
  for (int fi = 0; fi < kNumPriorityFunctions; ++fi) {
    PatchTaskParams p;
    p.target_spp = 8;
    p.seed = 7;
    p.priority = static_cast<PriorityFunction>(fi);
    PatchWorkload w(scene, p, false);
    render_mean_image(w, "sequential-waves");
    const FilmView f = w.film().host_view_synced();
    for (int y = 0; y < scene.height; ++y) {
      for (int x = 0; x < scene.width; ++x) {
        const PixelSums d = direct_sums(scene, p.seed, x, y, 8, p.paths_per_pixel);
        const uint32_t i = static_cast<uint32_t>(y * scene.width + x);
        ASSERT_EQ(f.spp[i], 8u);
        ASSERT_EQ(f.sum[i].r, d.sum.x);
        ASSERT_EQ(f.sum[i].b, d.sum.z);
        ASSERT_EQ(f.sum_sq[i].g, d.sum_sq.y);
        ASSERT_EQ(f.half_sum[i].r, d.half.x) << priority_name(p.priority) << " pixel " << x << "," << y;
        ASSERT_EQ(f.half_sum[i].g, d.half.y);
      }
    }
    // Only `adaptive` records convergence (from its min samples, here capped at the target 8), and no
    // check came (it needs more than 9 samples).
    for (uint32_t t = 0; t < w.num_tasks(); ++t) {
      if (p.priority == PriorityFunction::Adaptive) EXPECT_EQ(f.patch_state[t] & kPatchStopped, 0u);
      else EXPECT_EQ(f.patch_state[t], 0u) << priority_name(p.priority);
    }
  }
}

// Until a check stops a patch, `adaptive` is exactly `none`: same order, same film, same priorities.
TEST(Adaptive, WithoutAStopItIsTheNoneOrder) {
  Scene scene = load_scene(resolve_scene_path("room"));
  scene.width = 24;
  scene.height = 20;
  PatchTaskParams p;
  p.target_spp = 64;  // min samples 64 capped at 64; the first check would need more than 65
  p.priority = PriorityFunction::None;
  PatchWorkload none(scene, p, false);
  p.priority = PriorityFunction::Adaptive;
  PatchWorkload adaptive(scene, p, false);
  const std::vector<float> a = render_mean_image(none, "sequential-priority");
  const std::vector<float> b = render_mean_image(adaptive, "sequential-priority");
  EXPECT_EQ(a, b);
  EXPECT_EQ(none.host_priorities(), adaptive.host_priorities());
  EXPECT_EQ(adaptive.finished_tasks(), adaptive.num_tasks());
  for (uint32_t n : adaptive.film().host_patch_spp()) EXPECT_EQ(n, 64u);
}

/// Black furnace (albedo 0, emission 0.75): every sample of every pixel is exactly 0.75, the pixel error 0.
Scene noise_free_scene(int width, int height) {
  Scene s = furnace_scene(0.f, 0.75f, false);
  s.width = width;
  s.height = height;
  s.finalize();
  return s;
}

// A noise-free image converges everywhere at the first check (80 samples for threshold 0.01: min 64),
// far below the target: every patch is finished there, with the finished priority, on every CPU strategy;
// 18 × 14 has partial patches at the right and bottom border.
TEST(Adaptive, NoiseFreeImageStopsEverywhereAtTheFirstCheck) {
  const Scene scene = noise_free_scene(18, 14);
  for (const char* strategy : {"sequential-waves", "cpu-waves", "cpu-parallel", "sequential-priority"}) {
    PatchTaskParams p;
    p.target_spp = 512;
    p.priority = PriorityFunction::Adaptive;
    ASSERT_EQ(p.noise_threshold, 0.01f);
    PatchWorkload w(scene, p, false);
    EXPECT_EQ(run_counting_finished(w, strategy), w.num_tasks()) << strategy << ": each counted once by its step";
    for (float v : w.film().mean_rgb()) ASSERT_EQ(v, 0.75f);
    EXPECT_EQ(w.finished_tasks(), w.num_tasks()) << strategy;
    EXPECT_EQ(w.remaining_paths(), 0u) << strategy;
    const std::vector<uint32_t> spp = w.film().host_patch_spp();
    const std::vector<uint32_t> state = w.film().host_patch_state();
    const std::vector<float> prio = w.host_priorities();
    for (uint32_t t = 0; t < w.num_tasks(); ++t) {
      EXPECT_EQ(spp[t], 80u) << strategy << " patch " << t;
      EXPECT_EQ(state[t], kPatchPixelsConverged | kPatchStopped) << strategy << " patch " << t;
      EXPECT_EQ(prio[t], kFinishedPriority) << strategy << " patch " << t;
      EXPECT_TRUE(w.view(Side::Host).finished(t));
      EXPECT_EQ(w.view(Side::Host).run_task(t), 0u) << "a stopped patch does no work";
    }
    // Under another priority function a stopped patch is not finished: it samples on to the target.
    PatchTaskParams q = p;
    q.priority = PriorityFunction::None;
    EXPECT_TRUE(w.set_params(q));
    EXPECT_EQ(w.finished_tasks(), 0u);
    EXPECT_EQ(w.host_priorities()[0], kUnsampledPriority);
    // And back: the film is re-checked in one pass, and everything is stopped again.
    EXPECT_TRUE(w.set_params(p));
    EXPECT_EQ(w.finished_tasks(), w.num_tasks());
    EXPECT_EQ(w.host_priorities()[0], kFinishedPriority);
  }
}

/// The noise-free scene with a small diffuse sphere (albedo 0.9) seen only through the middle of pixel
/// (px, py), lit by a quad light behind the camera (which no camera ray sees). That pixel's samples vary
/// continuously (the light's sample point, the hit point, miss or hit), every other pixel's are 0.75.
Scene one_noisy_pixel_scene(int size, int px, int py) {
  Scene s = noise_free_scene(size, size);
  Material ball;
  ball.type = MaterialType::Diffuse;
  ball.albedo = Vec3{0.9f};
  Material lamp;
  lamp.type = MaterialType::Emissive;
  lamp.emission = Vec3{5000.f};
  s.materials.push_back(ball);
  s.material_names.push_back("ball");
  s.materials.push_back(lamp);
  s.material_names.push_back("lamp");
  const SceneView v = s.host_view();
  const Vec3 centre = camera_ray(v, px, py, 0.5f, 0.5f).dir;
  const Vec3 side = camera_ray(v, px, py, 0.2f, 0.5f).dir;
  const float d = 0.5f;  // inside the box, in front of the camera
  const float sin_half = std::sqrt(std::max(0.f, 1.f - dot(centre, side) * dot(centre, side)));
  s.spheres.push_back(Sphere{v.camera.origin + centre * d, 0.9f * d * sin_half, 1});
  // 0.4 × 0.4 at z = 0.9 (the camera is at z = 0.3 and looks towards −z), normal −z: facing the scene.
  s.quads.push_back(Quad{{-0.1f, 0.f, 0.9f}, {0.f, 0.4f, 0.f}, {0.4f, 0.f, 0.f}, 2, {}, 0.f});
  s.finalize();
  return s;
}

// Dilation: one noisy pixel at (4, 4), the top-left pixel of patch (1, 1) in a 16 × 16 image (4 × 4
// patches), keeps its own patch and the three patches holding its other 8-neighbours, (0, 0), (1, 0) and
// (0, 1), sampling to the target; (0, 0) touches it only diagonally, so it is there because the dilation
// is 8- and not 4-connected. Every other patch stops at the first check. (The noisy pixel's error at these
// sample counts is about 0.02 to 3, against 5 × 0.0001: over seeds 0 to 199 this layout held for every one.)
TEST(Adaptive, OneNoisyPixelKeepsItsPatchAndItsNeighbourhoodSampling) {
  const Scene scene = one_noisy_pixel_scene(16, 4, 4);
  PatchTaskParams p;
  p.target_spp = 320;
  p.priority = PriorityFunction::Adaptive;
  p.noise_threshold = 0.0001f;  // min ⌈16 / 0.0001^0.3⌉ = 254: first check at 256
  ASSERT_EQ(adaptive_min_spp(p.noise_threshold, p.target_spp), 254u);
  PatchWorkload w(scene, p, false);
  render_mean_image(w, "sequential-waves");
  const FilmView f = w.film().host_view_synced();
  // The set-up: only pixel (4, 4) sees the sphere, and it sees it in some samples, not all.
  for (int y = 0; y < 16; ++y) {
    for (int x = 0; x < 16; ++x) {
      const Vec3 mean = f.mean(static_cast<uint32_t>(y * 16 + x));
      if (x == 4 && y == 4) {
        EXPECT_NE(mean.x, 0.75f);
      } else {
        ASSERT_EQ(mean.x, 0.75f) << "pixel " << x << "," << y << " sees the sphere";
      }
    }
  }
  const std::vector<uint32_t> spp = w.film().host_patch_spp();
  for (uint32_t t = 0; t < w.num_tasks(); ++t) {
    const uint32_t tx = t % 4, ty = t / 4;
    const bool near = tx <= 1 && ty <= 1;
    EXPECT_EQ(spp[t], near ? 320u : 256u) << "patch (" << tx << ", " << ty << ")";
  }
  EXPECT_EQ(w.finished_tasks(), w.num_tasks());
  // The noisy pixel never converged; its patch records the other 15.
  EXPECT_EQ(w.film().host_patch_state()[5], kPatchPixelsConverged & ~1u);
}

// A new threshold re-checks the film in one pass: with a higher one (lower min samples) the patches
// whose pixels and ring have converged stop at once; with the old one again they sample on.
TEST(Adaptive, ChangingTheThresholdRechecksTheFilm) {
  const Scene scene = one_noisy_pixel_scene(16, 4, 4);
  PatchTaskParams p;
  p.target_spp = 320;
  p.priority = PriorityFunction::Adaptive;
  p.noise_threshold = 0.0001f;  // min 254
  PatchWorkload w(scene, p, false);
  auto strategy = patch_strategies().find("sequential-waves").make();
  ScheduleSettings s;
  while (w.film().host_patch_spp()[0] < 200 && strategy->step(w, 16 * 16 * 2, s).work > 0) {
  }
  EXPECT_EQ(w.film().host_patch_spp()[0], 200u);
  EXPECT_EQ(w.finished_tasks(), 0u);  // below the min samples
  p.noise_threshold = 0.001f;         // min 128: every patch is past its first check
  EXPECT_TRUE(w.set_params(p));
  EXPECT_EQ(w.finished_tasks(), 12u);  // all but the four around the noisy pixel
  for (uint32_t t : {0u, 1u, 4u, 5u}) EXPECT_FALSE(w.view(Side::Host).finished(t)) << t;
  EXPECT_EQ(w.remaining_paths(), 4u * 16u * (320u - 200u));
  p.noise_threshold = 0.0001f;  // and back: nothing has stopped
  EXPECT_TRUE(w.set_params(p));
  EXPECT_EQ(w.finished_tasks(), 0u);
  EXPECT_EQ(w.host_priorities()[15], kUnsampledPriority);
  p.paths_per_pixel = 4;  // not a change of the finished patches
  EXPECT_FALSE(w.set_params(p));
}

TEST(Adaptive, NoiseThresholdOutsideItsRangeIsRejected) {
  const Scene scene = noise_free_scene(8, 8);
  for (float t : {0.f, -0.01f, 1.5f, std::numeric_limits<float>::quiet_NaN()}) {
    PatchTaskParams p;
    p.noise_threshold = t;
    test::expect_input_error([&] { PatchWorkload w(scene, p, false); }, "", "noise_threshold", {"(0, 1]"});
  }
  PatchTaskParams p;
  p.noise_threshold = 1.f;
  PatchWorkload w(scene, p, false);
  p.noise_threshold = 2.f;
  test::expect_input_error([&] { w.set_params(p); }, "", "noise_threshold");
  EXPECT_EQ(w.params().noise_threshold, 1.f) << "a rejected change changes nothing";
}

// The session counts stopped patches as finished: a run ends when every patch has stopped, and switching
// the priority function away from `adaptive` and back updates the count (the CPU strategy's counters).
TEST(Adaptive, SessionRunEndsWhenEveryPatchHasStopped) {
  test::TempDir dir("adaptive");
  const std::string file = dir / "black-furnace.json";
  std::ofstream(file) << R"({
    "resolution": {"width": 20, "height": 12}, "target_spp": 512,
    "camera": {"position": [0.1, 0.2, 0.3], "look_at": [0.5, -0.3, -1], "vfov": 90},
    "materials": {"wall": {"type": "diffuse", "albedo": [0, 0, 0], "emission": [0.75, 0.75, 0.75]}},
    "boxes": [{"min": [-1, -1, -1], "max": [1, 1, 1], "material": "wall"}]
  })";
  SessionOptions o;
  o.scene = file;
  o.force_cpu = true;
  o.strategy = "cpu-waves";
  o.task.priority = PriorityFunction::Adaptive;
  Session s(o);
  const FrameStats fs = s.run(0, 0.0);
  EXPECT_TRUE(fs.done);
  EXPECT_EQ(fs.finished_tasks, fs.num_tasks);
  EXPECT_EQ(fs.total_paths, 20u * 12u * 80u);
  s.set_priority(PriorityFunction::None);
  EXPECT_FALSE(s.done());
  s.advance(20 * 12 * 2);
  s.set_priority(PriorityFunction::Adaptive);
  EXPECT_TRUE(s.done());
  test::expect_input_error([&] { s.set_noise_threshold(0.f); }, "", "noise_threshold");
  EXPECT_EQ(s.options().task.noise_threshold, kDefaultNoiseThreshold);
}

// The GPU strategies count stopped patches through run_task_warp's counters and stop where the CPU does.
TEST(Adaptive, GpuStrategiesStopEverywhereAtTheFirstCheck) {
  MV_REQUIRE_GPU();
  const Scene scene = noise_free_scene(18, 14);
  for (const char* strategy : {"uniform", "sorted-waves", "megakernel"}) {
    PatchTaskParams p;
    p.target_spp = 512;
    p.priority = PriorityFunction::Adaptive;
    PatchWorkload w(scene, p, true);
    EXPECT_EQ(run_counting_finished(w, strategy), w.num_tasks()) << strategy << ": each counted once by its step";
    EXPECT_EQ(w.finished_tasks(), w.num_tasks()) << strategy;
    for (uint32_t n : w.film().host_patch_spp()) EXPECT_EQ(n, 80u) << strategy;
  }
}

}  // namespace
}  // namespace mv
