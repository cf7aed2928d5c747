// The megaview binary as a user runs it: one-line errors that name the file, field or range; outputs
// that never replace a file; the numbers it prints agree with the files it writes; the GUI smoke test.
// The binary is MV_BINARY (set by CMake) unless $MEGAVIEW_BINARY names another one.
#include <fcntl.h>
#include <poll.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "app/session/image_io.h"
#include "app/session/session.h"
#include "app/session/strand_workloads.h"
#include "render/strands/volume_ray.h"
#include "test_support.h"
#include "render/gpu.h"
#include "render/metrics.h"
#include "volume_strand_cases.h"

extern char** environ;

namespace mv {
namespace {

namespace fs = std::filesystem;



using Result = test::CliResult;

/// Runs `<env> megaview <args>` (test_support.h).
Result megaview(const test::TempDir& dir, const std::string& args, const std::string& env = "") {
  return test::run_megaview(dir, args, env);
}

/// A 32×24 reference with some structure (a gradient), written by the test.
std::string write_reference(const test::TempDir& dir, const std::string& name, int w = 32, int h = 24) {
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = 0.05f + 0.5f * static_cast<float>(i % 97) / 97.f;
  write_exr(dir / name, rgb.data(), w, h);
  return dir / name;
}

const std::string kSmall = "--cpu --width 32 --height 24";

TEST(Cli, UnknownStrategyNamesTheAllowedOnes) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "render " + kSmall + " --spp 1 --strategy warp-drive --out '" + (dir / "x.png") + "'");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err.rfind("megaview: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("warp-drive"), std::string::npos) << r.err;
  for (const std::string& name : patch_strategies().names()) EXPECT_NE(r.err.find(name), std::string::npos) << name;
  EXPECT_FALSE(fs::exists(dir / "x.png"));
}

TEST(Cli, MissingSceneFileIsNamed) {
  test::TempDir dir("cli");
  const std::string scene = dir / "no-such-scene.json";
  const Result r = megaview(dir, "render --cpu --spp 1 --scene '" + scene + "' --out '" + (dir / "x.png") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(scene), std::string::npos) << r.err;
}

TEST(Cli, WidthOutOfRangeNamesTheFieldAndTheRange) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "render --cpu --spp 1 --width 100000 --out '" + (dir / "x.png") + "'");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  for (const char* part : {"--width", "100000", "4", "16384"}) EXPECT_NE(r.err.find(part), std::string::npos) << part;
}

TEST(Cli, ReferenceOfTheWrongSizeNamesTheFileAndBothSizes) {
  test::TempDir dir("cli");
  const std::string ref = write_reference(dir, "small-ref.exr", 16, 16);
  const Result r =
      megaview(dir, "render " + kSmall + " --spp 1 --reference '" + ref + "' --out '" + (dir / "x.png") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  for (const std::string& part : {ref, std::string("16x16"), std::string("32x24")})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.png"));
}

TEST(Cli, RenderNeverOverwritesAFile) {
  test::TempDir dir("cli");
  const std::string png = dir / "out.png";
  { std::ofstream(png, std::ios::binary) << "precious"; }
  Result r = megaview(dir, "render " + kSmall + " --spp 1 --out '" + png + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(png), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(png), "precious");
  EXPECT_FALSE(fs::exists(dir / "out.exr"));

  // The EXR beside it counts too.
  const std::string exr = dir / "other.exr";
  { std::ofstream(exr, std::ios::binary) << "also precious"; }
  r = megaview(dir, "render " + kSmall + " --spp 1 --out '" + (dir / "other.png") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(exr), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(exr), "also precious");
  EXPECT_FALSE(fs::exists(dir / "other.png"));
}

TEST(Cli, RenderPrintsTheMseOfTheImageItWrote) {
  test::TempDir dir("cli");
  const std::string ref = write_reference(dir, "ref.exr");
  const Result r =
      megaview(dir, "render " + kSmall + " --spp 4 --reference '" + ref + "' --out '" + (dir / "out.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("\nMSE ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double printed = std::stod(r.out.substr(at + 5));

  const ImageRgb img = read_exr(dir / "out.exr"), truth = read_exr(ref);
  ASSERT_EQ(img.width, 32);
  ASSERT_EQ(img.height, 24);
  const double expected = mse_images(img.rgb.data(), truth.rgb.data(), 32 * 24);
  EXPECT_GT(expected, 0.0);
  EXPECT_NEAR(printed, expected, 1e-6 * expected);
  int w = 0, h = 0;
  read_png(dir / "out.png", w, h);
  EXPECT_EQ(w * 1000 + h, 32 * 1000 + 24);
  EXPECT_NE(r.out.find("3072 paths"), std::string::npos) << r.out;  // 32 × 24 × 4
}

TEST(Cli, RenderNeedsASampleCountOrATime) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "render " + kSmall + " --out '" + (dir / "x.png") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("--spp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--time-ms"), std::string::npos) << r.err;
}

// `--priority adaptive` stops where the image has converged, below the target, and says what it did.
TEST(Cli, RenderWithAdaptiveStopsBelowTheTargetAndSaysSo) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "render " + kSmall + " --spp 256 --priority adaptive --noise-threshold 0.05 --out '" +
                                     (dir / "a.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu-waves:adaptive"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("adaptive: noise threshold 0.05, min 40 spp, a check every 16 spp; "), std::string::npos)
      << r.out;
  const size_t at = r.out.find(" spp), ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double spp = std::stod(r.out.substr(r.out.rfind('(', at) + 1));
  EXPECT_GE(spp, 48.0) << r.out;  // no patch stops before the first check
  EXPECT_LT(spp, 200.0) << r.out;
  EXPECT_NE(r.out.find("48/48 patches finished"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "a.exr"));
}

TEST(Cli, NoiseThresholdOutOfRangeNamesTheOptionAndTheRange) {
  test::TempDir dir("cli");
  for (const char* t : {"0", "1.5", "-0.1", "nan"}) {
    const Result r = megaview(dir, "render " + kSmall + " --spp 4 --priority adaptive --noise-threshold " +
                                       std::string(t) + " --out '" + (dir / "x.png") + "'");
    EXPECT_NE(r.code, 0) << t;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    for (const char* part : {"--noise-threshold", "(0, 1]"}) EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "x.png"));
  }
}

TEST(Cli, OptionsBeforeTheSubcommandAreRejected) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "--scene cornell render --cpu --spp 1 --out '" + (dir / "x.png") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("--scene"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.png"));
}

TEST(Cli, GuiWithoutADisplayPointsToRender) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "--cpu", "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("render"), std::string::npos) << r.err;
}

TEST(Cli, ReferenceWritesAnExrAndASidecarAndRefusesToOverwriteThem) {
  test::TempDir dir("cli");
  const std::string exr = dir / "ref.exr";
  Result r = megaview(dir, "reference " + kSmall + " --spp 8 --out '" + exr + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("100.0%"), std::string::npos) << r.err;  // progress, plain lines (not a terminal)
  const ImageRgb img = read_exr(exr);
  EXPECT_EQ(img.width, 32);
  EXPECT_EQ(img.height, 24);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(dir / "ref.json"));
  EXPECT_EQ(j["target_spp"], 8);
  EXPECT_EQ(j["spp"]["min"], 8);
  EXPECT_EQ(j["seed"], 1);  // not the renders' default seed 0: independent samples
  EXPECT_EQ(j["strategy"], "cpu-parallel");
  EXPECT_EQ(j["priority"], "none");
  EXPECT_EQ(j["image"], "ref.exr");
  EXPECT_GT(j["elapsed_ms"].get<double>(), 0.0);
  EXPECT_TRUE(j.contains("megaview_version"));
  EXPECT_NE(j["scene"]["file"].get<std::string>().find("room.json"), std::string::npos);

  const std::string before = test::slurp(exr);
  r = megaview(dir, "reference " + kSmall + " --spp 8 --seed 5 --out '" + exr + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(exr), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(exr), before);

  r = megaview(dir, "reference " + kSmall + " --spp 8 --seed 5 --force --out '" + exr + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::slurp(exr), before);
  EXPECT_EQ(nlohmann::json::parse(test::slurp(dir / "ref.json"))["seed"], 5);
}

/// Parses the CSV of mse-curve into rows of cells.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(test::slurp(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    for (std::string c; std::getline(l, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

bool has_colour(const std::vector<uint32_t>& img, uint32_t r, uint32_t g, uint32_t b) {
  const uint32_t c = r | g << 8 | b << 16 | 0xffu << 24;
  return std::find(img.begin(), img.end(), c) != img.end();
}

