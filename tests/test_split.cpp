// The split view's testable parts (app/session/split.h): --split parsing, the equal-budget rule,
// the divider column, which sides the Megakernel panel lists, the region MSE of render/metrics.h (host;
// device under SplitGpu), the composed image and capture_split's files (each side's megakernel object
// under SplitGpu).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/session/capture.h"
#include "app/session/image_io.h"
#include "app/session/session.h"
#include "app/session/split.h"
#include "base/errors.h"
#include "render/metrics.h"
#include "test_support.h"

namespace mv {
namespace {

namespace fs = std::filesystem;

TEST(SplitRules, ParsesStrategyAndOptionalPriority) {
  SplitSpec s = parse_split_spec("cpu-parallel:variance");
  EXPECT_EQ(s.strategy, "cpu-parallel");
  EXPECT_EQ(s.priority, "variance");
  s = parse_split_spec("sequential");
  EXPECT_EQ(s.strategy, "sequential");
  EXPECT_TRUE(s.priority.empty());
}

TEST(SplitRules, BadSpecsNameTheOptionAndWhatIsAllowed) {
  for (const char* bad : {"", ":variance", "cpu-parallel:", "warp-drive", "cpu-parallel:sparkle"}) {
    try {
      parse_split_spec(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--split: ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  try {
    parse_split_spec("warp-drive");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu-parallel"), std::string::npos) << e.what();  // the allowed names
  }
  try {
    parse_split_spec("cpu-parallel:sparkle");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("variance"), std::string::npos) << e.what();
  }
}

TEST(SplitRules, DefaultRightPriorityIsTheFig8Comparison) {
  EXPECT_EQ(default_right_priority(PriorityFunction::None), PriorityFunction::Variance);
  EXPECT_EQ(default_right_priority(PriorityFunction::Variance), PriorityFunction::None);
  EXPECT_EQ(default_right_priority(PriorityFunction::Convergence), PriorityFunction::None);
}

TEST(SplitRules, FollowerBudgetCatchesUpAndNeverGoesNegative) {
  EXPECT_EQ(split_follower_budget(1000, 0), 1000u);
  EXPECT_EQ(split_follower_budget(1000, 400), 600u);
  EXPECT_EQ(split_follower_budget(1000, 1000), 0u);
  EXPECT_EQ(split_follower_budget(1000, 1300), 0u);  // ahead after an overshoot: waits a frame
}

TEST(SplitRules, DividerColumnRoundsAndClamps) {
  EXPECT_EQ(split_column(0.5f, 64), 32);
  EXPECT_EQ(split_column(0.3f, 64), 19);  // 19.2
  EXPECT_EQ(split_column(0.f, 64), 0);
  EXPECT_EQ(split_column(1.f, 64), 64);
  EXPECT_EQ(split_column(-2.f, 64), 0);
  EXPECT_EQ(split_column(7.f, 64), 64);
  EXPECT_EQ(split_column(std::numeric_limits<float>::quiet_NaN(), 64), 32);
  EXPECT_EQ(split_column(0.5f, 0), 0);
}

/// A megakernel as the panel sees it (MegakernelControl), without a GPU.
class FakeMegakernel : public MegakernelControl {
 public:
  MegakernelSettings& settings() override { return settings_; }
  const MegakernelSettings& settings() const override { return settings_; }
  const MegakernelStats& stats() const override { return stats_; }

 private:
  MegakernelSettings settings_;
  MegakernelStats stats_;
};

TEST(SplitRules, TheMegakernelPanelListsEverySideOnceEitherRunsIt) {
  const FakeMegakernel a, b;
  // Single view: the session while it runs the megakernel, without a title; else nothing.
  EXPECT_TRUE(megakernel_panel_sides("uniform/variance", nullptr, false, "", nullptr).empty());
  std::vector<MegakernelPanelSide> s = megakernel_panel_sides("megakernel/variance", &a, false, "ignored", &b);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_FALSE(s[0].right);
  EXPECT_EQ(s[0].title, "");
  EXPECT_EQ(s[0].megakernel, &a);
  // Split view: nothing while neither side runs it…
  EXPECT_TRUE(megakernel_panel_sides("uniform/none", nullptr, true, "sorted-waves/variance", nullptr).empty());
  // …else both sides, left then right, each with its own megakernel or none.
  for (const auto& [left, right] : {std::pair<const MegakernelControl*, const MegakernelControl*>{&a, nullptr},
                                    {nullptr, &b}, {&a, &b}}) {
    s = megakernel_panel_sides("L/none", left, true, "R/variance", right);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_FALSE(s[0].right);
    EXPECT_TRUE(s[1].right);
    EXPECT_EQ(s[0].title, "left L/none");
    EXPECT_EQ(s[1].title, "right R/variance");
    EXPECT_EQ(s[0].megakernel, left);
    EXPECT_EQ(s[1].megakernel, right);
  }
}

/// A 4×2 film whose pixel i has mean (i, 0, 0) from one sample.
struct TinyFilm {
  Rgba32f sum[8], sq[8];
  uint32_t spp[8], patch_spp[1] = {1};
  FilmView view;
  TinyFilm() {
    for (int i = 0; i < 8; ++i) {
      sum[i] = {static_cast<float>(i), 0.f, 0.f, 0.f};
      spp[i] = 1;
    }
    view.grid = PatchGrid(4, 2);
    view.sum = sum;
    view.sum_sq = sq;
    view.spp = spp;
    view.patch_spp = patch_spp;
  }
};

TEST(RegionMse, MatchesAHandComputedCaseAndTheWholeFilm) {
  TinyFilm f;
  const std::vector<float> ref(24, 0.f);  // error of pixel i: i² (red only)
  // Columns [0, 1) are pixels 0 and 4: (0 + 16) / (2 pixels × 3 channels).
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion::columns(0, 1, 2)), 16.0 / 6.0);
  // Columns [1, 4): pixels 1, 2, 3, 5, 6, 7.
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion::columns(1, 4, 2)), (1 + 4 + 9 + 25 + 36 + 49) / 18.0);
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion::whole(4, 2)), mse_host(f.view, ref.data()));
  // A row and a single pixel.
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion{0, 1, 4, 2}), (16 + 25 + 36 + 49) / 12.0);
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion{2, 1, 3, 2}), 36.0 / 3.0);
}

