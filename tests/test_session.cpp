// Session: live switching keeps the film, film-replacing changes are exception safe.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "app/session/image_io.h"
#include "app/session/session.h"
#include "render/pathtracer/scene_io.h"
#include "test_support.h"

namespace mv {
namespace {

SessionOptions small_cpu_session() {
  SessionOptions o;
  o.scene = "cornell";
  o.width = 32;
  o.height = 24;
  o.force_cpu = true;
  o.strategy = "sequential";
  o.task.target_spp = 16;
  o.paths_per_frame = 32 * 24 * 2;
  return o;
}

uint64_t film_samples(Session& s) {
  const auto& spp = s.workload().film().host_spp();
  return std::accumulate(spp.begin(), spp.end(), uint64_t{0});
}

TEST(Session, SwitchingStrategyAndPriorityKeepsTheFilm) {
  Session s(small_cpu_session());
  s.advance();
  const uint64_t before = film_samples(s);
  ASSERT_GT(before, 0u);
  s.set_strategy("cpu-parallel");
  s.set_priority(PriorityFunction::Variance);
  s.set_paths_per_pixel(4);
  EXPECT_EQ(film_samples(s), before);
  const FrameStats fs = s.advance();
  EXPECT_EQ(film_samples(s), before + fs.step.work);
  EXPECT_EQ(fs.total_paths, before + fs.step.work);
}

TEST(Session, CameraAndSeedChangesResetTheFilm) {
  Session s(small_cpu_session());
  s.advance();
  Camera cam = s.scene().camera;
  cam.position = cam.position + Vec3{1.f, 0.f, 0.f};
  s.set_camera(cam);
  EXPECT_EQ(film_samples(s), 0u);
  EXPECT_EQ(s.last().total_paths, 0u);
  s.advance();
  s.set_seed(7);
  EXPECT_EQ(film_samples(s), 0u);
}

TEST(Session, AFailedResolutionChangeKeepsAWorkingSession) {
  Session s(small_cpu_session());
  s.advance();
  EXPECT_THROW(s.set_resolution(2, 2), InputError);
  EXPECT_EQ(s.width(), 32u);
  EXPECT_EQ(s.height(), 24u);
  EXPECT_EQ(s.options().width, 32);
  const FrameStats fs = s.advance();
  EXPECT_GT(fs.step.work, 0u);
}

TEST(Session, AFailedSceneChangeKeepsTheOldScene) {
  Session s(small_cpu_session());
  EXPECT_THROW(s.load_scene("no-such-scene"), InputError);
  EXPECT_EQ(s.scene().name, "cornell");
  EXPECT_GT(s.advance().step.work, 0u);
}

/// cornell.json copied into `dir` with its "reference" set to `reference` (relative to `dir`).
std::string cornell_with_reference(const test::TempDir& dir, const std::string& reference) {
  std::ifstream in(default_scene_dir() + "/cornell.json");
  nlohmann::json scene = nlohmann::json::parse(in);
  scene["reference"] = reference;
  std::ofstream(dir / "cornell.json") << scene.dump(2);
  return dir / "cornell.json";
}

// A scene's reference that cannot be read is the scene's error, naming the file; one of another size than
// the film is skipped (it belongs to the scene's own size), as is one that does not exist.
TEST(Session, AnUnreadableSceneReferenceIsAnErrorNamingItAndAnotherSizeIsSkipped) {
  test::TempDir dir("session");
  std::ofstream(dir / "bad.exr") << "not an EXR at all";
  SessionOptions o = small_cpu_session();
  o.scene = cornell_with_reference(dir, "bad.exr");
  test::expect_input_error([&] { Session s(o); }, dir / "bad.exr", "", {"cannot read EXR"});
  // --reference: the same error.
  SessionOptions r = small_cpu_session();
  r.reference = dir / "bad.exr";
  test::expect_input_error([&] { Session s(r); }, dir / "bad.exr", "", {"cannot read EXR"});
  r.reference = dir / "missing.exr";
  test::expect_input_error([&] { Session s(r); }, dir / "missing.exr", "", {"cannot read EXR"});

  const std::vector<float> rgb(16 * 12 * 3, 0.25f);
  write_exr(dir / "small.exr", rgb.data(), 16, 12);
  o.scene = cornell_with_reference(dir, "small.exr");
  {
    Session s(o);  // 32 x 24: the 16 x 12 reference does not apply
    EXPECT_FALSE(s.has_reference());
  }
  o.width = 16;
  o.height = 12;
  {
    Session s(o);
    EXPECT_TRUE(s.has_reference());
    EXPECT_EQ(s.reference_path(), dir / "small.exr");
  }
  o.scene = cornell_with_reference(dir, "nowhere.exr");
  EXPECT_FALSE(Session(o).has_reference());
}

TEST(Session, RunsToExactlyTheTargetAndStops) {
  Session s(small_cpu_session());
  const FrameStats fs = s.run(0, 0);
  EXPECT_TRUE(fs.done);
  EXPECT_EQ(fs.finished_tasks, fs.num_tasks);
  EXPECT_EQ(fs.total_paths, 32u * 24u * 16u);
  EXPECT_EQ(s.advance().step.work, 0u);
}

TEST(Session, GpuStrategiesAreRefusedWithoutAGpu) {
  SessionOptions o = small_cpu_session();
  o.strategy = "uniform";
  EXPECT_THROW(Session s(o), InputError);
}

TEST(Session, DefaultStrategyIsCpuWavesWithoutAGpuAndTheMegakernelWithOne) {
  SessionOptions o = small_cpu_session();
  o.strategy.clear();
  EXPECT_EQ(Session(o).strategy().name, "cpu-waves");
  if (!gpu_available()) return;
  o.force_cpu = false;
  EXPECT_EQ(Session(o).strategy().name, "megakernel");
}

MegakernelSettings unusual_megakernel_settings() {
  MegakernelSettings m;
  m.queue = QueueDesign::Kerbl;  // the controller settings below apply to Kerbl's queue
  m.buckets = 16;
  m.quantum_max = 8;
  m.segment_size = 64;
  m.controllers = 4;
  m.controller = false;
  m.time_management = false;
  m.buffer_multiplier = 2.f;
  m.record_order = true;
  return m;
}

/// The same settings as the text of every megakernel knob (base/params.h), as the CLI and the GUI give them.
ParamValues knobs_of(MegakernelSettings m) { return BoundParams<MegakernelSettings>(megakernel_params(), m).values(); }

void expect_same(const MegakernelSettings& a, const MegakernelSettings& b) {
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.buckets, b.buckets);
  EXPECT_EQ(a.quantum_max, b.quantum_max);
  EXPECT_EQ(a.segment_size, b.segment_size);
  EXPECT_EQ(a.controllers, b.controllers);
  EXPECT_EQ(a.controller, b.controller);
  EXPECT_EQ(a.time_management, b.time_management);
  EXPECT_EQ(a.buffer_multiplier, b.buffer_multiplier);
  EXPECT_EQ(a.record_order, b.record_order);
  EXPECT_EQ(a.blocks_per_sm, b.blocks_per_sm);
}

// The megakernel's settings are knobs of the Session like any strategy's (one path for the GUI and the
// command line): kept while another strategy runs, validated before anything changes, never touching the film.
TEST(Session, MegakernelKnobsRoundTripAndAreValidatedWithoutTouchingTheFilm) {
  Session s(small_cpu_session());
  EXPECT_EQ(s.megakernel(), nullptr) << "a CPU strategy is not the megakernel";
  s.advance();
  const uint64_t before = film_samples(s);
  const ParamValues m = knobs_of(unusual_megakernel_settings());
  for (const auto& [name, text] : m) s.set_knob(name, text);
  EXPECT_EQ(s.options().knobs, m);
  EXPECT_EQ(film_samples(s), before);
  EXPECT_EQ(s.last().total_paths, before);

  try {
    s.set_knob("segment-size", "100");
    ADD_FAILURE() << "segment size 100 was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--segment-size") << e.what();
  }
  EXPECT_THROW(s.set_knob("controllers", "65"), InputError);
  EXPECT_THROW(s.set_knob("buffer-multiplier", "0"), InputError);
  EXPECT_THROW(s.set_knob("no-such-knob", "1"), InputError);
  EXPECT_EQ(s.options().knobs, m);  // unchanged by the failures
  EXPECT_EQ(film_samples(s), before);
}