// The figures themselves are tools/figures.py's (test_figures.cpp); here the script is out of reach, so
// the run ends with the line saying how to draw them.
TEST(Cli, MseCurveRecordsEverySeriesWithItsMetadata) {
  test::TempDir dir("cli");
  const std::string ref = write_reference(dir, "ref.exr");
  const Result r = megaview(dir,
                            "mse-curve " + kSmall + " --spp 16 --reference '" + ref +
                                "' --compare sequential:none,cpu-waves:variance --duration-ms 5000 "
                                "--interval-ms 2 --out-prefix '" + (dir / "curve") + "'",
                            "MV_FIGURES_SCRIPT='" + (dir / "no-such-figures.py") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = read_csv(dir / "curve.csv");
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"series", "strategy", "priority", "busy_ms", "paths", "spp_mean", "mse"}));
  std::map<std::string, std::vector<std::vector<std::string>>> by_series;
  for (size_t i = 1; i < rows.size(); ++i) by_series[rows[i].at(0)].push_back(rows[i]);
  ASSERT_EQ(by_series.size(), 2u);
  for (const auto& [name, series] : by_series) {
    for (size_t i = 1; i < series.size(); ++i) {
      EXPECT_GT(std::stod(series[i][3]), std::stod(series[i - 1][3])) << name;  // busy time grows
      EXPECT_GT(std::stoull(series[i][4]), std::stoull(series[i - 1][4])) << name;
    }
    // Rendered to the end (16 spp) well within 5 s: the last MSE is the finished image's.
    EXPECT_EQ(std::stoull(series.back()[4]), 32u * 24u * 16u) << name;
    EXPECT_GT(std::stod(series.back()[6]), 0.0);
  }
  EXPECT_EQ(by_series["sequential:none"][0][2], "none");
  EXPECT_EQ(by_series["cpu-waves:variance"][0][1], "cpu-waves");
  // Same samples in the end, whatever the order: both finished images have the same MSE.
  EXPECT_EQ(by_series["sequential:none"].back()[6], by_series["cpu-waves:variance"].back()[6]);

  const nlohmann::json meta = nlohmann::json::parse(test::slurp(dir / "curve.json"));
  EXPECT_EQ(meta["kind"], "mse-curve");
  EXPECT_EQ(meta["redoes"], "Kerbl 2012, Fig 9");
  EXPECT_EQ(meta["csv"], "curve.csv");
  EXPECT_EQ(meta["units"]["busy_ms"], "ms");
  EXPECT_EQ(meta["units"].size(), 7u) << meta.dump();  // one per column
  EXPECT_NE(meta["command_line"].get<std::string>().find("mse-curve"), std::string::npos) << meta.dump();
  EXPECT_TRUE(meta["gpu"].is_null()) << "--cpu: no GPU in use; " << meta.dump();
  for (const char* figure : {"curve-time.png", "curve-time.pdf", "curve-samples.png", "curve-samples.pdf"})
    EXPECT_FALSE(fs::exists(dir / figure)) << figure;
  EXPECT_NE(r.out.find("figures: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("python3 " + (dir / "no-such-figures.py") + " " + (dir / "curve.csv")), std::string::npos)
      << "the line saying how to draw them: " << r.out;
  EXPECT_NE(r.out.find("cpu-waves:variance"), std::string::npos) << r.out;
}

// --from-scratch: record k renders about k intervals from an empty film. Were the film carried over, the
// busy time since the start would grow as the square of the records (k (k + 1) / 2 intervals); here it grows
// as k. A series ends at the first record that finishes every patch.
TEST(Cli, MseCurveFromScratchRendersEachRecordAnew) {
  test::TempDir dir("cli");
  const std::string ref = write_reference(dir, "ref.exr");
  const double interval_ms = 5.0;
  const Result r = megaview(dir,
                            "mse-curve " + kSmall + " --spp 512 --reference '" + ref +
                                "' --compare sequential:none --duration-ms 60 --interval-ms 5 --from-scratch "
                                "--out-prefix '" + (dir / "curve") + "'",
                            "MV_FIGURES_SCRIPT='" + (dir / "no-such-figures.py") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = read_csv(dir / "curve.csv");
  ASSERT_GE(rows.size(), 7u) << "at least six records";
  for (size_t k = 1; k < rows.size(); ++k) {
    const double busy = std::stod(rows[k][3]);
    EXPECT_LT(busy, 3.0 * static_cast<double>(k) * interval_ms) << "record " << k;
    const uint64_t paths = std::stoull(rows[k][4]);
    EXPECT_LE(paths, 32u * 24u * 512u);
    if (k + 1 < rows.size()) EXPECT_LT(paths, 32u * 24u * 512u) << "a finished record ends the series";
  }
}

/// One seed's mse-curve CSV for tools/ttq_seeds.py: uniform at 64, 128 and 192 spp with MSE 0.04, 0.02 and 0.013
/// at 10, 20 and 30 ms, and mk:neyman with MSE x[k] at k + 1 ms and spp; every MSE times `scale`.
void write_ttq_seed(const std::string& path, const double (&x)[4], double scale = 1.0) {
  std::string text = "series,strategy,priority,busy_ms,paths,spp_mean,mse\n";
  const double u[3][3] = {{10, 64, 0.04}, {20, 128, 0.02}, {30, 192, 0.013}};
  for (const auto& r : u) text += fmt::format("uniform:none,uniform,none,{},0,{},{}\n", r[0], r[1], r[2] * scale);
  for (int k = 0; k < 4; ++k) text += fmt::format("mk:neyman,mk,neyman,{},0,{},{}\n", k + 1, k + 1, x[k] * scale);
  std::ofstream(path) << text;
}

// tools/ttq_seeds.py on two made-up seeds: each seed's goal is its uniform MSE at 128 spp (0.02 and 0.04, at
// 20 ms), the series' ratios to it are 3, 0.5, 1.5, 0.5 at 1, 2, 3, 4 ms in both, so the mean falls to 1 first
// at 1 + 2 / 2.5 = 1.8 ms (0.090x of 20 ms) and for the last time at 3 + 0.5 / 1 = 3.5 ms (0.175x).
TEST(Cli, TtqSeedsAveragesTheSeedsAndFindsTheLastCrossing) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  test::TempDir dir("cli");
  write_ttq_seed(dir / "s0.csv", {0.06, 0.01, 0.03, 0.01}, 1.0);
  write_ttq_seed(dir / "s1.csv", {0.06, 0.01, 0.03, 0.01}, 2.0);
  const std::string out = dir / "out.txt";
  const std::string cmd = "python3 '" MV_SOURCE_DIR "/tools/ttq_seeds.py' '" + (dir / "s0.csv") + "' '" +
                          (dir / "s1.csv") + "' > '" + out + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::slurp(out);
  const std::string text = test::slurp(out);
  EXPECT_NE(text.find("2 seeds"), std::string::npos) << text;
  const size_t row = text.find("mk:neyman");
  ASSERT_NE(row, std::string::npos) << text;
  std::istringstream cells(text.substr(row, text.find('\n', row) - row));
  std::string name;
  double first_ms = 0, first_x = 0, stays_ms = 0, stays_x = 0;
  cells >> name >> first_ms >> first_x >> stays_ms >> stays_x;
  EXPECT_NEAR(first_ms, 1.8, 1e-9) << text;
  EXPECT_NEAR(first_x, 0.090, 1e-9) << text;
  EXPECT_NEAR(stays_ms, 3.5, 1e-9) << text;
  EXPECT_NEAR(stays_x, 0.175, 1e-9) << text;
}

// --bootstrap: seed A alone stays below its goal from 3.5 ms (0.175x), seed B from 1.8 ms (0.09x), and so does any
// mix of the two; the resamples' 5th and 95th percentiles are therefore B's and A's.
TEST(Cli, TtqSeedsBootstrapBracketsTheSeedsOwnCrossings) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  test::TempDir dir("cli");
  write_ttq_seed(dir / "a.csv", {0.06, 0.01, 0.03, 0.01});
  write_ttq_seed(dir / "b.csv", {0.06, 0.01, 0.01, 0.01});
  const std::string out = dir / "out.txt";
  const std::string cmd = "python3 '" MV_SOURCE_DIR "/tools/ttq_seeds.py' --bootstrap 200 '" + (dir / "a.csv") +
                          "' '" + (dir / "b.csv") + "' > '" + out + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::slurp(out);
  const std::string text = test::slurp(out);
  const size_t row = text.find("mk:neyman");
  ASSERT_NE(row, std::string::npos) << text;
  EXPECT_NE(text.substr(row, text.find('\n', row) - row).find("1.80   0.090  0.090-0.175"), std::string::npos)
      << text;
  const std::string bad = "python3 '" MV_SOURCE_DIR "/tools/ttq_seeds.py' --bootstrap -1 '" + (dir / "a.csv") +
                          "' > '" + out + "' 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
  EXPECT_NE(test::slurp(out).find("--bootstrap"), std::string::npos) << test::slurp(out);
}

TEST(Cli, MseCurveWithoutAReferenceSaysHowToGetOne) {
  test::TempDir dir("cli");
  const Result r = megaview(dir, "mse-curve " + kSmall + " --spp 2 --out-prefix '" + (dir / "curve") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("--reference"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "curve.csv"));
}