TEST(RegionMse, HalvesWeightedByTheirPixelsGiveTheWholeAndEmptyOrOutsideRegionsClamp) {
  TinyFilm f;
  std::vector<float> ref(24);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = 0.25f * static_cast<float>(i % 5);
  const double whole = mse_host(f.view, ref.data());
  for (int c = 0; c <= 4; ++c) {
    const double left = mse_host(f.view, ref.data(), PixelRegion::columns(0, c, 2));
    const double right = mse_host(f.view, ref.data(), PixelRegion::columns(c, 4, 2));
    EXPECT_NEAR((c * left + (4 - c) * right) / 4.0, whole, 1e-12) << "column " << c;
  }
  EXPECT_EQ(mse_host(f.view, ref.data(), PixelRegion::columns(2, 2, 2)), 0.0);
  EXPECT_EQ(mse_host(f.view, ref.data(), PixelRegion::columns(3, 1, 2)), 0.0);  // x1 < x0: empty
  EXPECT_DOUBLE_EQ(mse_host(f.view, ref.data(), PixelRegion{-5, -5, 100, 100}), whole);
  const PixelRegion r = clamp_region(PixelRegion{-1, 1, 9, 9}, 4, 2);
  EXPECT_EQ(r.x0, 0);
  EXPECT_EQ(r.x1, 4);
  EXPECT_EQ(r.y0, 1);
  EXPECT_EQ(r.y1, 2);
  EXPECT_EQ(region_pixels(r), 4u);
}

/// The room at 32×24 on the CPU with a test reference, so MSE is defined.
SessionOptions small_room(const test::TempDir& dir, PriorityFunction priority) {
  const std::string ref = dir / "ref.exr";
  if (!fs::exists(ref)) {
    std::vector<float> rgb(32 * 24 * 3);
    for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = 0.1f + 0.4f * static_cast<float>(i % 13) / 13.f;
    write_exr(ref, rgb.data(), 32, 24);
  }
  SessionOptions o;
  o.scene = "room";
  o.width = 32;
  o.height = 24;
  o.force_cpu = true;
  o.strategy = "cpu-parallel";
  o.task.target_spp = 64;
  o.task.priority = priority;
  o.paths_per_frame = 32 * 24 * 3;
  o.reference = ref;
  return o;
}

TEST(SplitRules, SessionsWithoutTheMegakernelGiveNoPanelAndAreNamedByTheirScheduling) {
  test::TempDir dir("split");
  Session left(small_room(dir, PriorityFunction::None));
  Session right(small_room(dir, PriorityFunction::Variance));
  EXPECT_EQ(scheduling_name(left), "cpu-parallel/none");
  EXPECT_EQ(scheduling_name(right), "cpu-parallel/variance");
  EXPECT_TRUE(megakernel_panel_sides(left, nullptr).empty());
  EXPECT_TRUE(megakernel_panel_sides(left, &right).empty());
}