TEST(Session, BadMegakernelOptionsAreRefusedAtConstruction) {
  SessionOptions o = small_cpu_session();
  o.knobs["segment-size"] = "48";
  EXPECT_THROW(Session s(o), InputError);
}

// ---- GPU ----

TEST(SessionGpu, MegakernelKnobsReachTheStrategyAndItsStatsTheSession) {
  MV_REQUIRE_GPU();
  SessionOptions o = small_cpu_session();
  o.force_cpu = false;
  o.strategy = "uniform";
  MegakernelSettings m = unusual_megakernel_settings();
  o.knobs = knobs_of(m);
  Session s(o);
  EXPECT_EQ(s.megakernel(), nullptr);
  s.set_strategy("megakernel");
  ASSERT_NE(s.megakernel(), nullptr);
  expect_same(s.megakernel()->settings(), m);
  EXPECT_EQ(s.megakernel()->stats().slices, 0u);
  m.controller = true;
  m.segment_size = 32;
  s.set_knob("controller", "on");
  s.set_knob("segment-size", "32");
  expect_same(s.megakernel()->settings(), m);
  const FrameStats fs = s.advance();
  EXPECT_GT(fs.step.tasks, 0u);
  const MegakernelStats& k = s.megakernel()->stats();
  EXPECT_EQ(k.slices, 1u);
  EXPECT_EQ(k.controllers, 4u);
  EXPECT_GT(k.worker_warps, 0u);
  EXPECT_GE(k.order_score, 0.0) << "record_order is on";
  EXPECT_EQ(k.empty_executions, 0u);
}