TEST(Cli, BenchPrintsATableAndEveryRunAsCsv) {
  test::TempDir dir("cli");
  const Result r = megaview(dir,
                            "bench --cpu --width 16 --height 16 --spp 2 --strategies sequential,cpu-waves "
                            "--repeat 2 --csv '" +
                                (dir / "bench.csv") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("median ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("strategy steps only"), std::string::npos) << r.out;
  const auto rows = read_csv(dir / "bench.csv");
  ASSERT_EQ(rows.size(), 5u);
  std::multiset<std::string> strategies;
  for (size_t i = 1; i < rows.size(); ++i) {
    strategies.insert(rows[i].at(0));
    EXPECT_GT(std::stod(rows[i].at(3)), 0.0);
    EXPECT_EQ(rows[i].at(5), "512");  // 16 × 16 pixels × 2 spp
  }
  EXPECT_EQ(strategies, (std::multiset<std::string>{"sequential", "sequential", "cpu-waves", "cpu-waves"}));
}

// The megakernel's settings on the command line, checked before any work with one line that
// names the option and the allowed values.
TEST(Cli, BadMegakernelOptionsAreOneLineNamingTheOptionAndRange) {
  test::TempDir dir("cli");
  const std::string render = "render " + kSmall + " --spp 1 --out '" + (dir / "x.png") + "'";
  const std::string bench = "bench " + kSmall + " --spp 1 --strategies sequential --repeat 1";
  const std::string curve = "mse-curve " + kSmall + " --spp 1 --out-prefix '" + (dir / "c") + "'";
  struct Case {
    std::string option, value;
    std::vector<std::string> parts;  // must appear in the message
  };
  const std::vector<Case> cases = {{"--segment-size", "100", {"power of two", "32", "512"}},
                                   {"--segment-size", "1024", {"power of two", "32", "512"}},
                                   {"--segment-size", "big", {"power of two"}},
                                   {"--controllers", "0", {"1", "64"}},
                                   {"--controllers", "65", {"1", "64"}},
                                   {"--buffer-multiplier", "0", {"finite", "0.01", "100"}},
                                   {"--buffer-multiplier", "inf", {"finite", "0.01", "100"}},
                                   {"--buffer-multiplier", "-2", {"finite", "0.01", "100"}}};
  for (const std::string& command : {render, bench, curve}) {
    for (const Case& c : cases) {
      const Result r = megaview(dir, command + " " + c.option + " " + c.value);
      const std::string what = command.substr(0, command.find(' ')) + " " + c.option + " " + c.value;
      EXPECT_NE(r.code, 0) << what;
      EXPECT_EQ(r.err_lines(), 1) << what << ": " << r.err;
      EXPECT_EQ(r.err.rfind("megaview: ", 0), 0u) << r.err;
      EXPECT_NE(r.err.find(c.option), std::string::npos) << what << ": " << r.err;
      EXPECT_NE(r.err.find(c.value), std::string::npos) << what << ": " << r.err;
      for (const std::string& part : c.parts) EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "x.png"));
  EXPECT_FALSE(fs::exists(dir / "c.csv"));
}

TEST(Cli, MegakernelOptionsAreAcceptedByRenderBenchAndMseCurve) {
  test::TempDir dir("cli");
  const std::string mk = " --segment-size 64 --controllers 8 --no-controller --no-time-management --buffer-multiplier 2.5";
  Result r = megaview(dir, "render " + kSmall + " --spp 1 --out '" + (dir / "x.png") + "'" + mk);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "x.png"));
  r = megaview(dir, "bench " + kSmall + " --spp 1 --strategies sequential --repeat 1" + mk);
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string ref = write_reference(dir, "ref.exr");
  r = megaview(dir, "mse-curve " + kSmall + " --spp 1 --compare sequential --reference '" + ref + "' --out-prefix '" +
                        (dir / "c") + "'" + mk);
  EXPECT_EQ(r.code, 0) << r.err;
  r = megaview(dir, "render --help");
  for (const char* option : {"--segment-size", "--controllers", "--no-controller", "--no-time-management",
                             "--buffer-multiplier"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

// ---- GUI smoke test under a virtual X server ----

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((fs::path(d) / program).c_str(), X_OK) == 0) return true;
  return false;
}

/// Xvfb on a display it picks itself (-displayfd: the server takes the first free display and writes its
/// number to a pipe), so concurrent tests never share or race for one; its output discarded; stopped when
/// this goes out of scope. $MEGAVIEW_XVFB_ARGS adds arguments (space separated), e.g. "-xkbdir DIR" where
/// the keyboard data is not in its default place.
class Xvfb {
 public:
  Xvfb() {
    int fds[2];
    if (::pipe(fds) != 0) return;
    constexpr int kDisplayFd = 3;
    std::vector<std::string> args = {"Xvfb", "-displayfd", std::to_string(kDisplayFd), "-nolisten", "tcp",
                                     "-screen", "0", "1600x1000x24"};
    std::istringstream words(std::getenv("MEGAVIEW_XVFB_ARGS") ? std::getenv("MEGAVIEW_XVFB_ARGS") : "");
    for (std::string w; words >> w;) args.push_back(w);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    if (fds[1] != kDisplayFd) {
      posix_spawn_file_actions_adddup2(&actions, fds[1], kDisplayFd);
      posix_spawn_file_actions_addclose(&actions, fds[1]);
    }
    pid_t pid = -1;
    const bool spawned = posix_spawnp(&pid, "Xvfb", &actions, nullptr, argv.data(), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    // The display number and a newline, written once the server accepts connections (EOF: it gave up).
    // Waits at most 20 s for each byte.
    std::string number;
    char c = 0;
    pollfd ready{fds[0], POLLIN, 0};
    while (spawned && ::poll(&ready, 1, 20000) == 1 && ::read(fds[0], &c, 1) == 1 && c != '\n') number += c;
    ::close(fds[0]);
    if (spawned && !number.empty()) {
      pid_ = pid;
      display_ = ":" + number;
    } else if (spawned) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
  ~Xvfb() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& display() const { return display_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// The GUI tests: each starts its own Xvfb (skipping where there is none) and runs the viewer on it.
class Gui : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!on_path("Xvfb")) GTEST_SKIP() << "Xvfb is not installed (Debian package xvfb)";
    x_ = std::make_unique<Xvfb>();
    ASSERT_FALSE(x_->display().empty()) << "Xvfb did not start (try it by hand: Xvfb -displayfd 1)";
  }
  /// `megaview <args>` with DISPLAY set to this test's Xvfb, and HOME and XDG_CONFIG_HOME in the test's
  /// folder so that the viewer's settings file (imgui.ini) is neither the user's nor shared between tests.
  /// `prefix` goes before the command (e.g. a ulimit).
  Result viewer(const std::string& args, const std::string& prefix = "") {
    return megaview(dir, args,
                    prefix + "env DISPLAY=" + x_->display() + " HOME='" + (dir / "home") + "' XDG_CONFIG_HOME='" +
                        (dir / "config") + "'");
  }
  /// The files under the test's folder, relative to it, except the captured stdout and stderr.
  std::set<std::string> files_written() const {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir.str()))
      if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir.str()).string());
    out.erase("stdout.txt");
    out.erase("stderr.txt");
    return out;
  }

  test::TempDir dir{"cli"};

 private:
  std::unique_ptr<Xvfb> x_;
};