TEST(SplitBudget, TheRightSessionFollowsTheLeftsPathsFrameByFrame) {
  test::TempDir dir("split");
  Session left(small_room(dir, PriorityFunction::None));
  SessionOptions ro = small_room(dir, PriorityFunction::Variance);
  ro.paths_per_frame = 1;  // its own budget must not matter: it follows the left's
  Session right(ro);
  uint64_t largest_step = 0;
  for (int frame = 0; frame < 12 && !left.done(); ++frame) {
    const FrameStats l = left.advance();
    largest_step = std::max(largest_step, l.step.work);
    const uint64_t budget = split_follower_budget(l.total_paths, right.last().total_paths);
    if (budget > 0) right.advance(budget);
    const uint64_t a = left.last().total_paths, b = right.last().total_paths;
    EXPECT_LE(a > b ? a - b : b - a, largest_step) << "frame " << frame;
    if (frame == 5) right.set_priority(PriorityFunction::Convergence);  // live: keeps the film and the rule
  }
  EXPECT_GT(right.last().total_paths, 0u);
  // Same paths, same scene: the whole films' MSE are comparable; the halves split the whole.
  const double whole = right.mse();
  const int c = split_column(0.3f, 32);
  const double l = right.mse(PixelRegion::columns(0, c, 24)), r = right.mse(PixelRegion::columns(c, 32, 24));
  EXPECT_NEAR((c * l + (32 - c) * r) / 32.0, whole, 1e-9 * whole);
}

TEST(SplitCapture, ComposeTakesTheRightColumnsAndDrawsTheDivider) {
  const std::vector<uint32_t> a(4 * 2, 0xFF0000FFu), b(4 * 2, 0xFFFF0000u);
  const std::vector<uint32_t> c = compose_split(a, b, 4, 2, 2);
  for (int y = 0; y < 2; ++y) {
    EXPECT_EQ(c[y * 4 + 0], a[0]);
    EXPECT_EQ(c[y * 4 + 1], a[0]);
    EXPECT_EQ(c[y * 4 + 2], kSplitDividerRgba);
    EXPECT_EQ(c[y * 4 + 3], b[0]);
  }
  EXPECT_EQ(compose_split(a, b, 4, 2, 0), b);  // divider at an edge: no line
  EXPECT_EQ(compose_split(a, b, 4, 2, 4), a);
  EXPECT_THROW(compose_split(a, std::vector<uint32_t>(3), 4, 2, 2), InputError);
}

TEST(SplitCapture, WritesBothSidesTheComposedImageAndASplitSidecarWithoutOverwriting) {
  test::TempDir dir("split");
  Session left(small_room(dir, PriorityFunction::None));
  Session right(small_room(dir, PriorityFunction::Variance));
  left.advance();
  right.advance(left.last().total_paths);
  const std::string caps = dir / "caps";
  const SplitCaptureResult a = capture_split(left, right, ToneMapSettings{}, 0.25f, caps);
  const SplitCaptureResult b = capture_split(left, right, ToneMapSettings{}, 0.25f, caps);
  EXPECT_EQ(a.json, caps + "/room-split-cpu-parallel-none-vs-cpu-parallel-variance-0001.json");
  EXPECT_EQ(b.json, caps + "/room-split-cpu-parallel-none-vs-cpu-parallel-variance-0002.json");
  EXPECT_EQ(a.left.json, caps + "/room-cpu-parallel-none-0001.json");
  EXPECT_EQ(a.right.json, caps + "/room-cpu-parallel-variance-0001.json");
  EXPECT_EQ(b.right.exr, caps + "/room-cpu-parallel-variance-0002.exr");
  EXPECT_EQ(std::distance(fs::directory_iterator(caps), fs::directory_iterator()), 2 * (4 + 4 + 2));

  int w = 0, h = 0;
  const std::vector<uint32_t> shown = read_png(a.png, w, h);
  ASSERT_EQ(w, 32);
  ASSERT_EQ(h, 24);
  EXPECT_EQ(shown[5 * 32 + 8], kSplitDividerRgba);  // split_column(0.25, 32) = 8

  std::ifstream in(a.json);
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& sp = j.at("split");
  EXPECT_EQ(sp.at("column"), 8);
  EXPECT_EQ(sp.at("left").at("strategy"), "cpu-parallel");
  EXPECT_EQ(sp.at("left").at("priority"), "none");
  EXPECT_EQ(sp.at("right").at("priority"), "variance");
  EXPECT_EQ(sp.at("left").at("total_paths"), sp.at("right").at("total_paths"));
  EXPECT_DOUBLE_EQ(sp.at("left").at("mse").get<double>(), left.mse());
  EXPECT_DOUBLE_EQ(sp.at("right").at("split").at("displayed_mse").get<double>(),
                   right.mse(PixelRegion::columns(8, 32, 24)));
  EXPECT_EQ(sp.at("right").at("capture").at("exr"), "room-cpu-parallel-variance-0001.exr");
  EXPECT_FALSE(sp.at("left").contains("megakernel")) << "only a side running the megakernel carries it";
  EXPECT_FALSE(sp.at("right").contains("megakernel"));
  EXPECT_EQ(j.at("capture").at("png"), "room-split-cpu-parallel-none-vs-cpu-parallel-variance-0001.png");
  std::ifstream side_in(a.left.json);
  const nlohmann::json side = nlohmann::json::parse(side_in);
  EXPECT_EQ(side.at("split").at("side"), "left");
  EXPECT_EQ(side.at("split").at("columns"), nlohmann::json::array({0, 8}));
}

