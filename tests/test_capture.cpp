// Captures (app/session/capture.h): fresh numbered stems, nothing ever overwritten, sidecars that say
// exactly what was rendered, and files that hold what the session shows.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "app/session/capture.h"
#include "app/session/image_io.h"
#include "app/session/lattice_run.h"
#include "render/pathtracer/scene_io.h"
#include "test_support.h"

namespace mv {
namespace {

namespace fs = std::filesystem;



/// The room at 32×24 (8×6 patches) on the CPU, rendered to its 4 spp target.
SessionOptions small_room() {
  SessionOptions o;
  o.scene = "room";
  o.width = 32;
  o.height = 24;
  o.force_cpu = true;
  o.strategy = "cpu-parallel";
  o.task.target_spp = 4;
  o.task.seed = 7;
  o.task.priority = PriorityFunction::Variance;
  return o;
}

TEST(Capture, TwoCapturesGetDistinctStemsAndFourNonEmptyFiles) {
  test::TempDir dir("capture");
  Session s(small_room());
  s.run(0, 0);
  const CaptureResult a = capture(s, ToneMapSettings{}, dir.str());
  const CaptureResult b = capture(s, ToneMapSettings{}, dir.str());
  EXPECT_EQ(a.json, dir / "room-cpu-parallel-variance-0001.json");
  EXPECT_EQ(b.json, dir / "room-cpu-parallel-variance-0002.json");
  for (const CaptureResult& r : {a, b})
    for (const std::string& f : {r.png, r.exr, r.heat_png, r.json}) {
      ASSERT_TRUE(fs::is_regular_file(f)) << f;
      EXPECT_GT(fs::file_size(f), 0u) << f;
    }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 8);  // no temporaries left
}

TEST(Capture, AHiddenSceneNameNeverMakesAHiddenCapture) {
  test::TempDir dir("capture");
  std::string text = test::slurp(std::string(MV_SOURCE_DIR) + "/scenes/room.json");
  text.replace(text.find("\"room\""), 6, "\".hidden\"");
  std::ofstream(dir / "hidden.json") << text;
  SessionOptions o = small_room();
  o.scene = dir / "hidden.json";
  Session s(o);
  ASSERT_EQ(s.scene().name, ".hidden");
  s.run(0, 0);
  const CaptureResult r = capture(s, ToneMapSettings{}, dir / "caps");
  EXPECT_EQ(r.json, dir / "caps/_hidden-cpu-parallel-variance-0001.json");
  for (const auto& e : fs::directory_iterator(dir / "caps")) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST(Capture, NeverOverwritesAFileThatHasTheNextStem) {
  test::TempDir dir("capture");
  Session s(small_room());
  s.run(0, 0);
  capture(s, ToneMapSettings{}, dir.str());  // takes 0001
  const std::string png2 = dir / "room-cpu-parallel-variance-0002.png";
  const std::string json3 = dir / "room-cpu-parallel-variance-0003.json";
  { std::ofstream(png2, std::ios::binary) << "a user's picture"; }
  { std::ofstream(json3, std::ios::binary) << "{\"mine\": true}"; }

  const CaptureResult r = capture(s, ToneMapSettings{}, dir.str());
  EXPECT_EQ(r.json, dir / "room-cpu-parallel-variance-0004.json");
  EXPECT_EQ(test::slurp(png2), "a user's picture");
  EXPECT_EQ(test::slurp(json3), "{\"mine\": true}");
  EXPECT_FALSE(fs::exists(dir / "room-cpu-parallel-variance-0002.json"))
      << "the claim of a skipped number stays behind";
  EXPECT_FALSE(fs::exists(dir / "room-cpu-parallel-variance-0003.png"));
}

TEST(Capture, ConcurrentCapturesNeverShareANumber) {
  test::TempDir dir("capture");
  Session s1(small_room()), s2(small_room());
  s1.run(0, 0);
  s2.run(0, 0);
  std::vector<CaptureResult> r1, r2;
  auto shoot = [&](Session& s, std::vector<CaptureResult>& out) {
    for (int i = 0; i < 6; ++i) out.push_back(capture(s, ToneMapSettings{}, dir.str()));
  };
  std::thread t1(shoot, std::ref(s1), std::ref(r1)), t2(shoot, std::ref(s2), std::ref(r2));
  t1.join();
  t2.join();
  std::set<std::string> stems;
  for (const auto* v : {&r1, &r2})
    for (const CaptureResult& r : *v) {
      stems.insert(r.json);
      EXPECT_TRUE(fs::is_regular_file(r.exr));
    }
  EXPECT_EQ(stems.size(), 12u);
  EXPECT_TRUE(fs::exists(dir / "room-cpu-parallel-variance-0012.json"));
}

TEST(Capture, SidecarDescribesTheSession) {
  test::TempDir dir("capture");
  Session s(small_room());
  const std::vector<float> ref(32 * 24 * 3, 0.25f);
  write_exr(dir / "ref.exr", ref.data(), 32, 24);
  s.load_reference(dir / "ref.exr");
  s.run(0, 0);
  ToneMapSettings tm;
  tm.mode = ToneMapMode::MaxToWhite;
  const CaptureResult r = capture(s, tm, dir / "shots", {{"note", "from the test"}});
  const nlohmann::json j = nlohmann::json::parse(test::slurp(r.json));

  for (const char* key : {"megaview_version",
                          "timestamp",
                          "scene",
                          "resolution",
                          "strategy",
                          "priority",
                          "paths_per_pixel",
                          "target_spp",
                          "seed",
                          "wave_size",
                          "block_size",
                          "paths_per_frame",
                          "spp",
                          "patches",
                          "total_paths",
                          "busy_ms",
                          "samples_per_second",
                          "mse",
                          "reference",
                          "display",
                          "device",
                          "capture"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["scene"]["name"], "room");
  EXPECT_TRUE(fs::equivalent(j["scene"]["file"].get<std::string>(), resolve_scene_path("room")));
  EXPECT_EQ(j["strategy"], "cpu-parallel");
  EXPECT_EQ(j["priority"], "variance");
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["resolution"]["width"], 32);
  EXPECT_EQ(j["resolution"]["height"], 24);
  EXPECT_EQ(j["spp"]["min"], 4);
  EXPECT_EQ(j["spp"]["max"], 4);
  EXPECT_EQ(j["patches"]["finished"], 48);
  EXPECT_EQ(j["patches"]["total"], 48);
  EXPECT_EQ(j["total_paths"], 32 * 24 * 4);
  EXPECT_GT(j["busy_ms"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["mse"].get<double>(), s.mse());
  EXPECT_EQ(j["reference"], dir / "ref.exr");
  EXPECT_EQ(j["display"]["tone_map"], "max-to-white");
  EXPECT_EQ(j["device"]["runs_on"], "cpu");
  EXPECT_FALSE(j.contains("megakernel")) << "only the megakernel's captures carry its settings and statistics";
  EXPECT_EQ(j["note"], "from the test");
  EXPECT_EQ(j["capture"]["exr"], fs::path(r.exr).filename().string());
  const std::string ts = j["timestamp"];
  ASSERT_EQ(ts.size(), 20u) << ts;  // 2025-01-31T12:34:56Z
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts.back(), 'Z');
}

// Captures carry the scheduler's settings and statistics (the writers' fields: test_megakernel_report).
TEST(CaptureGpu, MegakernelSidecarCarriesItsKnobsAndStatistics) {
  MV_REQUIRE_GPU();
  test::TempDir dir("capture");
  SessionOptions o = small_room();
  o.force_cpu = false;
  o.strategy = "megakernel";
  o.knobs = {{"segment-size", "32"}, {"controllers", "2"}, {"record-order", "on"},
             {"queue", "kerbl"}};  // controller blocks count only in Kerbl's queue
  Session s(o);
  s.advance();
  const CaptureResult r = capture(s, ToneMapSettings{}, dir / "shots");
  const nlohmann::json j = nlohmann::json::parse(test::slurp(r.json));
  ASSERT_TRUE(j.contains("megakernel")) << j.dump(2);
  const nlohmann::json& m = j["megakernel"];
  const nlohmann::json& k = j["knobs"];  // the settings, as every strategy's knobs
  EXPECT_EQ(k["segment_size"], 32);
  EXPECT_EQ(k["controllers"], 2);
  EXPECT_EQ(k["record_order"], true);
  EXPECT_EQ(k["queue"], "kerbl");
  EXPECT_FALSE(m.contains("settings")) << "one place for the settings";
  EXPECT_EQ(m["stats"]["slices"], 1);
  EXPECT_EQ(m["stats"]["controllers"], 2);
  EXPECT_GT(m["stats"]["worker_warps"].get<int>(), 0);
  EXPECT_TRUE(m["stats"]["sort_passes"].contains("sorted-sorted"));
  EXPECT_EQ(m["stats"]["empty_executions"], 0);
  EXPECT_EQ(j["device"]["runs_on"], "gpu");
}

// One sidecar schema: the film's and a lattice run's captures start with the same fields (a strand capture
// too: StrandView.CapturesNeverOverwriteAndTheSidecarDescribesTheRun).
TEST(Capture, EveryModesSidecarStartsWithTheSameFields) {
  test::TempDir dir("capture");
  Session film(small_room());
  film.advance();
  const nlohmann::json a = nlohmann::json::parse(test::slurp(capture(film, ToneMapSettings{}, dir.str()).json));
  auto gibbs = find_lattice_workload("gibbs")->make({{"width", "16"}, {"height", "16"}}, false);
  gibbs->advance(1.0);
  std::vector<uint32_t> shown;
  uint32_t w = 0, h = 0;
  gibbs->image(0, shown, w, h);
  const nlohmann::json b = nlohmann::json::parse(test::slurp(capture_lattice(*gibbs, 0, shown, w, h, dir.str(), {}).second));
  for (const nlohmann::json* j : {&a, &b}) {
    for (const char* key : {"megaview_version", "timestamp", "workload", "strategy", "knobs", "device"})
      EXPECT_TRUE(j->contains(key)) << key << " in " << j->dump();
    EXPECT_EQ(j->at("device").at("runs_on"), "cpu");
    EXPECT_TRUE(j->at("knobs").is_object());
  }
  EXPECT_EQ(a["workload"], "progressive");
  EXPECT_EQ(a["strategy"], film.strategy().name);
  EXPECT_EQ(b["workload"], "gibbs");
  EXPECT_EQ(b["knobs"]["width"], 16);
}

TEST(Capture, FilesHoldWhatTheSessionShows) {
  test::TempDir dir("capture");
  Session s(small_room());
  s.run(0, 0);
  ToneMapSettings tm;
  tm.exposure_ev = 1.f;
  const CaptureResult r = capture(s, tm, dir.str());

  const ImageRgb exr = read_exr(r.exr);
  ASSERT_EQ(exr.width, 32);
  ASSERT_EQ(exr.height, 24);
  EXPECT_EQ(exr.rgb, s.mean_image());  // float32, bit for bit

  int w = 0, h = 0;
  std::vector<uint32_t> shown;
  s.tonemap_to_host(tm, shown);
  EXPECT_EQ(read_png(r.png, w, h), shown);
  EXPECT_EQ(w, 32);
  EXPECT_EQ(h, 24);

  // Every patch is finished: the heat map is the top colour of the ramp everywhere.
  const std::vector<uint32_t> heat = read_png(r.heat_png, w, h);
  ASSERT_EQ(heat.size(), 32u * 24u);
  for (uint32_t p : heat) ASSERT_EQ(p, pack_rgba8(heat_color(1.f)));
}

}  // namespace
}  // namespace mv