TEST_F(Gui, SmokeTestUnderXvfbSavesANonBlankWindowShot) {
  const std::string shot = dir / "shot.png";
  const Result r = viewer("--cpu --width 64 --height 48 --frames 20 --window-shot '" + shot + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  // On the CPU the render budget follows the rest of the frame (Mesa drawing the panels, the host-copy
  // display) so that rendering keeps 70 % of each frame: max(12 ms setting, min(rest · 0.7 / 0.3, 60 ms)).
  // The log prints both to 0.1 ms, the rest of the frame as the last budget was computed from it. Whether
  // the budget ends above 12 ms depends on this machine's speed, so the rule is what is checked.
  const std::string log = r.out + r.err;
  const size_t budget = log.find("render budget ");
  const size_t rest = log.find("rest of the frame ");
  ASSERT_NE(budget, std::string::npos) << log;
  ASSERT_NE(rest, std::string::npos) << log;
  const double budget_ms = std::stod(log.substr(budget + 14)), rest_ms = std::stod(log.substr(rest + 18));
  EXPECT_GT(rest_ms, 0.0) << log;
  EXPECT_NEAR(budget_ms, std::max(12.0, std::min(rest_ms * 0.7 / 0.3, 60.0)), 0.2) << log;
  int w = 0, h = 0;
  const std::vector<uint32_t> img = read_png(shot, w, h);
  EXPECT_GT(w, 64);
  EXPECT_GT(h, 48);
  const std::set<uint32_t> colours(img.begin(), img.end());
  EXPECT_GT(colours.size(), 100u) << "the window shot looks blank";
}

// Bad input while the viewer runs or starts: each is reported (in the error panel and the log, naming what
// was refused), the viewer goes on to its last frame and exits 0, and it writes nothing but its settings.

// A strand size the Strands section refuses allocates nothing (the view's background used to be allocated
// at the refused size: std::bad_alloc). Without a GPU the address space is capped at 3 GB so that an
// allocation at the refused size (40 GB) fails even where the memory exists.
TEST_F(Gui, RefusedStrandSizeAllocatesNothingAndTheViewerGoesOn) {
  const std::string cap = gpu_available() ? "" : "ulimit -v 3000000; ";
  const Result r = viewer("--cpu --width 64 --height 48 --frames 12 --capture-dir '" + (dir / "caps") +
                              "' --smoke-at 5:workload=mandelbrot,5:strand-size=99999x99999,8:workload=vr-lite-cam,"
                              "8:strand-size=50000x50000",
                          cap);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("mandelbrot: size: 99999x99999 is out of range: width and height in [1, 16384]"), std::string::npos)
      << log;
  EXPECT_NE(log.find("vr-lite-cam: size: 50000x50000 is out of range: width and height in [1, 4096]"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("bad_alloc"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke test: 12 frames"), std::string::npos) << log;
  EXPECT_EQ(files_written(), std::set<std::string>{"config/megaview/imgui.ini"});
}

// A scene that cannot be read at start-up opens the default scene with the error panel; a bad or missing
// --reference opens the scene without it. The settings file is written to XDG_CONFIG_HOME (with the
// window's size), nothing else anywhere.
TEST_F(Gui, BrokenStartupSceneOrReferenceOpensTheDefaultWithTheError) {
  write_file(dir / "broken.json", "{ \"name\": ");
  write_file(dir / "bad.exr", "not an EXR");
  Result r = viewer("--cpu --width 64 --height 48 --frames 4 --scene '" + (dir / "broken.json") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string log = r.out + r.err;
  EXPECT_NE(log.find("[error] Open scene " + (dir / "broken.json") + ": " + (dir / "broken.json") + ": malformed JSON"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("showing room instead"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke test: 4 frames"), std::string::npos) << log;
  for (const std::string& ref : {dir / "bad.exr", dir / "missing.exr"}) {
    r = viewer("--cpu --width 64 --height 48 --frames 4 --reference '" + ref + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    log = r.out + r.err;
    EXPECT_NE(log.find(ref + ": cannot read EXR"), std::string::npos) << log;
    EXPECT_NE(log.find("showing room without the reference"), std::string::npos) << log;
  }
  EXPECT_EQ(files_written(),
            (std::set<std::string>{"bad.exr", "broken.json", "config/megaview/imgui.ini"}));
  const std::string ini = test::slurp(dir / "config/megaview/imgui.ini");
  EXPECT_NE(ini.find("[Window][Render]"), std::string::npos) << ini;
  EXPECT_NE(ini.find("[Megaview][Window]\nSize=1280,800"), std::string::npos) << ini;
}

// The window keeps its size between runs (the settings file), within 90 % of the screen (1600 x 1000
// here); a settings file that cannot be written (a file where its folder should be) changes nothing.
TEST_F(Gui, WindowSizeComesBackFromTheSettingsFileWithinTheScreen) {
  fs::create_directories(dir / "config/megaview");
  write_file(dir / "config/megaview/imgui.ini", "[Megaview][Window]\nSize=1000,700\n");
  Result r = viewer("--cpu --width 32 --height 24 --frames 3 --window-shot '" + (dir / "a.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  int w = 0, h = 0;
  read_png(dir / "a.png", w, h);
  EXPECT_EQ(w, 1000);
  EXPECT_EQ(h, 700);
  write_file(dir / "config/megaview/imgui.ini", "[Megaview][Window]\nSize=3000,3000\n");
  r = viewer("--cpu --width 32 --height 24 --frames 3 --window-shot '" + (dir / "b.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  read_png(dir / "b.png", w, h);
  EXPECT_EQ(w, 1440);
  EXPECT_EQ(h, 900);
  fs::remove_all(dir / "config");
  write_file(dir / "config", "a file, not a folder");
  r = viewer("--cpu --width 32 --height 24 --frames 3");
  EXPECT_EQ(r.code, 0) << r.err;
  // The log says why there is no settings file, naming the variable and the folder.
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("settings: none ($XDG_CONFIG_HOME: cannot create the folder " + (dir / "config/megaview")),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("no HOME"), std::string::npos) << log;
}

// Switching priority live keeps the film and F12 writes the four files, scripted through the
// same queued panel change and capture request a user triggers by hand.
TEST_F(Gui, ScriptedPriorityAndStrategySwitchKeepTheFilmAndCaptureWritesFourFiles) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --width 64 --height 48 --spp 4096 --priority convergence --frames 30 "
                          "--smoke-at 10:priority=variance,15:strategy=sequential,25:capture --capture-dir '" +
                              caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("smoke: frame 10: now cpu-waves/variance, film kept"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 15: now sequential/variance, film kept"), std::string::npos) << log;
  EXPECT_EQ(log.find("film reset"), std::string::npos) << log;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(caps)) {
    EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  const std::string stem = "room-sequential-variance-0001";
  EXPECT_EQ(names, (std::vector<std::string>{stem + "-heat.png", stem + ".exr", stem + ".json", stem + ".png"}));
}

// The priority functions the GUI offers come from kNumPriorityFunctions, `adaptive` included: a scripted
// switch to it (the picker's queued change) keeps the film. (When it stops: Adaptive.* in test_adaptive.cpp.)
TEST_F(Gui, ScriptedSwitchToAdaptiveKeepsTheFilm) {
  const Result r = viewer("--cpu --width 32 --height 24 --spp 4096 --priority convergence --noise-threshold 0.1 "
                          "--frames 20 --smoke-at 5:priority=adaptive");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("smoke: frame 5: now cpu-waves/adaptive, film kept"), std::string::npos) << log;
  EXPECT_EQ(log.find("film reset"), std::string::npos) << log;
}

// The megakernel's knobs change through the Scheduling panel's queued path (Session::set_knob)
// and keep the film; a bad value lands in the error window and the viewer goes on. (On the CPU the
// Session keeps them for when the megakernel runs; the panel shows them only then.)
TEST_F(Gui, ScriptedMegakernelKnobsKeepTheFilmAndBadOnesAreReported) {
  const Result r = viewer("--cpu --width 64 --height 48 --spp 4096 --frames 20 "
                          "--smoke-at 5:segment-size=64,8:controller=off,10:buffer-multiplier=2,12:segment-size=100");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  for (const char* frame : {"smoke: frame 5: now cpu-waves/", "smoke: frame 8: now cpu-waves/",
                            "smoke: frame 12: now cpu-waves/"})
    EXPECT_NE(log.find(frame), std::string::npos) << frame << " in " << log;
  EXPECT_EQ(log.find("film reset"), std::string::npos) << log;
  EXPECT_NE(log.find("Set segment-size 100: --segment-size: must be an integer in [32, 512], a power of two, got \"100\""), std::string::npos)
      << log;
}

TEST(Cli, BadSmokeStepIsOneLineNamingTheOption) {
  test::TempDir dir("cli");
  for (const char* step : {"x:capture", "0:capture", "5:explode", "5:priority=", "capture", "5:segment-size=",
                           "5:segment_size=64", "5:split=maybe", "5:split", "5:divider=1.5", "5:divider=x",
                           "5:split-priority=", "5:workload=", "5:grid=", "5:strand-strategy=", "5:strand-view=x",
                           "5:strand-orbit=1:2", "5:strand-orbit=1:2:3:4", "5:strand-pan=a:0:1", "5:strand-pan=0::1",
                           "5:strand-pan", "5:strand-view-reset=1"}) {
    const Result r = megaview(dir, std::string("--cpu --frames 1 --smoke-at '") + step + "'");
    EXPECT_EQ(r.code, 1) << step;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("--smoke-at"), std::string::npos) << r.err;
  }
}

// ---- split view ----

/// Amber of the divider line (shaders/display.frag's kDividerColor), as read back from the window.
bool is_divider_pixel(uint32_t rgba) {
  const uint32_t r = rgba & 0xFF, g = (rgba >> 8) & 0xFF, b = (rgba >> 16) & 0xFF;
  return r >= 240 && g >= 180 && g <= 215 && b <= 30;
}

/// The window column holding the most divider pixels, and how many it holds.
std::pair<int, int> divider_column_in(const std::vector<uint32_t>& img, int w, int h) {
  std::pair<int, int> best{-1, 0};
  for (int x = 0; x < w; ++x) {
    int n = 0;
    for (int y = 0; y < h; ++y) n += is_divider_pixel(img[static_cast<size_t>(y) * w + x]);
    if (n > best.second) best = {x, n};
  }
  return best;
}

/// Distinct colours in columns [x0, x1) of the middle third of the rows.
size_t colours_in(const std::vector<uint32_t>& img, int w, int h, int x0, int x1) {
  std::set<uint32_t> c;
  for (int y = h / 3; y < 2 * h / 3; ++y)
    for (int x = std::max(x0, 0); x < std::min(x1, w); ++x) c.insert(img[static_cast<size_t>(y) * w + x]);
  return c.size();
}

/// "<key> N paths" in the line that starts with `prefix`: N, or -1.
long long paths_after(const std::string& log, const std::string& prefix, const std::string& key) {
  const size_t line = log.find(prefix);
  if (line == std::string::npos) return -1;
  const size_t end = log.find('\n', line);
  const std::string l = log.substr(line, end - line);
  const size_t k = l.find(key);
  if (k == std::string::npos) return -1;
  return std::atoll(l.c_str() + k + key.size());
}

// The split view (Kerbl 2012 Fig 8, live): two CPU sessions side by side at equal paths; the right side's
// priority switches live (its film kept); F12 writes both sides and the composed image; the window
// shows the divider with the film on both sides of it.
TEST_F(Gui, SplitViewKeepsEqualBudgetsSwitchesTheRightSideLiveAndCapturesBothSides) {
  const std::string caps = dir / "caps", shot = dir / "shot.png";
  const Result r = viewer("--cpu --width 64 --height 48 --spp 4096 --priority none --split cpu-waves:variance "
                          "--frames 30 --smoke-at 10:split-priority=convergence,12:divider=0.3,25:capture "
                          "--capture-dir '" + caps + "' --window-shot '" + shot + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("split view: on, left cpu-waves/none, right cpu-waves/variance"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 10: right now cpu-waves/convergence, film kept"), std::string::npos) << log;
  EXPECT_EQ(log.find("film reset"), std::string::npos) << log;
  // Equal budgets: after the last frame the two totals differ by less than one frame's budget.
  const std::string end = "split view (end): left cpu-waves/none";
  const long long left = paths_after(log, end, "/none "), right = paths_after(log, end, "/convergence ");
  const long long step = paths_after(log, end, "largest left step ");
  ASSERT_GT(left, 0) << log;
  ASSERT_GT(right, 0) << log;
  ASSERT_GT(step, 0) << log;
  EXPECT_LE(std::llabs(left - right), step) << log;

  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(caps)) {
    EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  const std::string l = "room-cpu-waves-none-0001", rr = "room-cpu-waves-convergence-0001",
                    c = "room-split-cpu-waves-none-vs-cpu-waves-convergence-0001";
  EXPECT_EQ(names, (std::vector<std::string>{rr + "-heat.png", rr + ".exr", rr + ".json", rr + ".png",
                                             l + "-heat.png", l + ".exr", l + ".json", l + ".png", c + ".json",
                                             c + ".png"}));
  std::ifstream in(caps + "/" + c + ".json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("split").at("column"), 19);  // round(0.3 × 64)
  EXPECT_EQ(j.at("split").at("right").at("priority"), "convergence");

  int w = 0, h = 0;
  const std::vector<uint32_t> img = read_png(shot, w, h);
  const auto [column, count] = divider_column_in(img, w, h);
  ASSERT_GT(count, h / 3) << "no divider line in the window shot";
  EXPECT_GT(colours_in(img, w, h, column - 60, column - 3), 20u) << "left of the divider looks blank";
  EXPECT_GT(colours_in(img, w, h, column + 3, column + 60), 20u) << "right of the divider looks blank";
}

TEST_F(Gui, SplitViewTurnsOnAndOffFromTheScript) {
  const std::string shot = dir / "shot.png";
  const Result r = viewer("--cpu --width 64 --height 48 --spp 4096 --priority variance --frames 20 "
                          "--smoke-at 3:split-strategy=sequential,5:split=on,9:split-strategy=cpu-waves,"
                          "14:split=off --window-shot '" + shot + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  // split=on takes the chosen right strategy and the default right priority (none next to variance).
  EXPECT_NE(log.find("split view: on, left cpu-waves/variance, right sequential/none; the left film was restarted"),
            std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 9: right now cpu-waves/none, film kept"), std::string::npos) << log;
  EXPECT_NE(log.find("split view: off"), std::string::npos) << log;
  int w = 0, h = 0;
  const std::vector<uint32_t> img = read_png(shot, w, h);
  EXPECT_LT(divider_column_in(img, w, h).second, h / 3) << "the divider is still drawn after split=off";
}

/// The rest of the log line that starts with `prefix` ("" when there is none).
std::string line_after(const std::string& log, const std::string& prefix) {
  const size_t at = log.find(prefix);
  if (at == std::string::npos) return "";
  const size_t end = log.find('\n', at);
  return log.substr(at + prefix.size(), end == std::string::npos ? std::string::npos : end - at - prefix.size());
}

// Split view: the two sides differ only in strategy and priority. A megakernel setting changed through
// the Scheduling panel's queued path (here scripted) reaches both sessions with the same value; a bad
// value is refused on both (the error window says so) and both keep what they had; the panel's priority
// goes to the left side only. On the CPU the sessions hold the megakernel knobs for when it runs.
TEST_F(Gui, SplitViewAppliesMegakernelKnobsToBothSides) {
  const Result r = viewer("--cpu --width 64 --height 48 --spp 4096 --priority none --split cpu-waves:variance "
                          "--frames 12 --smoke-at 4:segment-size=64,6:controllers=4,8:segment-size=100,10:priority=convergence");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  const std::string same = "the same on both sides: ";
  const std::string f4 = line_after(log, "smoke: frame 4: knobs ");
  const std::string f6 = line_after(log, "smoke: frame 6: knobs ");
  const std::string f8 = line_after(log, "smoke: frame 8: knobs ");
  ASSERT_EQ(f4.rfind(same, 0), 0u) << log;
  ASSERT_EQ(f6.rfind(same, 0), 0u) << log;
  ASSERT_EQ(f8.rfind(same, 0), 0u) << log;
  const nlohmann::json a = nlohmann::json::parse(f4.substr(same.size()));
  const nlohmann::json b = nlohmann::json::parse(f6.substr(same.size()));
  const nlohmann::json c = nlohmann::json::parse(f8.substr(same.size()));
  EXPECT_EQ(a.at("segment-size"), "64");
  EXPECT_EQ(b.at("segment-size"), "64");
  EXPECT_EQ(b.at("controllers"), "4");
  EXPECT_EQ(c, b) << "a refused change changes neither side";
  EXPECT_NE(log.find("Set segment-size 100: --segment-size: must be an integer in [32, 512], a power of two, got \"100\""), std::string::npos)
      << log;
  EXPECT_NE(log.find("smoke: frame 6: right now cpu-waves/variance, film kept"), std::string::npos) << log;
  // The Scheduling panel's priority (and strategy) are the left side's only.
  EXPECT_NE(log.find("smoke: frame 10: now cpu-waves/convergence, film kept"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 10: right now cpu-waves/variance, film kept"), std::string::npos) << log;
  EXPECT_EQ(log.find("split view: off"), std::string::npos) << log;
}

// On a GPU: both sides on the megakernel (the Megakernel panel draws two columns of numbers); a scripted
// setting reaches both, and F12's sidecars carry each side's own megakernel knobs and statistics.
// Then the right side switches to another strategy (its column says it does not run the megakernel).
TEST_F(Gui, SplitViewOnTheGpuCapturesEachSidesMegakernel) {
  MV_REQUIRE_GPU();
  const std::string caps = dir / "caps";
  const Result r = viewer("--width 64 --height 48 --spp 4096 --strategy megakernel --priority none "
                          "--split megakernel:variance --frames 24 --smoke-at 5:segment-size=64,6:record-order=on,"
                          "15:capture,18:split-strategy=uniform --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("split view: on, left megakernel/none, right megakernel/variance"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 18: right now uniform/variance, film kept"), std::string::npos) << log;
  EXPECT_EQ(log.find("[error]"), std::string::npos) << log;
  EXPECT_EQ(line_after(log, "smoke: frame 6: knobs ").rfind("the same on both sides: ", 0), 0u) << log;
  const std::string l = caps + "/room-megakernel-none-0001.json", rr = caps + "/room-megakernel-variance-0001.json",
                    c = caps + "/room-split-megakernel-none-vs-megakernel-variance-0001.json";
  const nlohmann::json split = nlohmann::json::parse(test::slurp(c));
  for (const auto& [side, file] : {std::pair<std::string, std::string>{"left", l}, {"right", rr}}) {
    const nlohmann::json own = nlohmann::json::parse(test::slurp(file));
    for (const nlohmann::json* j : {&own, &split.at("split").at(side)}) {
      ASSERT_TRUE(j->contains("megakernel")) << side << ": " << j->dump(2);
      const nlohmann::json& m = j->at("megakernel");
      EXPECT_EQ(j->at("knobs").at("segment_size"), 64) << side;
      EXPECT_EQ(j->at("knobs").at("record_order"), true) << side;
      EXPECT_GE(m.at("stats").at("slices").get<int>(), 1) << side;
      EXPECT_EQ(m.at("stats").at("empty_executions"), 0) << side;
    }
  }
}

TEST(Cli, BadSplitIsOneLineNamingTheOption) {
  test::TempDir dir("cli");
  for (const char* spec : {"warp-drive", "cpu-waves:sparkle", ":variance", "cpu-waves:", "megakernel"}) {
    const Result r = megaview(dir, std::string("--cpu --frames 1 --split '") + spec + "'");
    EXPECT_EQ(r.code, 1) << spec;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("--split"), std::string::npos) << r.err;
  }
}

// ---- strand mode ----

/// The number after `key` on the log line that starts with `prefix` (-1 if absent).
double number_after(const std::string& log, const std::string& prefix, const std::string& key) {
  const size_t line = log.find(prefix);
  if (line == std::string::npos) return -1.0;
  const size_t k = log.find(key, line);
  if (k == std::string::npos) return -1.0;
  return std::stod(log.substr(k + key.size()));
}

// All strategies run in the GUI and switch live: sequential, then cpu-parallel by the
// scripted strategy combo; both runs finish (their log lines), the capture writes the shown PNG and a
// sidecar naming the workload and strategy, and the window shows the image.
TEST_F(Gui, StrandModeRunsSwitchesStrategyLiveAndCaptures) {
  const std::string caps = dir / "caps", shot = dir / "shot.png";
  const Result r = viewer("--cpu --workload mandelbrot --strand-size 200x150 --strand-strategy sequential "
                          "--frames 12 --smoke-at 4:strand-strategy=cpu-parallel,8:capture --capture-dir '" +
                              caps + "' --window-shot '" + shot + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  const std::string seq = "strands: mandelbrot sequential - ", par = "strands: mandelbrot cpu-parallel - ";
  ASSERT_NE(log.find(seq), std::string::npos) << log;
  ASSERT_NE(log.find(par), std::string::npos) << log;
  EXPECT_LT(log.find(seq), log.find(par)) << log;
  EXPECT_LT(log.find(par), log.find("capture: ")) << "the capture waits for the switched run: " << log;
  // Same program, same strands: the step statistics agree (Lehmann 2023 Fig 3.2's mu for this size).
  const double mu_seq = number_after(log, seq, "steps mu "), mu_par = number_after(log, par, "steps mu ");
  EXPECT_GT(mu_seq, 1.0);
  EXPECT_DOUBLE_EQ(mu_seq, mu_par);
  EXPECT_NE(log.find("30000 strands 200x150"), std::string::npos) << log;
  EXPECT_EQ(log.find("[error]"), std::string::npos) << log;

  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(caps)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names, (std::vector<std::string>{"mandelbrot-cpu-parallel-0001.json", "mandelbrot-cpu-parallel-0001.png"}));
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/mandelbrot-cpu-parallel-0001.json"));
  EXPECT_EQ(j["workload"], "mandelbrot");
  EXPECT_EQ(j["strategy"], "cpu-parallel");
  EXPECT_EQ(j["width"], 200);
  EXPECT_EQ(j["steps"]["count"], 30000);
  EXPECT_NEAR(j["steps"]["mean"].get<double>(), mu_par, 1e-3);
  int w = 0, h = 0;
  const std::vector<uint32_t> png = read_png(caps + "/mandelbrot-cpu-parallel-0001.png", w, h);
  EXPECT_EQ(w, 200);
  EXPECT_EQ(h, 150);
  EXPECT_GT(std::set<uint32_t>(png.begin(), png.end()).size(), 20u) << "the captured image looks blank";

  const std::vector<uint32_t> img = read_png(shot, w, h);
  EXPECT_GT(std::set<uint32_t>(img.begin(), img.end()).size(), 100u) << "the window shot looks blank";
  // The mandelbrot's black interior and its orange outside are on screen.
  EXPECT_TRUE(has_colour(img, 0, 0, 0)) << "no black set in the window shot";
}

// The patch-task strategies run strands in the GUI too: sequential-priority (the
// CPU one; uniform, sorted-waves and the megakernel are the same code path on a GPU) with the task quantum
// and the group priority set through the Strands section; an out-of-range quantum is reported and the
// viewer goes on; the rows, the log and the sidecar name the task settings; the strands' steps are those
// of sequential whatever the order.
TEST_F(Gui, StrandModeRunsTaskStrategiesWithTheirQuantumAndGroupPriority) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --workload mandelbrot --strand-size 96x64 --strand-strategy sequential --frames 14 "
                          "--smoke-at 2:strand-strategy=sequential-priority,4:task-quantum=0,6:task-quantum=8,"
                          "8:task-priority=least-remaining,11:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  const std::string seq = "strands: mandelbrot sequential - ",
                    first = "strands: mandelbrot sequential-priority q16,most-remaining ",
                    last = "strands: mandelbrot sequential-priority q8,least-remaining ";
  ASSERT_NE(log.find(seq), std::string::npos) << log;
  ASSERT_NE(log.find(first), std::string::npos) << log;
  ASSERT_NE(log.find(last), std::string::npos) << log;
  EXPECT_NE(log.find("Set task-quantum 0: --task-quantum: must be an integer in [1, 65536], got \"0\""),
            std::string::npos)
      << log;
  EXPECT_DOUBLE_EQ(number_after(log, seq, "steps mu "), number_after(log, last, "steps mu "));
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/mandelbrot-sequential-priority-0001.json"));
  EXPECT_EQ(j["strategy"], "sequential-priority");
  EXPECT_EQ(j["grid"], "q8,least-remaining");
  EXPECT_EQ(j["knobs"]["task_quantum"], 8);
  EXPECT_EQ(j["knobs"]["task_priority"], "least-remaining");
  EXPECT_NE(j["timing"]["notes"].get<std::string>().find("192 groups of 32, quantum 8"), std::string::npos) << j.dump();
}

// The fill-in replay (StrandReplay) is on in strand mode: a 60 s replay is still running when the scripted
// capture comes, and the capture finishes it first, so the PNG holds the whole run (the black set and the
// coloured outside), not a half-revealed frame; the run's timing notes that the order was recorded.
TEST_F(Gui, StrandCaptureDuringTheFillInReplayHoldsTheWholeRun) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --workload mandelbrot --strand-size 120x90 --strand-strategy cpu-parallel --frames 10 "
                          "--fill-in 60 --smoke-at 6:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_EQ(log.find("fill-in replay of run 1 done"), std::string::npos) << "a 60 s replay cannot be over: " << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/mandelbrot-cpu-parallel-0001.json"));
  int w = 0, h = 0;
  const std::vector<uint32_t> png = read_png(caps + "/mandelbrot-cpu-parallel-0001.png", w, h);
  ASSERT_EQ(w, 120);
  // The same run without a replay gives the same PNG bytes.
  const std::string caps2 = dir / "caps2";
  const Result r2 = viewer("--cpu --workload mandelbrot --strand-size 120x90 --strand-strategy cpu-parallel --frames 10 "
                           "--smoke-at 6:capture --capture-dir '" + caps2 + "'");
  ASSERT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(read_png(caps2 + "/mandelbrot-cpu-parallel-0001.png", w, h), png);
  EXPECT_EQ(j["knobs"]["record_finish_order"], true);
  EXPECT_TRUE(has_colour(png, 0, 0, 0)) << "the set's black is missing";
}

// Switching the workload and the grid by script, an invalid grid in the error window (the viewer goes
// on), and back to the path tracer.
TEST_F(Gui, StrandModeSwitchesWorkloadAndGridAndReturnsToThePathTracer) {
  const Result r = viewer("--cpu --width 64 --height 48 --workload mandelbrot --strand-size 64x48 --frames 12 "
                          "--smoke-at 3:grid=64:100,4:grid=64:128:2,6:strand-strategy=cuda,7:strand-view=heat,7:capture,"
                          "8:workload=progressive --capture-dir '" + (dir / "caps") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("strands: mandelbrot cpu-parallel - "), std::string::npos) << log;
  EXPECT_NE(log.find("Set grid 64:100: grid: threads per block b = 100"), std::string::npos) << log;
  EXPECT_NE(log.find("queued: mandelbrot cpu-parallel grid 64,128,2 64x48"), std::string::npos) << log;
  EXPECT_NE(log.find("Run cuda on mandelbrot: strategy: cuda needs a CUDA GPU (--cpu was given)"), std::string::npos)
      << log;
  EXPECT_NE(log.find("strands: back to the path tracer"), std::string::npos) << log;
  // The heat map's capture: steps per strand through the ramp, named in the sidecar.
  const nlohmann::json j = nlohmann::json::parse(test::slurp(dir / "caps/mandelbrot-cpu-parallel-0001.json"));
  EXPECT_EQ(j["capture"]["shown"], "steps heat map");
  int w = 0, h = 0;
  const std::vector<uint32_t> heat = read_png(dir / "caps/mandelbrot-cpu-parallel-0001.png", w, h);
  EXPECT_TRUE(has_colour(heat, 253, 231, 37)) << "no strand at the top of the ramp (the run's max steps)";
  EXPECT_NE(log.find("smoke test: 12 frames, "), std::string::npos) << log;
  EXPECT_EQ(log.find("smoke test: 12 frames, strand mode"), std::string::npos) << log;
}

// Orbit / pan / zoom, scripted: an orbit step restarts vr-lite-cam with the new camera
// (a different image), a pan step sets the mandelbrot fields, "Reset view" returns to the default; each
// capture's sidecar records the view its run used.
TEST_F(Gui, StrandModeOrbitsPansAndResetsTheViewAndRecordsItInTheSidecar) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --width 160 --height 120 --workload vr-lite-cam --strand-size 120x90 "
                          "--strand-strategy sequential --frames 9 --smoke-at 3:strand-orbit=125:20:400,4:capture,"
                          "5:strand-pan=-0.75:0.1:0.25,6:strand-view-reset,7:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("smoke: frame 3: strand-orbit=125:20:400"), std::string::npos) << log;
  EXPECT_NE(log.find("view: azimuth 125 deg, elevation 20 deg, distance 400"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 5: strand-pan=-0.75:0.1:0.25"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke: frame 6: strand-view-reset"), std::string::npos) << log;
  EXPECT_NE(log.find("view: azimuth 35 deg, elevation 10 deg, distance 400"), std::string::npos) << log;
  EXPECT_EQ(log.find("[error]"), std::string::npos) << log;
  const nlohmann::json a = nlohmann::json::parse(test::slurp(caps + "/vr-lite-cam-sequential-0001.json"));
  const nlohmann::json b = nlohmann::json::parse(test::slurp(caps + "/vr-lite-cam-sequential-0002.json"));
  EXPECT_EQ(a["view"]["kind"], "orbit");
  EXPECT_FLOAT_EQ(a["view"]["azimuth_deg"].get<float>(), 125.f);
  EXPECT_FLOAT_EQ(a["view"]["elevation_deg"].get<float>(), 20.f);
  EXPECT_FLOAT_EQ(a["view"]["distance"].get<float>(), 400.f);
  EXPECT_FLOAT_EQ(b["view"]["azimuth_deg"].get<float>(), kCh2Azimuth);
  EXPECT_FLOAT_EQ(b["view"]["elevation_deg"].get<float>(), kCh2Elevation);
  EXPECT_FLOAT_EQ(b["view"]["distance"].get<float>(), kCh2Distance);
  EXPECT_NE(a["image_checksum"], b["image_checksum"]) << "the orbit did not change the image";
  // The default view's image is the one `megaview strands`-style runs without a view give.
  const StrandResult def = find_strand_workload("vr-lite-cam").run("sequential", 120, 90, StrandRunSettings{}, true);
  EXPECT_EQ(b["image_checksum"], fmt::format("{:016x}", def.checksum()));
}

TEST_F(Gui, StrandModePansTheMandelbrot) {
  const Result r = viewer("--cpu --width 160 --height 120 --workload mandelbrot --strand-size 64x48 "
                          "--strand-strategy sequential --frames 7 --smoke-at 3:strand-pan=-0.75:0.1:0.25,4:capture,"
                          "5:strand-pan=0:0:-1,6:strand-orbit=1e30:0:100 --capture-dir '" + (dir / "caps") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("view: centre (-0.75, 0.1), half-height 0.25"), std::string::npos) << log;
  EXPECT_NE(log.find("view: --half-height: must be a finite number in [1e-12, 1000], got \"-1\""), std::string::npos) << log;
  // The orbit's ranges are the CLI's (strands --azimuth): a scripted one beyond them goes to the error panel.
  EXPECT_NE(log.find("view: --azimuth: must be a finite number in [-360, 360], got"), std::string::npos) << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(dir / "caps/mandelbrot-sequential-0001.json"));
  EXPECT_EQ(j["view"]["kind"], "plane");
  EXPECT_DOUBLE_EQ(j["view"]["center_x"].get<double>(), -0.75);
  EXPECT_DOUBLE_EQ(j["view"]["center_y"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["view"]["half_height"].get<double>(), 0.25);
}

// The path tracer's patch tasks as a strand workload, from the workload picker: the switch
// with a size in the same frame runs only at that size; sequential and cpu-parallel take the same 16 updates
// per strand; the capture records the fixed view and is sequential's image exactly; a size that is not a
// multiple of 4 goes to the error panel; `workload=progressive` returns to the path tracer.
TEST_F(Gui, StrandModeSwitchesToThePathTracersPatchTasksAndCaptures) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --width 64 --height 48 --workload mandelbrot --strand-size 32x24 "
                          "--strand-strategy sequential --frames 12 --smoke-at 3:workload=path-tracer,"
                          "3:strand-size=32x24,5:strand-strategy=cpu-parallel,7:capture,8:strand-size=30x24,"
                          "10:workload=progressive --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  const std::string seq = "strands: path-tracer sequential - ", par = "strands: path-tracer cpu-parallel - ";
  ASSERT_NE(log.find(seq), std::string::npos) << log;
  ASSERT_NE(log.find(par), std::string::npos) << log;
  EXPECT_NE(log.find("queued: path-tracer sequential grid auto 32x24"), std::string::npos) << log;
  EXPECT_EQ(log.find("queued: path-tracer sequential grid auto 800x600"), std::string::npos)
      << "the switch ran at the default size too: " << log;
  EXPECT_NE(log.find("768 strands 32x24"), std::string::npos) << log;
  EXPECT_DOUBLE_EQ(number_after(log, seq, "steps mu "), 16.0);  // 32 spp, 2 paths per update
  EXPECT_DOUBLE_EQ(number_after(log, par, "steps mu "), 16.0);
  EXPECT_NE(log.find("view: fixed (the scene's camera)"), std::string::npos) << log;
  EXPECT_NE(log.find("Run cpu-parallel on path-tracer: size: 30x24: width and height must be multiples of 4 for "
                     "path-tracer"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("strands: back to the path tracer"), std::string::npos) << log;

  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/path-tracer-cpu-parallel-0001.json"));
  EXPECT_EQ(j["workload"], "path-tracer");
  EXPECT_EQ(j["view"]["kind"], "fixed");
  EXPECT_EQ(j["steps"]["count"], 768);
  const StrandResult ref = find_strand_workload("path-tracer").run("sequential", 32, 24, StrandRunSettings{}, true);
  EXPECT_EQ(j["image_checksum"], fmt::format("{:016x}", ref.checksum()));
  int w = 0, h = 0;
  const std::vector<uint32_t> png = read_png(caps + "/path-tracer-cpu-parallel-0001.png", w, h);
  ASSERT_EQ(w, 32);
  ASSERT_EQ(h, 24);
  EXPECT_EQ(png, rgba8(ref.rgba)) << "the capture is not the strands' image as shown";
}

// Without --spp the viewer refines up to the reference's sample count (65,536), not the scene's 512.
TEST_F(Gui, TheViewersDefaultTargetIsTheReferencesSampleCount) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --width 32 --height 24 --frames 4 --smoke-at 2:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  int sidecars = 0;
  for (const auto& e : fs::directory_iterator(caps))
    if (e.path().extension() == ".json") {
      ++sidecars;
      EXPECT_EQ(nlohmann::json::parse(test::slurp(e.path().string()))["target_spp"], 65536) << e.path();
    }
  EXPECT_EQ(sidecars, 1) << "the capture wrote no sidecar";
}

// The toy workload of tests/test_toy_workload.cpp in the GUI: picked from the workload picker by its
// registered name, run, switched to another strategy live and captured, with no GUI code naming it.
TEST_F(Gui, ToyWorkloadRunsAndCapturesInTheGui) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --width 64 --height 48 --frames 10 --work-unit 4 --smoke-at 2:workload=checkerboard,"
                          "2:strand-size=64x32,4:strand-strategy=cpu-parallel,4:cpu-block=512,7:capture --capture-dir '" +
                          caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  ASSERT_NE(log.find("strands: checkerboard cpu-parallel - "), std::string::npos) << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/checkerboard-cpu-parallel-0001.json"));
  EXPECT_EQ(j["workload"], "checkerboard");
  EXPECT_EQ(j["steps"]["count"], 64 * 32);
  // The generic knobs: --work-unit from the command line, cpu-block from the scripted generated widget.
  EXPECT_EQ(j["knobs"]["work_unit"], 4);
  EXPECT_EQ(j["knobs"]["cpu_block"], 512);
  EXPECT_EQ(j["knobs_read"], nlohmann::json::array({"cpu-block"}));
  const StrandResult ref = find_strand_workload("checkerboard").run("sequential", 64, 32, StrandRunSettings{}, true);
  EXPECT_EQ(j["image_checksum"], fmt::format("{:016x}", ref.checksum()));
}

// A strand workload's own knobs (StrandWorkloadEntry::knobs): one from the command line, one from the
// generated widget of the Strands section, both in the run and in the capture's sidecar; a knob that the
// workload does not have goes to the error window while the viewer runs on.
TEST_F(Gui, StrandWorkloadKnobsReachTheRunAndTheSidecar) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --frames 14 --workload vr-lite-cam --strand-size 96x72 --smooth 1 "
                          "--smoke-at 4:step=1,8:capture,10:workload=checkerboard,10:strand-size=32x32,12:step=2 "
                          "--capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/vr-lite-cam-cpu-parallel-0001.json"));
  EXPECT_EQ(j["workload_knobs"]["smooth"], 1.0);
  EXPECT_EQ(j["workload_knobs"]["step"], 1.0);
  EXPECT_EQ(j["workload_knobs"]["kernel"], "ctmr");
  EXPECT_EQ(j["workload_knobs"]["volume"], "ch2");
  // A ray twice as long per step: about half the default's 0.5-voxel steps (mu 476 at this size).
  const double mu = j["steps"]["mean"];
  EXPECT_GT(mu, 150.0);
  EXPECT_LT(mu, 300.0);
  const std::string log = r.out + r.err;
  EXPECT_NE(log.find("--step: applies to vr-lite-cam, illust-vr, not to checkerboard"), std::string::npos) << log;
}

// --kernel is a knob of the stencil (its block shapes) and of the ray casters (reconstruction kernels): the
// viewer's option takes either's values and holds each to the range of the workload it starts, in one line
// before the window opens.
TEST_F(Gui, KernelOptionReachesTheRayCastersAndIsHeldToTheStartedWorkload) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --frames 6 --workload vr-lite-cam --strand-size 32x24 --kernel bspln3 "
                          "--smoke-at 4:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/vr-lite-cam-cpu-parallel-0001.json"));
  EXPECT_EQ(j["workload_knobs"]["kernel"], "bspln3");
  for (const auto& [args, parts] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"--workload stencil --kernel tent", {"--kernel", "512x1x16", "\"tent\""}},
           {"--workload vr-lite-cam --kernel 32x8x4", {"--kernel", "bspln3", "\"32x8x4\""}},
           {"--kernel nonsense", {"--kernel", "(lattice workloads)", "(strand workloads)"}}}) {
    SCOPED_TRACE(args);
    const Result bad = viewer("--cpu --frames 1 " + args);
    EXPECT_NE(bad.code, 0);
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    for (const std::string& p : parts) EXPECT_NE(bad.err.find(p), std::string::npos) << p << " in " << bad.err;
  }
}

