// The `path-tracer` strand workload (render/strands/path_tracer_strands.h): the path tracer's patch tasks as
// strands. On the CPU the strands are the patch tasks bit for bit (the film of the patch strategy
// `sequential` holds every strand's sum and spp, and the strand image is what the viewer shows for that
// film), cpu-parallel agrees with sequential exactly, strands are numbered patch-major (16 consecutive
// strands are one 4×4 patch), and a size that is not a multiple of 4 is one InputError naming --size, in the
// API and on the command line. The GPU strategies are tests/test_path_tracer_strands_gpu.cu.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/session/path_tracer_strand_workload.h"
#include "app/session/session.h"
#include "app/session/strand_workloads.h"
#include "base/errors.h"
#include "render/pathtracer/patch_workload.h"
#include "render/tonemap.h"
#include "sched/strand_image.h"
#include "test_support.h"

namespace mv {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// room at width × height rendered to `target` spp by the patch strategy `sequential` on the host.
std::unique_ptr<PatchWorkload> render_room_film(int width, int height, uint32_t target, uint32_t paths_per_pixel) {
  Scene scene = shared_scene(kPathTracerStrandScene);
  scene.width = width;
  scene.height = height;
  PatchTaskParams p;
  p.paths_per_pixel = paths_per_pixel;
  p.target_spp = target;
  p.seed = 0;
  auto w = std::make_unique<PatchWorkload>(scene, p, false);
  auto strategy = patch_strategies().find("sequential").make();
  ScheduleSettings s;
  for (int guard = 0; guard < 100000; ++guard)
    if (strategy->step(*w, 1u << 20, s).work == 0) break;
  EXPECT_EQ(w->finished_tasks(), w->num_tasks());
  return w;
}

/// Every strand's (sum, spp) equals its film pixel's bit for bit, every strand took ⌈target / ppp⌉ updates.
void expect_strands_are_the_film(const PathTracerStrands& w, const StrandRun<PathTracerStrands>& run, Film& film) {
  const std::vector<Rgba32f>& sum = film.host_sum();
  const std::vector<uint32_t>& spp = film.host_spp();
  const uint32_t updates = (w.p.target_spp + w.p.paths_per_pixel - 1) / w.p.paths_per_pixel;
  ASSERT_EQ(run.state.size(), sum.size());
  uint32_t lit = 0;
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    const uint32_t px = w.pixel(i);
    const PathTracerStrands::State& s = run.state[i];
    ASSERT_EQ(run.status[i], WorkStatus::Stable) << "strand " << i;
    ASSERT_EQ(run.steps[i], updates) << "strand " << i;
    ASSERT_EQ(s.spp, spp[px]) << "strand " << i;
    ASSERT_EQ(bits(s.sum.x), bits(sum[px].r)) << "strand " << i << " pixel " << px;
    ASSERT_EQ(bits(s.sum.y), bits(sum[px].g)) << "strand " << i << " pixel " << px;
    ASSERT_EQ(bits(s.sum.z), bits(sum[px].b)) << "strand " << i << " pixel " << px;
    lit += s.sum.x + s.sum.y + s.sum.z > 0.f;
  }
  EXPECT_GT(lit, w.num_strands() / 2) << "room should be mostly lit";
}

// Test 1: the strands *are* the patch tasks. A target that paths_per_pixel does not divide (7 = 2+2+2+1)
// exercises the last, shorter execution; the registry's defaults (2 per update, 32 spp) are checked too,
// and there the strand image is exactly what the viewer's default tone mapping shows for the film.
TEST(PathTracerStrands, SequentialStrandsAreThePatchTasksFilmBitForBit) {
  const SceneView view = shared_scene(kPathTracerStrandScene).host_view_at(32, 24);
  PathTracerStrandParams p;
  p.width = 32;
  p.height = 24;
  p.target_spp = 7;
  const PathTracerStrands w = make_path_tracer_strands(view, p);
  const StrandRun<PathTracerStrands> run = path_tracer_strand_strategies().find("sequential").make()->run(w, {});
  auto film7 = render_room_film(32, 24, 7, 2);
  expect_strands_are_the_film(w, run, film7->film());

  // The registry's workload: defaults, and its image against the film's display.
  const PathTracerStrands d = path_tracer_workload(32, 24, Side::Host);
  EXPECT_EQ(d.p.paths_per_pixel, 2u);
  EXPECT_EQ(d.p.target_spp, 32u);
  EXPECT_EQ(d.p.seed, 0u);
  const StrandRun<PathTracerStrands> run32 = path_tracer_strand_strategies().find("sequential").make()->run(d, {});
  auto film32 = render_room_film(32, 24, 32, 2);
  expect_strands_are_the_film(d, run32, film32->film());
  const StrandResult r = find_strand_workload("path-tracer").run("sequential", 32, 24, StrandRunSettings{}, true);
  std::vector<uint32_t> shown(32 * 24);
  tonemap_host(film32->film().host_view_synced(), ToneMapSettings{}, shown.data());
  EXPECT_EQ(rgba8(r.rgba), shown) << "the strand image is not the viewer's display of the film";
}