TEST(SplitGpu, DeviceRegionMseMatchesTheHost) {
  MV_REQUIRE_GPU();
  test::TempDir dir("split");
  SessionOptions o = small_room(dir, PriorityFunction::Variance);
  o.force_cpu = false;
  o.strategy = "uniform";
  Session s(o);
  s.advance();
  s.advance();
  ASSERT_EQ(s.workload().current(), Side::Device);
  std::vector<float> ref;
  {
    const ImageRgb img = read_exr(o.reference);
    ref = img.rgb;
  }
  for (const PixelRegion r : {PixelRegion::columns(0, 11, 24), PixelRegion::columns(11, 32, 24),
                              PixelRegion{3, 4, 20, 17}, PixelRegion::columns(5, 5, 24)}) {
    const double device = s.mse(r);
    const double host = mse_host(s.workload().film().host_view_synced(), ref.data(), r);
    s.workload().make_current(Side::Device);
    EXPECT_NEAR(device, host, 1e-9 * std::max(host, 1e-30)) << r.x0 << "," << r.y0 << "," << r.x1 << "," << r.y1;
  }
}

// Both sides on the megakernel (with different priorities): the panel lists each side's own megakernel,
// and the split capture's sidecar (and each side's own) carries each side's settings and statistics; the
// settings are the left's on both sides (the right session starts with them). A right side on another
// strategy is listed without one and its reports have no megakernel object.
TEST(SplitGpu, EachSidesMegakernelIsListedAndCaptured) {
  MV_REQUIRE_GPU();
  test::TempDir dir("split");
  SessionOptions lo = small_room(dir, PriorityFunction::None);
  lo.force_cpu = false;
  lo.strategy = "megakernel";
  lo.knobs = {{"segment-size", "32"}, {"record-order", "on"}};
  Session left(lo);
  SessionOptions ro = lo;  // what make_right_session does: the left's options, its own priority
  ro.task.priority = PriorityFunction::Variance;
  Session right(ro);
  left.advance();
  right.advance(left.last().total_paths);
  std::vector<MegakernelPanelSide> sides = megakernel_panel_sides(left, &right);
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_EQ(sides[0].megakernel, left.megakernel());
  EXPECT_EQ(sides[1].megakernel, right.megakernel());
  ASSERT_NE(sides[1].megakernel, nullptr);
  EXPECT_NE(sides[0].megakernel, sides[1].megakernel);
  EXPECT_EQ(sides[1].title, "right megakernel/variance");

  const std::string caps = dir / "caps";
  const SplitCaptureResult c = capture_split(left, right, ToneMapSettings{}, 0.5f, caps);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(c.json));
  for (const char* side : {"left", "right"}) {
    const nlohmann::json& s = j.at("split").at(side);
    ASSERT_TRUE(s.contains("megakernel")) << side << ": " << s.dump(2);
    EXPECT_EQ(s.at("knobs").at("segment_size"), 32) << side;
    EXPECT_EQ(s.at("knobs").at("record_order"), true) << side;
    EXPECT_GE(s.at("megakernel").at("stats").at("slices").get<int>(), 1) << side;
    EXPECT_EQ(s.at("megakernel").at("stats").at("empty_executions"), 0) << side;
  }
  EXPECT_EQ(j["split"]["left"]["megakernel"]["stats"]["dequeues"], left.megakernel()->stats().dequeues);
  EXPECT_EQ(j["split"]["right"]["megakernel"]["stats"]["dequeues"], right.megakernel()->stats().dequeues);
  for (const std::string& side_json : {c.left.json, c.right.json}) {
    const nlohmann::json one = nlohmann::json::parse(test::slurp(side_json));
    EXPECT_TRUE(one.contains("megakernel")) << side_json;
  }

  right.set_strategy("uniform");
  right.advance(left.last().total_paths);
  sides = megakernel_panel_sides(left, &right);
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_NE(sides[0].megakernel, nullptr);
  EXPECT_EQ(sides[1].megakernel, nullptr);
  const SplitCaptureResult d = capture_split(left, right, ToneMapSettings{}, 0.5f, caps);
  const nlohmann::json k = nlohmann::json::parse(test::slurp(d.json));
  EXPECT_TRUE(k.at("split").at("left").contains("megakernel"));
  EXPECT_FALSE(k.at("split").at("right").contains("megakernel"));
}

}  // namespace
}  // namespace mv