// The Lattice section's actions act on a lattice run only: outside lattice mode they are refused by name
// (never kept for a later run: the strand grid once queued a restart of the next lattice run), and in the
// frame of a switch to a lattice workload they wait for its run (a view chosen with the switch is shown).
TEST_F(Gui, LatticeActionsOutsideLatticeModeAreRefusedNotKeptForTheNextRun) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --frames 12 --workload checkerboard --strand-size 16x16 --smoke-at "
                          "2:grid=auto,3:lattice-restart,3:lattice-strategy=gibbs-cpu,3:lattice-view=lambda,"
                          "3:lattice-pause=on,5:workload=gibbs,5:width=64,5:height=64,5:lattice-view=mean,8:capture "
                          "--capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  for (const char* action : {"lattice-restart", "lattice-strategy", "lattice-view", "lattice-pause"})
    EXPECT_NE(log.find(std::string(action) + ": is an action of lattice mode (gibbs, stencil)"), std::string::npos)
        << action << " in " << log;
  EXPECT_EQ(log.find("lattice: Restart"), std::string::npos) << log;
  EXPECT_EQ(log.find("lattice: Set strategy"), std::string::npos) << log;
  EXPECT_NE(log.find("lattice: Show mean: now "), std::string::npos) << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/gibbs-gibbs-cpu-mean-0001.json"));
  EXPECT_EQ(j["capture"]["shown"], "mean");
  EXPECT_GT(j["steps"].get<double>(), 0.0) << "the run was not paused by the refused lattice-pause";
}

