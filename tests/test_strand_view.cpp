// The viewer's strand mode without a window (app/session/strand_view.h): the worker-thread runner, the
// image and step heat map it shows, captures that never overwrite; on a GPU, every GPU strategy run
// through the viewer's code path shows the same mandelbrot image as sequential.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/session/image_io.h"
#include "app/session/strand_view.h"
#include "render/tonemap.h"
#include "test_support.h"

namespace mv {
namespace {

StrandRequest mandelbrot_request(const std::string& strategy, uint32_t w = 64, uint32_t h = 48) {
  StrandRequest r;
  r.workload = "mandelbrot";
  r.strategy = strategy;
  r.width = w;
  r.height = h;
  return r;
}

/// Waits (up to a minute) for the runner's next finished run.
StrandOutcome next_outcome(StrandRunner& runner) {
  for (int i = 0; i < 6000; ++i) {
    if (std::optional<StrandOutcome> o = runner.take()) return std::move(*o);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("no strand run finished within a minute");
}

// A run too big for memory is refused by size before anything is allocated, with the bytes needed and free.
TEST(StrandView, RunsThatCannotFitAreRefusedBeforeAllocating) {
  StrandRequest r;
  r.workload = "mandelbrot";
  r.strategy = "cpu-parallel";
  r.width = r.height = 1u << 20;  // 2^40 strands: 128 TiB at kStrandRunBytesPerStrand
  test::expect_input_error([&] { check_strand_run_fits(r, false); }, "", "size",
                           {"1048576x1048576 strands need about 134217728.0 MiB", "free host memory"});
  test::expect_input_error([&] { check_strand_run_fits(r, true); }, "", "size", {"134217728.0 MiB"});
  r.width = 64;
  r.height = 48;
  EXPECT_NO_THROW(check_strand_run_fits(r, false));
  EXPECT_NO_THROW(check_strand_run_fits(r, true));
}

TEST(StrandView, RunnerRunsOnItsThreadAndMatchesADirectRun) {
  int wakes = 0;
  std::mutex m;
  StrandRunner runner([&] {
    std::lock_guard<std::mutex> lock(m);
    ++wakes;
  });
  EXPECT_FALSE(runner.busy());
  const uint64_t id = runner.request(mandelbrot_request("sequential"));
  EXPECT_TRUE(runner.busy());
  const StrandOutcome o = next_outcome(runner);
  EXPECT_FALSE(runner.busy());
  ASSERT_FALSE(o.error);
  EXPECT_EQ(o.request.id, id);
  EXPECT_EQ(o.stats.count, 64u * 48u);
  EXPECT_GT(o.stats.mean, 0.0);
  EXPECT_EQ(o.result.rgba.size(), 64u * 48u * 4u);
  const StrandOutcome direct = run_strand_request(mandelbrot_request("sequential"));
  EXPECT_EQ(o.result.checksum(), direct.result.checksum());
  EXPECT_EQ(strand_image_rgba8(o.result), strand_image_rgba8(direct.result));
  std::lock_guard<std::mutex> lock(m);
  EXPECT_EQ(wakes, 1);
}

TEST(StrandView, AFailedRunIsReportedNotThrown) {
  StrandRunner runner;
  runner.request(mandelbrot_request("warp-drive"));
  StrandOutcome o = next_outcome(runner);
  ASSERT_TRUE(o.error);
  EXPECT_THROW(std::rethrow_exception(o.error), InputError);
  StrandRequest bad = mandelbrot_request("sequential", 0, 10);  // size out of range
  runner.request(bad);
  o = next_outcome(runner);
  EXPECT_TRUE(o.error);
  // The runner keeps working after errors.
  runner.request(mandelbrot_request("cpu-parallel"));
  EXPECT_FALSE(next_outcome(runner).error);
}

TEST(StrandView, ANewRequestReplacesTheQueuedOneAndRunsLast) {
  StrandRunner runner;
  for (const char* s : {"sequential", "cpu-parallel", "sequential", "cpu-parallel"})
    runner.request(mandelbrot_request(s, 200, 150));
  std::vector<StrandOutcome> done;
  while (runner.busy()) {
    if (std::optional<StrandOutcome> o = runner.take())
      done.push_back(std::move(*o));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(done.size(), 1u);
  ASSERT_LE(done.size(), 2u);  // at most the one in flight when the later ones came, and the last
  EXPECT_EQ(done.back().request.id, 4u);
  EXPECT_EQ(done.back().request.strategy, "cpu-parallel");
}

TEST(StrandView, ImageIsClampedOverBlackAndHeatMapSpansTheRunsSteps) {
  StrandResult r;
  r.width = 3;
  r.height = 1;
  r.rgba = {2.f, 0.5f, -1.f, 1.f, /**/ 1.f, 1.f, 1.f, 0.f, /**/ 0.25f, 0.25f, 0.25f, 1.f};
  r.steps = {0, 5, 10};
  const std::vector<uint32_t> img = strand_image_rgba8(r);
  ASSERT_EQ(img.size(), 3u);
  EXPECT_EQ(img[0], 0xff0080ffu);  // R 255, G 128, B 0
  EXPECT_EQ(img[1], 0xff000000u);  // alpha 0: the black background
  EXPECT_EQ(img[2] & 0xffu, 64u);  // gamma 1 by default
  EXPECT_EQ(strand_image_rgba8(r, 2.f)[2] & 0xffu, 128u);
  const std::vector<uint32_t> heat = strand_heat_rgba8(r);
  EXPECT_EQ(heat[0], pack_rgba8(heat_color(0.f)));
  EXPECT_EQ(heat[1], pack_rgba8(heat_color(0.5f)));
  EXPECT_EQ(heat[2], pack_rgba8(heat_color(1.f)));
  // With a strand → pixel map (path-tracer's patch-major order) each strand's steps land on its pixel.
  r.pixel = {2, 0, 1};
  const std::vector<uint32_t> mapped = strand_heat_rgba8(r);
  EXPECT_EQ(mapped[2], pack_rgba8(heat_color(0.f)));
  EXPECT_EQ(mapped[0], pack_rgba8(heat_color(0.5f)));
  EXPECT_EQ(mapped[1], pack_rgba8(heat_color(1.f)));
}

TEST(StrandView, CapturesNeverOverwriteAndTheSidecarDescribesTheRun) {
  test::TempDir dir("strandcap");
  const StrandOutcome o = run_strand_request(mandelbrot_request("sequential"));
  ASSERT_FALSE(o.error);
  const std::vector<uint32_t> shown = strand_image_rgba8(o.result);
  const auto [png1, json1] = capture_strands(o, shown, false, dir.str());
  const auto [png2, json2] = capture_strands(o, strand_heat_rgba8(o.result), true, dir.str());
  EXPECT_NE(png1, png2);
  EXPECT_NE(png1.find("mandelbrot-sequential-0001.png"), std::string::npos) << png1;
  EXPECT_NE(png2.find("mandelbrot-sequential-0002.png"), std::string::npos) << png2;
  int w = 0, h = 0;
  EXPECT_EQ(read_png(png1, w, h), shown);
  EXPECT_EQ(w, 64);
  EXPECT_EQ(h, 48);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json2));
  EXPECT_EQ(j["workload"], "mandelbrot");
  EXPECT_EQ(j["strategy"], "sequential");
  EXPECT_EQ(j["capture"]["shown"], "steps heat map");
  EXPECT_EQ(j["steps"]["count"], 64 * 48);
  EXPECT_NEAR(j["steps"]["mean"].get<double>(), o.stats.mean, 1e-9);
  EXPECT_EQ(j["timing"]["clock"], "wall-clock");
  // The fields every mode's sidecar starts with (app/session/capture.h, sidecar_header).
  for (const char* key : {"megaview_version", "timestamp", "workload", "strategy", "knobs", "device"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["device"]["runs_on"], "cpu");
  EXPECT_EQ(j["knobs"]["grid"], "auto");
}

// All nine strategies run in the GUI: the GPU ones through the viewer's path (runner →
// image → RGBA8) show exactly sequential's mandelbrot.
// Active strands after each super-step: the survival count of the step counts, downsampled to at most
// max_points + 1 entries, starting at all strands and ending at 0.
TEST(StrandView, ActiveStrandsCurveIsTheStepCountsSurvival) {
  const std::vector<uint32_t> steps = {1, 1, 2, 3, 3, 3, 5, 0};  // one strand never updated
  // Entry 0: every strand before the first super-step; then the strands with more than k updates.
  EXPECT_EQ(active_strands_curve(steps), (std::vector<float>{8, 5, 4, 1, 1, 0}));  // k = 0 … 5
  // Stride 2 (max 5, 3 points): k = 0, 2, 4, then the end.
  EXPECT_EQ(active_strands_curve(steps, 3), (std::vector<float>{8, 4, 1, 0}));
  EXPECT_TRUE(active_strands_curve({}).empty());
  EXPECT_EQ(active_strands_curve({0, 0}), (std::vector<float>{2, 0}));
  // A long run: never more than max_points + 1 entries, monotone, from N to 0.
  std::vector<uint32_t> many(10000);
  for (uint32_t i = 0; i < many.size(); ++i) many[i] = (i * 7919u) % 1901u;
  const std::vector<float> c = active_strands_curve(many, 256);
  EXPECT_LE(c.size(), 257u);
  EXPECT_EQ(c.front(), 10000.f);
  EXPECT_EQ(c.back(), 0.f);
  EXPECT_TRUE(std::is_sorted(c.rbegin(), c.rend()));
}

// The fill-in replay reveals strands in their finish order: nothing at 0, the first round(f·N) places at f,
// never-finished strands last, everything at 1; it never goes backwards.
TEST(StrandView, ReplayRevealsStrandsInTheirFinishOrder) {
  const uint32_t bg = 0xff000000u;
  const std::vector<uint32_t> image = {11, 12, 13, 14, 15, 16};
  // Strand 4 never finished; the others finished in the order 2, 0, 5, 1, 3.
  const std::vector<uint32_t> order = {1, 3, 0, 4, kStrandNotFinished, 2};
  StrandReplay replay(image, order, {}, bg);
  EXPECT_EQ(replay.image(), std::vector<uint32_t>(6, bg));
  EXPECT_FALSE(replay.advance(0.0));
  EXPECT_TRUE(replay.advance(0.5));  // round(3.0) = 3 places: strands 2, 0, 5
  EXPECT_EQ(replay.image(), (std::vector<uint32_t>{11, bg, 13, bg, bg, 16}));
  EXPECT_EQ(replay.shown(), 3u);
  EXPECT_FALSE(replay.advance(0.4)) << "a replay never goes backwards";
  EXPECT_TRUE(replay.advance(0.8));  // round(4.8) = 5: strands 1 and 3 too, the unfinished 4 still hidden
  EXPECT_EQ(replay.image(), (std::vector<uint32_t>{11, 12, 13, 14, bg, 16}));
  EXPECT_FALSE(replay.done());
  EXPECT_TRUE(replay.advance(7.0));  // clamped to 1
  EXPECT_EQ(replay.image(), image);
  EXPECT_TRUE(replay.done());
  EXPECT_THROW(StrandReplay(image, std::vector<uint32_t>(5, 0u)), std::invalid_argument);
  // With a strand → pixel map (path-tracer's patch-major strands): strand s lights pixel map[s].
  const std::vector<uint32_t> map = {5, 4, 3, 2, 1, 0};
  StrandReplay mapped(image, order, map, bg);
  mapped.advance(0.5);  // strands 2, 0, 5 → pixels 3, 5, 0
  EXPECT_EQ(mapped.image(), (std::vector<uint32_t>{11, bg, bg, 14, bg, 16}));
  EXPECT_THROW(StrandReplay(image, order, std::vector<uint32_t>{0, 1, 2, 3, 4, 6}), std::invalid_argument);
}

// What the replay shows on a real run: sequential finishes strands in index order; cpu-parallel is BSP, so
// every strand with fewer steps finishes before every strand with more; the task strategy on the CPU
// records a permutation too; without the setting nothing is recorded.
TEST(StrandView, FinishOrderIsRecordedByTheCpuStrategiesAndIsAPermutation) {
  const StrandWorkloadEntry& w = find_strand_workload("mandelbrot");
  StrandRunSettings s;
  s.record_finish_order = true;
  for (const char* name : {"sequential", "cpu-parallel", "sequential-priority"}) {
    const StrandResult r = w.run(name, 64, 48, s, false);
    ASSERT_EQ(r.finish_order.size(), r.steps.size()) << name;
    std::vector<uint32_t> sorted = r.finish_order;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i) << name << ": not a permutation";
    if (std::string(name) == "sequential")
      for (uint32_t i = 0; i < r.finish_order.size(); ++i) ASSERT_EQ(r.finish_order[i], i);
    if (std::string(name) == "cpu-parallel")
      for (uint32_t i = 0; i < r.steps.size(); ++i)
        for (uint32_t j = i % 97; j < r.steps.size(); j += 97)
          if (r.steps[i] < r.steps[j]) ASSERT_LT(r.finish_order[i], r.finish_order[j]) << i << " vs " << j;
  }
  EXPECT_TRUE(w.run("sequential", 16, 16, {}, false).finish_order.empty());
}

TEST(StrandViewGpu, EveryGpuStrategyShowsSequentialsMandelbrot) {
  MV_REQUIRE_GPU();
  StrandRunner runner;
  runner.request(mandelbrot_request("sequential", 320, 240));
  const StrandOutcome seq = next_outcome(runner);
  ASSERT_FALSE(seq.error);
  const std::vector<uint32_t> want = strand_image_rgba8(seq.result);
  for (const StrategyInfo& info : find_strand_workload("mandelbrot").strategies) {
    if (!info.needs_gpu()) continue;
    StrandRequest r = mandelbrot_request(info.name, 320, 240);
    if (info.uses_grid && info.name.find("batch") != std::string::npos) r.settings.grid = make_grid(64, 128, 1);
    if (info.reads("work-unit")) r.settings.grid = make_grid(128, 64, 4);
    runner.request(r);
    const StrandOutcome o = next_outcome(runner);
    ASSERT_FALSE(o.error) << info.name;
    EXPECT_EQ(strand_image_rgba8(o.result), want) << info.name;
    EXPECT_EQ(o.result.steps, seq.result.steps) << info.name;
    EXPECT_TRUE(o.result.timing.cuda_events) << info.name;
    if (info.reads("task-quantum"))  // launches are per step or wave there, not tracked; the notes say what ran
      EXPECT_NE(o.result.timing.notes.find("task executions"), std::string::npos) << o.result.timing.notes;
    else
      EXPECT_GT(o.result.timing.launches, 0u) << info.name;
  }
}

}  // namespace
}  // namespace mv