// Test 2: the CPU strategies run the same host code (no FMA clones), so cpu-parallel equals sequential
// exactly under any block size: statuses, steps and image bytes.
TEST(PathTracerStrands, CpuParallelMatchesSequentialExactlyForEveryBlockSize) {
  const StrandWorkloadEntry& e = find_strand_workload("path-tracer");
  const StrandResult seq = e.run("sequential", 48, 32, StrandRunSettings{}, true);
  ASSERT_EQ(seq.steps.size(), 48u * 32u);
  for (uint32_t s : seq.steps) ASSERT_EQ(s, 16u);  // 32 spp at 2 per update
  for (uint32_t block : {1u, 7u, 16u, 100u, 4096u}) {
    StrandRunSettings s;
    s.cpu_block = block;
    const StrandResult par = e.run("cpu-parallel", 48, 32, s, true);
    EXPECT_EQ(par.status, seq.status) << "block " << block;
    EXPECT_EQ(par.steps, seq.steps) << "block " << block;
    EXPECT_EQ(par.checksum(), seq.checksum()) << "block " << block;
    EXPECT_EQ(strand_disagreement(seq, par, StrandTolerance{}), "") << "block " << block << " (exact tolerance)";
    EXPECT_EQ(par.timing.super_steps, 16u) << "block " << block;
  }
}

// Test 3: strand i is slot i mod 16 of patch i / 16 (PatchGrid::pixel's slot → (x, y)), patches row-major;
// every pixel is written by exactly one strand, and the init state carries the strand's pixel.
TEST(PathTracerStrands, StrandsArePatchMajorAndEachPixelIsOneStrand) {
  const uint32_t W = 20, H = 12;  // 5 × 3 patches
  const SceneView view = shared_scene(kPathTracerStrandScene).host_view_at(W, H);
  PathTracerStrandParams p;
  p.width = W;
  p.height = H;
  const PathTracerStrands w = make_path_tracer_strands(view, p);
  ASSERT_EQ(w.num_strands(), W * H);
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < w.num_strands(); ++i) {
    const uint32_t patch = i / 16, slot = i % 16;
    const uint32_t x = (patch % (W / 4)) * 4 + slot % 4, y = (patch / (W / 4)) * 4 + slot / 4;
    EXPECT_EQ(w.pixel(i), y * W + x) << "strand " << i;
    int gx = 0, gy = 0;
    ASSERT_TRUE(PatchGrid(W, H).pixel(patch, static_cast<int>(slot), gx, gy));
    EXPECT_EQ(static_cast<uint32_t>(gx), x);
    EXPECT_EQ(static_cast<uint32_t>(gy), y);
    const PathTracerStrands::State s = w.init(i);
    EXPECT_EQ(s.x, x);
    EXPECT_EQ(s.y, y);
    EXPECT_EQ(s.spp, 0u);
    EXPECT_EQ(s.sum.x + s.sum.y + s.sum.z, 0.f);
    seen.insert(w.pixel(i));
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(W * H));
  EXPECT_EQ(*seen.rbegin(), W * H - 1);
  // The first 16 strands are the top-left 4 × 4 patch, row by row; strands 16..31 the patch to its right.
  const std::vector<uint32_t> first = {0, 1, 2, 3, W, W + 1, W + 2, W + 3, 2 * W, 2 * W + 1, 2 * W + 2, 2 * W + 3,
                                       3 * W, 3 * W + 1, 3 * W + 2, 3 * W + 3};
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(w.pixel(i), first[i]);
    EXPECT_EQ(w.pixel(16 + i), first[i] + 4);
  }
  // The run's result carries the map, so the steps heat map lands on the right pixels.
  const StrandResult r = find_strand_workload("path-tracer").run("sequential", 8, 4, StrandRunSettings{}, true);
  ASSERT_EQ(r.pixel.size(), 32u);
  EXPECT_EQ(r.pixel[4], 8u);   // slot 4 of patch 0: (0, 1)
  EXPECT_EQ(r.pixel[16], 4u);  // slot 0 of patch 1: (4, 0)
}

TEST(PathTracerStrands, UpdateIsOnePatchTaskExecutionAndStopsAtTheTarget) {
  const SceneView view = shared_scene(kPathTracerStrandScene).host_view_at(8, 8);
  PathTracerStrandParams p;
  p.width = p.height = 8;
  p.paths_per_pixel = 3;
  p.target_spp = 7;
  const PathTracerStrands w = make_path_tracer_strands(view, p);
  PathTracerStrands::State s = w.init(5);
  EXPECT_EQ(w.color(s, WorkStatus::Active).x, 0.f);  // black before the first sample
  EXPECT_EQ(w.update(s), WorkStatus::Active);
  EXPECT_EQ(s.spp, 3u);
  EXPECT_EQ(w.update(s), WorkStatus::Active);
  EXPECT_EQ(s.spp, 6u);
  EXPECT_EQ(w.update(s), WorkStatus::Stable);
  EXPECT_EQ(s.spp, 7u);  // the last execution traces the one sample left
  const PathTracerStrands::State done = s;
  EXPECT_EQ(w.update(s), WorkStatus::Stable);  // never more than the target
  EXPECT_EQ(std::memcmp(&s, &done, sizeof s), 0);
  const Vec3 c = w.color(s, WorkStatus::Stable);
  for (float v : {c.x, c.y, c.z}) {
    EXPECT_GE(v, 0.f);
    EXPECT_LE(v, 1.f);
  }
}