// A lattice workload (app/session/lattice_run.h) in the viewer's lattice mode, scripted as a user would drive
// the Lattice section: picked by name, its grid configuration switched live (the chain goes on), a view
// chosen and captured with the run's report, a model setting restarting the chain, an unknown view refused
// in the error window while the viewer runs on.
TEST_F(Gui, LatticeWorkloadRunsLiveSwitchesItsGridAndCaptures) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --frames 24 --smoke-at 2:workload=gibbs,2:width=64,2:height=64,8:block-width=16,"
                          "10:lattice-view=mean,12:capture,14:gamma=0.5,16:lattice-view=nope,18:lattice-pause=on "
                          "--capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  // The block shape is a grid setting: the chain keeps its sweeps. gamma is a model setting: step 0 again.
  const std::string block = line_after(log, "lattice: Set block-width 16: now ");
  ASSERT_FALSE(block.empty()) << log;
  const size_t at = block.find(", step ");
  ASSERT_NE(at, std::string::npos) << block;
  EXPECT_GT(std::stoll(block.substr(at + 7)), 0) << "the block shape switch restarted the chain: " << block;
  EXPECT_NE(line_after(log, "lattice: Set gamma 0.5: now ").find(", step 0,"), std::string::npos) << log;
  EXPECT_NE(log.find("lattice-view: \"nope\" is not a view of gibbs (sample, mean, lambda)"), std::string::npos) << log;
  EXPECT_NE(log.find("smoke test: 24 frames, lattice mode gibbs: strategy gibbs-cpu"), std::string::npos) << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/gibbs-gibbs-cpu-mean-0001.json"));
  EXPECT_EQ(j["workload"], "gibbs");
  EXPECT_EQ(j["capture"]["shown"], "mean");
  EXPECT_EQ(j["knobs"]["block_width"], 16);
  EXPECT_EQ(j["knobs"]["width"], 64);
  EXPECT_TRUE(fs::exists(caps + "/gibbs-gibbs-cpu-mean-0001.png"));

  // The stencil from the command line (--workload, its --size and --partitions options): the partitions
  // and the halo depth switch live and keep the field.
  const std::string caps2 = dir / "caps-stencil";
  const Result s = viewer("--cpu --workload stencil --size 256 --partitions 2 --frames 12 --smoke-at "
                          "4:partitions=4,6:depth=4,8:capture --capture-dir '" + caps2 + "'");
  ASSERT_EQ(s.code, 0) << s.err;
  const std::string depth = line_after(s.out + s.err, "lattice: Set depth 4: now ");
  ASSERT_NE(depth.find(", step "), std::string::npos) << s.err;
  EXPECT_GT(std::stoll(depth.substr(depth.find(", step ") + 7)), 0) << depth;
  const nlohmann::json k = nlohmann::json::parse(test::slurp(caps2 + "/stencil-deep-halo-field-0001.json"));
  EXPECT_EQ(k["workload"], "stencil");
  EXPECT_EQ(k["knobs"]["partitions"], 4);
  EXPECT_EQ(k["knobs"]["depth"], 4);
  EXPECT_EQ(k["knobs"]["size"], 256);
}

