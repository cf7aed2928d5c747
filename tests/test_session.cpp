// Session: live switching keeps the film, film-replacing changes are exception safe.
#include <gtest/gtest.h>

#include <numeric>

#include "app/core/session.h"
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
  EXPECT_EQ(film_samples(s), before + fs.step.paths);
  EXPECT_EQ(fs.total_paths, before + fs.step.paths);
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
  EXPECT_GT(fs.step.paths, 0u);
}

TEST(Session, AFailedSceneChangeKeepsTheOldScene) {
  Session s(small_cpu_session());
  EXPECT_THROW(s.load_scene("no-such-scene"), InputError);
  EXPECT_EQ(s.scene().name, "cornell");
  EXPECT_GT(s.advance().step.paths, 0u);
}

TEST(Session, RunsToExactlyTheTargetAndStops) {
  Session s(small_cpu_session());
  const FrameStats fs = s.run(0, 0);
  EXPECT_TRUE(fs.done);
  EXPECT_EQ(fs.finished_tasks, fs.num_tasks);
  EXPECT_EQ(fs.total_paths, 32u * 24u * 16u);
  EXPECT_EQ(s.advance().step.paths, 0u);
}

TEST(Session, GpuStrategiesAreRefusedWithoutAGpu) {
  SessionOptions o = small_cpu_session();
  o.strategy = "uniform";
  EXPECT_THROW(Session s(o), InputError);
}

}  // namespace
}  // namespace mv