/// Runs f and expects an InputError naming `field` whose text contains `part`.
void expect_input_error(const std::function<void()>& f, const std::string& field, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// Test 4: sizes that are not whole patches, and the other parameters, are refused naming the field.
TEST(PathTracerStrands, BadSizeOrParametersAreInputErrorsNamingTheField) {
  const std::string multiple = "must be multiples of 4 for path-tracer (one strand per pixel of 4×4 patch tasks)";
  expect_input_error([] { path_tracer_workload(30, 30, Side::Host); }, "--size", "30x30: width and height " + multiple);
  expect_input_error([] { path_tracer_workload(32, 30, Side::Host); }, "--size", multiple);
  expect_input_error([] { path_tracer_workload(8192, 8, Side::Host); }, "--size", "out of range");
  const StrandWorkloadEntry& e = find_strand_workload("path-tracer");
  EXPECT_EQ(e.size_multiple, 4u);
  EXPECT_EQ(e.view_kind, StrandViewKind::Fixed);
  EXPECT_EQ(e.default_width, 800u);
  EXPECT_EQ(e.default_height, 600u);
  expect_input_error([&] { e.run("sequential", 30, 32, StrandRunSettings{}, true); }, "--size", multiple);
  expect_input_error([&] { e.check_size_multiple(6, 8, "--strand-size"); }, "--strand-size", "6x8: " + std::string("width"));
  EXPECT_NO_THROW(e.check_size_multiple(12, 8, "--size"));
  EXPECT_NO_THROW(find_strand_workload("mandelbrot").check_size_multiple(7, 3, "--size"));

  const SceneView view = shared_scene(kPathTracerStrandScene).host_view_at(16, 16);
  PathTracerStrandParams p;
  p.width = p.height = 16;
  p.paths_per_pixel = 0;
  expect_input_error([&] { make_path_tracer_strands(view, p); }, "paths_per_pixel", "[1, 64]");
  p.paths_per_pixel = 2;
  p.target_spp = 0;
  expect_input_error([&] { make_path_tracer_strands(view, p); }, "target_spp", "0 is out of range");
  p.target_spp = 8;
  p.width = 32;
  expect_input_error([&] { make_path_tracer_strands(view, p); }, "scene", "16x16");
}

TEST(PathTracerStrands, SceneIsLoadedOnceAndSharedAcrossSizes) {
  const Scene& a = shared_scene(kPathTracerStrandScene);
  EXPECT_EQ(&a, &shared_scene(kPathTracerStrandScene));
  EXPECT_EQ(a.name, "room");
  const SceneView v = shared_scene_view(kPathTracerStrandScene, 64, 48, Side::Host);
  EXPECT_EQ(v.quads, a.quads.data());
  EXPECT_EQ(v.width, 64);
  EXPECT_EQ(v.height, 48);
  // The view at a size is host_view() of the scene at that size, camera frame included, bit for bit.
  Scene sized = a;
  sized.width = 64;
  sized.height = 48;
  const SceneView ref = sized.host_view();
  EXPECT_EQ(std::memcmp(&v.camera, &ref.camera, sizeof(CameraFrame)), 0);
}

// Test 4 on the command line: one line naming --size, before any strand runs.
TEST(PathTracerStrandsCli, BadSizeIsOneLineNamingSize) {
  test::TempDir dir("pt-strands");
  const test::CliResult r =
      test::run_megaview(dir, "bench --workload path-tracer --size 30x30 --strategy sequential", "MEGAVIEW_FORCE_CPU=1");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("--size: 30x30: width and height must be multiples of 4 for path-tracer"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("image checksum"), std::string::npos) << "ran anyway: " << r.out;
}

// The bench runs the CPU strategies on the path tracer's patch tasks and finds them in exact agreement.
TEST(PathTracerStrandsCli, BenchRunsTheCpuStrategiesInAgreement) {
  test::TempDir dir("pt-strands");
  const test::CliResult r = test::run_megaview(
      dir, "bench --workload path-tracer --size 32x24 --strategy sequential,cpu-parallel --repeat 1",
      "MEGAVIEW_FORCE_CPU=1");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("bench: workload path-tracer 32x24 (768 strands)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("agreement: every strategy gave the same per-strand step counts and the same image within"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace mv