// Refused stencil settings in the viewer: more than one GPU on the CPU reference and a grid larger than the
// host memory are one error line each, and the run keeps its running knobs (a later change applies, the
// capture's sidecar records what ran). A frame at the largest iterations-per-frame stays within its budget.
TEST_F(Gui, RefusedStencilSettingsLeaveTheRunAsItWas) {
  const std::string caps = dir / "caps";
  const Result r = viewer("--cpu --workload stencil --size 128 --partitions 2 --frames 16 --smoke-at "
                          "4:gpus=8,6:depth=2,8:size=200000,10:capture --capture-dir '" + caps + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string log = r.out + r.err;
  auto count = [&](const std::string& what) {
    size_t k = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++k;
    return k;
  };
  EXPECT_EQ(count("--gpus: must be 1 on the CPU reference, got 8"), 1u) << log;
  EXPECT_EQ(count("--size: the 200000x200000 grid on the CPU needs"), 1u) << log;
  EXPECT_NE(line_after(log, "lattice: Set depth 2: now ").find("gpus=1"), std::string::npos) << log;
  const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/stencil-deep-halo-field-0001.json"));
  EXPECT_EQ(j["knobs"]["gpus"], 1);
  EXPECT_EQ(j["knobs"]["depth"], 2);
  EXPECT_EQ(j["knobs"]["size"], 128);

  // 2^20 iterations of 1024 x 1024 a frame would take hours on the CPU: the frames come at the budget's pace.
  const auto t0 = std::chrono::steady_clock::now();
  const Result f = viewer("--cpu --workload stencil --size 1024 --partitions 1 --iterations-per-frame 1048576 --frames 6",
                          "timeout 60 ");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_NE((f.out + f.err).find("smoke test: 6 frames, lattice mode stencil"), std::string::npos) << f.err;
  EXPECT_LT(s, 30.0);
}

// lic2d and ridge3d (Lehmann 2023's other two benchmarks) in the GUI: picked by name, run, captured with
// their sidecar, the capture equal to the sequential run.
TEST_F(Gui, Lic2dAndRidge3dRunAndCaptureInTheGui) {
  std::string why;
  const bool have_ch2 = !test::ch2_path(why).empty();
  struct Case {
    const char* name;
    uint32_t w, h;
  };
  for (const Case& c : {Case{"lic2d", 64, 32}, Case{"ridge3d", 16, 256}}) {
    if (std::string(c.name) == "ridge3d" && !have_ch2) continue;
    const std::string caps = dir / (std::string("caps-") + c.name);
    const Result r = viewer(fmt::format("--cpu --width 64 --height 48 --frames 8 --smoke-at 2:workload={},2:strand-size={}x{},"
                                        "2:strand-strategy=cpu-parallel,5:capture --capture-dir '{}'",
                                        c.name, c.w, c.h, caps));
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(test::slurp(caps + "/" + c.name + "-cpu-parallel-0001.json"));
    EXPECT_EQ(j["workload"], c.name);
    EXPECT_EQ(j["steps"]["count"], c.w * c.h);
    const StrandResult ref = find_strand_workload(c.name).run("sequential", c.w, c.h, StrandRunSettings{}, true);
    // cpu-parallel runs the same plain host code as sequential (kCpuFma = false): the same image.
    EXPECT_EQ(j["image_checksum"], fmt::format("{:016x}", ref.checksum())) << c.name;
    EXPECT_EQ(j["stable_strands"].get<uint64_t>() + j["dead_strands"].get<uint64_t>(), uint64_t{c.w} * c.h) << c.name;
    if (std::string(c.name) == "ridge3d") {  // its picture: the converged particles as splats, 800 x 600
      EXPECT_EQ(j["picture"]["width"], 800);
      EXPECT_EQ(j["picture"]["height"], 600);
    } else {
      EXPECT_FALSE(j.contains("picture")) << c.name;
    }
  }
  if (!have_ch2) GTEST_SKIP() << "ridge3d not run: " << why;
}

TEST(Cli, BadStrandOptionIsOneLineNamingTheOption) {
  test::TempDir dir("cli");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--workload fractal", "--workload"},
      {"--workload mandelbrot --grid 64", "--grid"},
      {"--workload mandelbrot --grid 64,100", "--grid"},
      {"--workload mandelbrot --strand-strategy warp-drive", "--strand-strategy"},
      {"--workload mandelbrot --strand-strategy cuda", "--strand-strategy"},
      {"--workload mandelbrot --strand-size 20", "--strand-size"},
      {"--workload mandelbrot --strand-size 20000x10", "--strand-size"},
      {"--workload path-tracer --strand-size 30x32", "--strand-size"},
      {"--strand-strategy sequential", "--strand-strategy"},
      {"--grid 64,128", "--grid"},
  };
  for (const auto& [args, option] : cases) {
    const Result r = megaview(dir, "--cpu --frames 1 " + args);
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_EQ(r.err_lines(), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("megaview: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace mv