// The megakernel is the viewer's default and switches live. Uniform → megakernel (two segment
// sizes) → sorted-waves → megakernel: the film is kept at every switch and the render ends with every
// pixel at exactly the target.
TEST(SessionGpu, SwitchingToTheMegakernelMidRenderAndBackKeepsTheFilmAndEndsAtTheTarget) {
  MV_REQUIRE_GPU();
  SessionOptions o;
  o.scene = "cornell";
  o.width = 64;
  o.height = 48;
  o.strategy = "uniform";
  o.task.target_spp = 64;
  o.task.priority = PriorityFunction::Variance;
  o.paths_per_frame = 64 * 48 * 4;  // 4 spp a step: many steps to the target
  Session s(o);
  uint64_t expected = 0;
  const auto step = [&] {
    const FrameStats fs = s.advance();
    expected += fs.step.work;
    EXPECT_EQ(film_samples(s), expected);
    EXPECT_EQ(fs.total_paths, expected);
  };
  const auto switch_to = [&](const char* name) {
    s.set_strategy(name);
    EXPECT_EQ(film_samples(s), expected) << "switching to " << name;
  };
  step();
  ASSERT_GT(expected, 0u);
  switch_to("megakernel");
  step();
  step();
  s.set_knob("segment-size", "64");  // rebuilds the queue from the film at the next step
  const MegakernelSettings m = s.megakernel()->settings();
  EXPECT_EQ(m.segment_size, 64u);
  EXPECT_EQ(film_samples(s), expected);
  step();
  EXPECT_EQ(s.megakernel()->stats().slices, 1u) << "a new segment size rebuilds the queue";
  switch_to("sorted-waves");
  EXPECT_EQ(s.megakernel(), nullptr);
  step();
  switch_to("megakernel");
  expect_same(s.megakernel()->settings(), m);
  const FrameStats last = s.run(0, 0);
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.finished_tasks, last.num_tasks);
  EXPECT_EQ(last.total_paths, 64u * 48u * 64u);
  for (uint32_t n : s.workload().film().host_spp()) ASSERT_EQ(n, 64u);
  EXPECT_EQ(s.megakernel()->stats().empty_executions, 0u);
}

}  // namespace
}  // namespace mv
