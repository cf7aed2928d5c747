// Bad command-line input, run through the built binary as a user runs it: every case must end with a
// non-zero exit status and one line on stderr, "megaview: …", that names the option (or file) at fault,
// fail while checking its input (fast, without a GPU), and leave the output folder exactly as it was:
// nothing written, nothing replaced. Tables per class of input: numbers, output paths, memory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/cli/cli_validate.h"
#include "app/cli/progress.h"
#include "test_support.h"

namespace mv {
namespace {

namespace fs = std::filesystem;

/// CLI11's exit status for a value its validators refused (app/cli/cli_validate.h); input errors found
/// after parsing exit with 1.
constexpr int kRefused = static_cast<int>(CLI::ExitCodes::ValidationError);

struct Case {
  std::string args;                 ///< after `megaview`; "{d}" is the output folder
  std::vector<std::string> parts;   ///< the message contains each ({d} replaced); the first names the option or file
  int code = kRefused;
  std::vector<std::string> absent;  ///< the message contains none of these
};

std::string expand(std::string s, const std::string& dir) {
  for (size_t at = s.find("{d}"); at != std::string::npos; at = s.find("{d}", at + dir.size())) s.replace(at, 3, dir);
  return s;
}

/// Every file under `dir` with its size, modification time and contents.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    ::lstat(e.path().c_str(), &st);
    files[e.path().string()] = std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
                               std::to_string(st.st_mtim.tv_nsec) +
                               (e.is_regular_file() ? ":" + test::slurp(e.path().string()) : std::string("/"));
  }
  return files;
}

/// A folder with files that must survive: existing.{png,exr,csv,json}, pre.csv (a prefix "pre"),
/// busy.partial.csv (the rows so far of a sweep with the prefix "busy"), a file
/// "afile" (not a folder) and the folders "sub", "q.exr" and "s.json" (in the way of outputs).
void populate(const std::string& dir) {
  for (const char* name : {"existing.png", "existing.exr", "existing.csv", "existing.json", "pre.csv", "afile",
                           "busy.partial.csv"})
    std::ofstream(fs::path(dir) / name, std::ios::binary) << "precious " << name;
  std::ofstream(fs::path(dir) / "exronly.exr", std::ios::binary) << "precious exr";  // the EXR of exronly.png
  for (const char* folder : {"sub", "q.exr", "s.json"}) fs::create_directory(fs::path(dir) / folder);
}

void run_cases(const std::vector<Case>& cases, const std::string& env = "") {
  test::TempDir io("bad-io"), out("bad-out");
  populate(out.str());
  const auto before = snapshot(out.str());
  for (const Case& c : cases) {
    const std::string args = expand(c.args, out.str());
    SCOPED_TRACE("megaview " + args);
    const test::CliResult r = test::run_megaview(io, args, env);
    EXPECT_EQ(r.code, c.code) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_EQ(r.err.rfind("megaview: ", 0), 0u) << r.err;
    EXPECT_LT(r.err.size(), 400u) << r.err;  // a sentence, not a dump (e.g. no 300-digit bound)
    for (const std::string& p : c.parts) EXPECT_NE(r.err.find(expand(p, out.str())), std::string::npos) << p << " in " << r.err;
    for (const std::string& p : c.absent) EXPECT_EQ(r.err.find(p), std::string::npos) << p << " in " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_LT(r.seconds, 5.0) << "not refused while checking the input";
    EXPECT_EQ(snapshot(out.str()), before) << "the output folder changed";
  }
}

const std::string kRender = "render --cpu --width 32 --height 24 --spp 1 --out '{d}/x.png'";
const std::string kRenderBare = "render --cpu --out '{d}/x.png'";  // for cases that give --spp, --width, --height
const std::string kCurve = "mse-curve --cpu --width 32 --height 24 --spp 1 --out-prefix '{d}/c'";
const std::string kBench = "bench --cpu --width 32 --height 24 --spp 1 --strategies sequential";
const std::string kStrandBench = "bench --cpu --workload mandelbrot --strategy sequential --size 64x64";
const std::string kStrands = "strands --workload mandelbrot --size 16x16 --out '{d}/s.png'";
const std::string kViewer = "--cpu --frames 1";

TEST(BadInputs, NumbersOfRenderAndTheSharedOptions) {
  const std::string ms = "(0, 1e7] ms";
  run_cases({
      {kRender + " --time-ms nan", {"--time-ms: must be a finite number in (0, 1e7] ms, got \"nan\""}},
      {kRender + " --time-ms inf", {"--time-ms", ms, "\"inf\""}},
      {kRender + " --time-ms -inf", {"--time-ms", ms}},
      {kRender + " --time-ms -5", {"--time-ms", ms, "\"-5\""}},
      {kRender + " --time-ms 0", {"--time-ms", ms, "\"0\""}},
      {kRender + " --time-ms 1e30", {"--time-ms", ms}},
      {kRender + " --time-ms abc", {"--time-ms", ms, "(not a number)"}},
      {kRender + " --budget nan", {"--budget", "(0, 1]"}},
      {kRender + " --budget 0", {"--budget", "(0, 1]"}},
      {kRender + " --budget 1.5", {"--budget", "(0, 1]"}},
      {kRender + " --budget -0.1", {"--budget", "(0, 1]"}},
      {kRenderBare + " --spp abc", {"--spp: must be an integer in [1, 1048576], got \"abc\" (not a number)"}},
      {kRenderBare + " --spp 0", {"--spp", "[1, 1048576]", "\"0\""}, kRefused, {"not a number"}},
      {kRenderBare + " --spp -1", {"--spp", "[1, 1048576]", "\"-1\""}},
      {kRenderBare + " --spp 1.5", {"--spp", "an integer", "\"1.5\""}, kRefused, {"not a number"}},
      {kRenderBare + " --spp 2097152", {"--spp", "[1, 1048576]"}},
      {kRenderBare + " --spp 0x10", {"--spp", "(not a number)"}},
      {kRenderBare + " --spp 1e3", {"--spp", "an integer"}},
      {kRender + " --seed -1", {"--seed: must be an integer in [0, 4294967295], got \"-1\""}, kRefused, {"convert"}},
      {kRender + " --seed 4294967296", {"--seed", "[0, 4294967295]"}},
      {kRender + " --seed abc", {"--seed", "(not a number)"}},
      {kRender + " --seed 1.5", {"--seed", "an integer"}},
      {kRenderBare + " --spp 1 --width 0", {"--width", "[4, 16384] pixels"}},
      {kRenderBare + " --spp 1 --width nan", {"--width", "(not a number)"}},
      {kRenderBare + " --spp 1 --width 100000", {"--width", "[4, 16384]", "100000"}},
      {kRenderBare + " --spp 1 --height -4", {"--height", "[4, 16384]"}},
      {kRenderBare + " --spp 1 --height abc", {"--height", "(not a number)"}},
      {kRender + " --paths-per-pixel 0", {"--paths-per-pixel", "[1, 64]"}},
      {kRender + " --paths-per-pixel 65", {"--paths-per-pixel", "[1, 64]"}},
      {kRender + " --paths-per-pixel nan", {"--paths-per-pixel", "(not a number)"}},
      {kRender + " --wave-size 0", {"--wave-size", "[1, 16777216]"}},
      {kRender + " --wave-size 99999999", {"--wave-size", "[1, 16777216]"}},
      {kRender + " --priority adaptive --noise-threshold nan", {"--noise-threshold", "(0, 1]"}},
      {kRender + " --priority adaptive --noise-threshold inf", {"--noise-threshold", "(0, 1]"}},
      {kRender + " --segment-size 100", {"--segment-size", "power of two", "\"100\""}},
      {kRender + " --controllers 0", {"--controllers", "[1, 64]"}},
      {kRender + " --controllers -1", {"--controllers", "[1, 64]", "\"-1\""}},
      {kRender + " --buffer-multiplier nan", {"--buffer-multiplier", "finite"}},
      {kRender + " --buckets 2", {"--buckets", "[3, 32]"}},
      {kRender + " --age-period 1", {"--age-period", "65536"}},
      {kRender + " --quantum-max 65", {"--quantum-max", "[2, 64]"}},
      {kRender + " --pull-distance 0", {"--pull-distance", "[1, 1024]"}},
      {"reference --cpu --width 32 --height 24 --spp nan --out '{d}/r.exr'", {"--spp", "(not a number)"}},
      {"reference --cpu --width 32 --height 24 --spp 0 --out '{d}/r.exr'", {"--spp", "[1, 1048576]"}},
      {"reference --cpu --width 32 --height 24 --spp 1 --seed -1 --out '{d}/r.exr'", {"--seed", "[0, 4294967295]"}},
      {"allocation-bound --cpu --spp -3", {"--spp", "[1, 1048576]"}},
      {"allocation-bound --cpu --width 3", {"--width", "[4, 16384]"}},
  });
}

TEST(BadInputs, NumbersOfMseCurveAndBench) {
  const std::string ms = "(0, 1e7] ms";
  run_cases({
      {kCurve + " --duration-ms nan", {"--duration-ms", ms, "\"nan\""}, kRefused, {"--interval-ms"}},
      {kCurve + " --duration-ms 0", {"--duration-ms", ms}},
      {kCurve + " --duration-ms -1", {"--duration-ms", ms}},
      {kCurve + " --duration-ms 1e30", {"--duration-ms", ms}},
      {kCurve + " --duration-ms inf", {"--duration-ms", ms}},
      {kCurve + " --interval-ms nan", {"--interval-ms", ms}},
      {kCurve + " --interval-ms 0", {"--interval-ms", ms}},
      {kCurve + " --duration-ms 100 --interval-ms 200", {"--interval-ms", "--duration-ms = 100", "\"200\""}, 1},
      {kCurve + " --duration-ms 10", {"--duration-ms: ", "--interval-ms", "50 ms by default", "\"10\""}, 1},
      {kCurve + " --duration-ms 1e5 --interval-ms 1 --from-scratch", {"--interval-ms", "--from-scratch", "more than 1e+07"}, 1},
      {kCurve + " --goal-spp nan", {"--goal-spp", "(0, 1048576] spp"}},
      {kCurve + " --goal-spp 0", {"--goal-spp", "(0, 1048576] spp"}},
      {kCurve + " --goal-spp 1e9", {"--goal-spp", "(0, 1048576] spp"}},
      {kCurve + " --controllers 65", {"--controllers", "[1, 64]"}},
      {kBench + " --repeat 0", {"--repeat", "[1, 1000]"}},
      {kBench + " --repeat nan", {"--repeat", "[1, 1000]", "\"nan\" (not a number)"}},
      {kBench + " --repeat 1001", {"--repeat", "[1, 1000]"}},
      {kBench + " --repeat -1", {"--repeat", "[1, 1000]"}},
      {kStrandBench + " --permute-seed -1", {"--permute-seed: must be an integer in [0, 4294967295], got \"-1\""}},
      {kStrandBench + " --permute-seed abc", {"--permute-seed", "(not a number)"}},
      {kStrandBench + " --permute-seed 1.5", {"--permute-seed", "an integer"}},
      {kStrandBench + " --permute-seed 4294967296", {"--permute-seed", "[0, 4294967295]"}},
      {kStrandBench + " --task-quantum 0", {"--task-quantum", "[1, 65536]"}},
      {kStrandBench + " --task-quantum 65537", {"--task-quantum", "[1, 65536]"}},
      {kStrandBench + " --sweep-max-threads 100", {"--sweep-max-threads", "[4096, 67108864]"}},
      {kStrandBench + " --repeat 0", {"--repeat", "[1, 1000]"}},
      {"bench --cpu --workload mandelbrot --strategy sequential --size abc", {"--size", "abc"}, 1},
      {"bench --cpu --workload mandelbrot --strategy sequential --size 0x10", {"--size", "0x10"}, 1},
      {"bench --cpu --workload mandelbrot --strategy sequential --size 99999x99999", {"--size", "99999x99999"}, 1},
      {kStrandBench + " --size 32x32", {"--size: given 2 times; give it once"}, static_cast<int>(CLI::ExitCodes::ArgumentMismatch)},
      {"bench --workload mandelbrot --strategy cuda --cpu --size 64x64", {"cuda", "needs a CUDA GPU (--cpu given)"}, 1},
  });
}

const std::string kStencilBench = "bench --cpu --workload stencil --size 64 --iterations 1 --repeat 1";

TEST(BadInputs, TheStencilBenchNamesTheOptionAndItsRange) {
  run_cases({
      {kStencilBench + " --depth 0", {"--depth", "[1, 64]", "\"0\""}},
      {kStencilBench + " --depth 65", {"--depth", "[1, 64]"}},
      {kStencilBench + " --depth 1,abc", {"--depth", "(not a number)"}},
      {kStencilBench + " --partitions 4 --depth 40", {"--depth", "smallest partition side (32 sites", "got 40"}, 1},
      {kStencilBench + " --partitions 0", {"--partitions", "[1, 64]"}},
      {kStencilBench + " --partitions 65", {"--partitions", "[1, 64]"}},
      {kStencilBench + " --partitions 64 --size 16", {"--partitions", "fewer than 3 sites"}, 1},
      {kStencilBench + " --gpus 2 --partitions 2", {"--gpus", "must be 1 without a GPU (--cpu given)"}, 1},
      {kStencilBench + " --gpus 9", {"--gpus", "[1, 8]"}},
      {kStencilBench + " --size 4", {"--size", "[8, 200000]"}},
      {kStencilBench + " --exchange both", {"--exchange", "sync", "async"}},
      {kStencilBench + " --overlap maybe", {"--overlap", "on", "off"}},
      {kStencilBench + " --kernel 7x7x7", {"--kernel", "512x1x16"}},
      {kStencilBench + " --iterations 0", {"--iterations", "[1, 1048576]"}},
      {kStencilBench + " --repeat 1001", {"--repeat", "[1, 1000]"}},
      {"bench --cpu --workload stencil,mandelbrot --size 64", {"--workload", "mandelbrot"}},
      {kStencilBench + " --scene room", {"--scene", "unknown option of the stencil bench"}, static_cast<int>(CLI::ExitCodes::ExtrasError)},
  });
}

TEST(BadInputs, NumbersOfStrandsViewerAndTheSchedulingLab) {
  const std::string step = "[0.05, 16]";
  run_cases({
      {kStrands + " --step nan", {"--step", step, "\"nan\""}},
      {kStrands + " --step 0", {"--step", step}},
      {kStrands + " --step -1", {"--step", step}},
      {kStrands + " --step 1e-9", {"--step: must be a finite number in [0.05, 16], got \"1e-9\""}},
      {kStrands + " --step 17", {"--step", step}},
      {kStrands + " --step inf", {"--step", step}},
      {kStrands + " --distance nan", {"--distance", "[0.001, 1000000]"}},
      {kStrands + " --distance 0", {"--distance", "[0.001, 1000000]", "\"0\""}},
      {kStrands + " --distance -1", {"--distance", "[0.001, 1000000]", "\"-1\""}},
      {kStrands + " --distance inf", {"--distance", "[0.001, 1000000]"}},
      {kStrands + " --distance 1e-7", {"--distance: must be a finite number in [0.001, 1000000], got \"1e-7\""}},
      {kStrands + " --azimuth nan", {"--azimuth", "[-360, 360]"}},
      {kStrands + " --elevation 90", {"--elevation", "[-89, 89]"}},
      {kStrands + " --elevation nan", {"--elevation", "[-89, 89]"}},
      {kStrands + " --smooth nan", {"--smooth", "[0, 16]"}},
      {kStrands + " --smooth -1", {"--smooth", "[0, 16]"}},
      {kStrands + " --smooth 17", {"--smooth", "[0, 16]"}},
      {"strands --workload mandelbrot --size 10 --out '{d}/s.png'", {"--size", "WxH"}, 1},
      {"strands --workload mandelbrot --size 99999x1 --out '{d}/s.png'", {"--size", "[1, 16384]"}, 1},
      {"strands --workload nope --out '{d}/s.png'", {"--workload", "nope"}},
      {kViewer + " --fill-in nan", {"--fill-in", "[0, 60] s", "\"nan\""}},
      {kViewer + " --fill-in -1", {"--fill-in", "[0, 60] s"}},
      {kViewer + " --fill-in 61", {"--fill-in", "[0, 60] s"}},
      {kViewer + " --fill-in inf", {"--fill-in", "[0, 60] s"}},
      {"--cpu --frames -1", {"--frames", "[0, 100000000]"}},
      // The bound as the option takes it: "1e8" is no integer the option accepts, so the message never says so.
      {"--cpu --frames 1e9", {"--frames", "[0, 100000000]", "\"1e9\""}, kRefused, {"1e8"}},
      {"bench --workload gibbs --sweeps 1e10", {"--sweeps", "[1, 1000000000] sweeps"}, kRefused, {"1e9]"}},
      {"--cpu --frames abc", {"--frames", "(not a number)"}},
      {"sort-bench --sizes 48", {"--sizes", "power of two in [32, 1024]", "\"48\""}},
      {"sort-bench --sizes 2048", {"--sizes", "power of two in [32, 1024]"}},
      {"sort-bench --sizes 64,abc", {"--sizes", "\"abc\" (not a number)"}},
      {"sort-bench --threads 0", {"--threads", "power of two in [32, 1024]"}},
      {"sort-bench --batches 0", {"--batches", "[1, 100000]"}},
      {"sort-bench --repeat 0", {"--repeat", "[1, 1000]"}},
      {"sort-bench --seed -1", {"--seed", "[0, 4294967295]"}},
      {"sched-model --out-prefix '{d}/m' --n 1", {"--n", "[2, 16777216]"}},
      {"sched-model --out-prefix '{d}/m' --n abc", {"--n", "(not a number)"}},
      {"sched-model --out-prefix '{d}/m' --n 10,nan", {"--n", "\"nan\""}},
      {"sched-model --out-prefix '{d}/m' --task-us nan", {"--task-us", "[0.001, 1e7] µs"}},
      {"sched-model --out-prefix '{d}/m' --task-us 0", {"--task-us", "[0.001, 1e7] µs"}},
      {"sched-model --out-prefix '{d}/m' --workers 0", {"--workers", "[1, 16777216]"}},
      {"sched-model --out-prefix '{d}/m' --segment 0", {"--segment", "[1, 16777216]"}},
      {"sched-model --out-prefix '{d}/m' --sort-us 1,2,nan", {"--sort-us", "[0.001, 1e6] µs"}},
      {"sched-model --out-prefix '{d}/m' --buffer-multiplier nan", {"--buffer-multiplier", "[0.01, 100]"}},
      {"sched-model --out-prefix '{d}/m' --buffer-multiplier 0", {"--buffer-multiplier", "[0.01, 100]"}},
      {"sched-model --out-prefix '{d}/m' --buffer-multiplier 1e300", {"--buffer-multiplier", "[0.01, 100]", "\"1e300\""}},
      {"sched-model --out-prefix '{d}/m' --seed -1", {"--seed", "2^64 - 1"}},
      {"sched-model --out-prefix '{d}/m' --order sideways", {"--order", "sideways"}},
      {"sched-bench --out-prefix '{d}/b' --n 1", {"--n", "[2, 16777216]"}},
      {"sched-bench --out-prefix '{d}/b' --task-us nan", {"--task-us", "(0, 1e6] µs"}},
      {"sched-bench --out-prefix '{d}/b' --threads 48", {"--threads", "multiple of 32 in [32, 1024]"}},
      {"sched-bench --out-prefix '{d}/b' --controllers 0", {"--controllers", "[1, 64]"}},
      {"sched-bench --out-prefix '{d}/b' --segment-size 100", {"--segment-size", "[32, 512], a power of two"}},
      {"sched-bench --out-prefix '{d}/b' --buffer-multiplier inf", {"--buffer-multiplier", "[0.01, 100]"}},
      {"sched-bench --out-prefix '{d}/b' --buffer-multiplier 1e300", {"--buffer-multiplier", "[0.01, 100]"}},
      {"sched-bench --out-prefix '{d}/b' --blocks-per-sm 65", {"--blocks-per-sm", "0 (off) or an integer in [1, 64]"}},
      {"sched-bench --out-prefix '{d}/b' --repeat 0", {"--repeat", "[1, 1000]"}},
      {"sched-bench --out-prefix '{d}/b' --pull-distance 0", {"--pull-distance", "[1, 1024]"}},
      {"sched-bench --out-prefix '{d}/b' --buckets 33", {"--buckets", "[3, 32]"}},
  });
}

TEST(BadInputs, OutputPathsAreCheckedBeforeTheWorkAndNothingIsOverwritten) {
  const std::string exists = "already exists";
  const std::string missing = "does not exist";
  const std::string hidden = "hidden file";
  const std::string folder = "names a folder";
  run_cases({
      {"render --cpu --spp 1 --out /nonexistent-megaview/x.png", {"--out", "/nonexistent-megaview", missing}, 1},
      {"render --cpu --spp 1 --out '{d}/afile/x.png'", {"--out", "{d}/afile", "not a folder"}, 1},
      {"render --cpu --spp 1 --out '{d}/existing.png'", {"--out", "{d}/existing.png", exists}, 1},
      {"render --cpu --spp 1 --out '{d}/exronly.png'", {"--out", "{d}/exronly.exr", exists}, 1},
      {"render --cpu --spp 1 --out '{d}/'", {"--out", ".png"}, 1},
      {"render --cpu --spp 1 --out '{d}/.png'", {"--out", hidden}, 1},
      {"render --cpu --spp 1 --out ''", {"--out", ".png"}, 1},
      {"render --cpu --spp 1 --out '{d}/sub'", {"--out", ".png"}, 1},
      {"render --cpu --spp 1 --out '{d}/h.png' --heat-out '{d}/existing.png'", {"--heat-out", exists}, 1},
      {"render --cpu --spp 1 --out '{d}/h.png' --heat-out /nonexistent-megaview/h.png", {"--heat-out", missing}, 1},
      {"reference --scene room --spp 65536 --out /nonexistent/r.exr", {"--out", "/nonexistent", missing}, 1},
      {"reference --cpu --spp 1 --out '{d}/existing.exr'", {"--out", "{d}/existing.exr", exists}, 1},
      {"reference --cpu --spp 1 --out '{d}/afile/r.exr'", {"--out", "not a folder"}, 1},
      {"reference --cpu --spp 1 --out '{d}/.exr'", {"--out", hidden}, 1},
      {"reference --cpu --spp 1 --out '{d}/r.png'", {"--out", ".exr"}, 1},
      {kCurve.substr(0, kCurve.find(" --out-prefix")) + " --out-prefix '{d}/'", {"--out-prefix", folder}, 1},
      {kCurve.substr(0, kCurve.find(" --out-prefix")) + " --out-prefix '{d}/pre'", {"--out-prefix", "{d}/pre.csv", exists}, 1},
      {kCurve.substr(0, kCurve.find(" --out-prefix")) + " --out-prefix /nonexistent-megaview/p", {"--out-prefix", missing}, 1},
      {kCurve.substr(0, kCurve.find(" --out-prefix")) + " --out-prefix ''", {"--out-prefix", "prefix"}, 1},
      {kBench + " --csv '{d}/existing.csv'", {"--csv", "{d}/existing.csv", exists}, 1},
      {kBench + " --csv /nonexistent-megaview/b.csv", {"--csv", missing}, 1},
      {kBench + " --csv '{d}/'", {"--csv", folder}, 1},
      {kBench + " --csv '{d}/sub'", {"--csv", "is a folder"}, 1},
      {kStrandBench + " --csv '{d}/existing.csv'", {"--csv", exists}, 1},
      {kStrandBench + " --csv '{d}/.csv'", {"--csv", hidden}, 1},
      {"bench --cpu --workload mandelbrot --strategy sequential --sweep --out-prefix '{d}/'", {"--out-prefix", folder}, 1},
      {"bench --cpu --workload mandelbrot --strategy sequential --sweep --out-prefix '{d}/pre'", {"--out-prefix", exists}, 1},
      {"bench --cpu --workload mandelbrot --strategy sequential --sweep --out-prefix '{d}/busy'",
       {"--out-prefix", "{d}/busy.partial.csv", "already exists"}, 1},
      {kStrands.substr(0, kStrands.find(" --out")) + " --out '{d}/existing.png'", {"--out", exists}, 1},
      {kStrands.substr(0, kStrands.find(" --out")) + " --out /nonexistent-megaview/s.png", {"--out", missing}, 1},
      {kStrands.substr(0, kStrands.find(" --out")) + " --out '{d}/'", {"--out", folder}, 1},
      {kStrands.substr(0, kStrands.find(" --out")) + " --out '{d}/afile/s.png'", {"--out", "not a folder"}, 1},
      {kStrands.substr(0, kStrands.find(" --out")) + " --out '{d}/s.jpg'", {"--out", "{d}/s.jpg", "ending in .png"}, 1},
      {"sched-model --out-prefix '{d}/'", {"--out-prefix", folder}, 1},
      {"sched-model --out-prefix '{d}/pre'", {"--out-prefix", "{d}/pre.csv", exists}, 1},
      {"sched-model --out-prefix /nonexistent-megaview/m", {"--out-prefix", missing}, 1},
      {"sched-bench --out-prefix '{d}/pre'", {"--out-prefix", exists}, 1},
      {"sched-bench --out-prefix '{d}/'", {"--out-prefix", folder}, 1},
      {"sched-bench --out-prefix '{d}/b' --order-log '{d}/existing.csv'", {"--order-log", exists}, 1},
      {"sort-bench --csv '{d}/existing.csv'", {"--csv", exists}, 1},
      {"sort-bench --plot '{d}/existing.png'", {"--plot", exists}, 1},
      {"sort-bench --plot '{d}/new.png'", {"--plot", "needs --csv"}, 1},
      {"sort-bench --plot /nonexistent-megaview/p.png", {"--plot", missing}, 1},
      {kViewer + " --window-shot '{d}/existing.png'", {"--window-shot", "{d}/existing.png", exists}, 1},
      {kViewer + " --window-shot /nonexistent-megaview/w.png", {"--window-shot", missing}, 1},
      {kViewer + " --window-shot '{d}/w.txt'", {"--window-shot", ".png"}, 1},
      {"--cpu --window-shot '{d}/w.png'", {"--window-shot", "--frames"}, 1},
  });
}

TEST(BadInputs, OutputsAreCheckedTogetherBeforeTheWork) {
  const std::string render16 = "render --cpu --width 16 --height 16 --spp 1";
  const std::string reference16 = "reference --cpu --width 16 --height 16 --spp 1";
  std::string deep;  // a path longer than PATH_MAX, of names that each fit
  for (int i = 0; i < 40; ++i) deep += std::string(120, 'p') + "/";
  run_cases({
      {render16 + " --out '{d}/c.png' --heat-out '{d}/c.png'", {"--heat-out", "{d}/c.png", "also the file of --out"}, 1},
      {render16 + " --out '{d}/c.png' --heat-out '{d}/./c.png'", {"--heat-out", "also the file of --out"}, 1},
      {render16 + " --out '{d}/c.png' --heat-out '{d}/h.exr'", {"--heat-out", ".png"}, 1},
      {render16 + " --out '{d}/c.png' --heat-out '{d}/sub'", {"--heat-out", ".png"}, 1},
      {render16 + " --out '{d}/" + std::string(300, 'n') + ".png'", {"--out", "is 304 characters long", "255"}, 1},
      {render16 + " --out '{d}/c.png' --heat-out '{d}/" + std::string(260, 'h') + ".png'", {"--heat-out", "characters long"}, 1},
      {reference16 + " --out '{d}/" + std::string(300, 'r') + ".exr'", {"--out", "characters long"}, 1},
      {render16 + " --out '{d}/" + deep + "x.png'", {"--out", "characters long, more than the system's 4095"}, 1},
      {render16 + " --out /proc/x.png", {"--out", "\"/proc\"", "does not take new files"}, 1, {"megaview: No such"}},
      {reference16 + " --out '{d}/q.exr' --force", {"--out", "{d}/q.exr", "is a folder"}, 1},
      {reference16 + " --out '{d}/s.exr' --force", {"--out (its JSON sidecar)", "{d}/s.json", "is a folder"}, 1},
      {reference16 + " --out '{d}/sub.exr' --force --scene '{d}/afile'", {"{d}/afile", "malformed JSON"}, 1},
      // The order log is written before the results: under one of the prefix's names, they would be lost.
      {"sched-bench --out-prefix '{d}/b' --order-log '{d}/b.csv'", {"--order-log", "{d}/b.csv", "also the file of --out-prefix"}, 1},
      {"sched-bench --out-prefix '{d}/b' --order-log '{d}/./b.png'", {"--order-log", "also the file of --out-prefix"}, 1},
      {"sched-bench --out-prefix '{d}/b' --order-log '{d}/b.json'", {"--order-log", "also the file of --out-prefix"}, 1},
      // The figure is drawn after the CSV is written: a CSV under the figure's name leaves no figure.
      {"sort-bench --csv '{d}/s.png' --plot '{d}/s.png'", {"--plot", "{d}/s.png", "also the file of --csv"}, 1},
  });
}

// --force replaces earlier outputs, never the scene being read: here the reference's JSON sidecar would be
// the scene file itself.
TEST(BadInputs, ReferenceWithForceNeverReplacesTheSceneItReads) {
  test::TempDir io("bad-io"), sc("bad-scene");
  const std::string scene = sc / "room.json";
  fs::copy_file(std::string(MV_SOURCE_DIR) + "/scenes/room.json", scene);
  const std::string before = test::slurp(scene);
  for (const std::string& out : {sc / "room.exr", sc / "./room.exr"}) {
    const test::CliResult r = test::run_megaview(
        io, "reference --cpu --scene '" + scene + "' --spp 1 --width 16 --height 16 --out '" + out + "' --force");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("--out (its JSON sidecar)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is the file --scene reads"), std::string::npos) << r.err;
    EXPECT_EQ(test::slurp(scene), before);
    EXPECT_FALSE(fs::exists(sc / "room.exr"));
  }
  // render: the --reference it compares against is never an output either (--heat-out is checked the same way).
  const test::CliResult r = test::run_megaview(
      io, "render --cpu --spp 1 --width 16 --height 16 --out '" + (sc / "r.png") + "' --heat-out '" + scene + "'");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("--heat-out"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(scene), before);
}

// A reference of another scene at the same resolution (assets/caustic.exr is 800x600 as room is) would give
// an MSE of two different pictures: its sidecar names its scene, and render and mse-curve refuse it.
TEST(BadInputs, AReferenceOfAnotherSceneIsRefused) {
  const std::string caustic = std::string(MV_SOURCE_DIR) + "/assets/caustic.exr";
  run_cases({
      {"render --cpu --scene room --spp 1 --reference '" + caustic + "' --out '{d}/x.png'",
       {caustic, "scene", "reference of scene \"caustic\"", "not of \"room\""}, 1},
      {"mse-curve --cpu --scene room --spp 1 --compare sequential --duration-ms 10 --interval-ms 5 --reference '" +
           caustic + "' --out-prefix '{d}/c'",
       {caustic, "reference of scene \"caustic\""}, 1},
  });
  // The scene's own reference is taken (its sidecar names it).
  test::TempDir io("ref-own");
  const test::CliResult r = test::run_megaview(
      io, "render --cpu --scene caustic --spp 1 --width 800 --height 600 --reference '" + caustic + "' --out '" +
              (io / "c.png") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("MSE "), std::string::npos) << r.out;
}

TEST(BadInputs, BadTransferFunctionFilesAreOneLineNamingTheFileAndField) {
  // The file is read before the volume, so these need no volume on the machine.
  test::TempDir tf("bad-tf");
  const auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(tf / name) << text;
    return tf / name;
  };
  const std::string point = R"({"value": 0, "color": [0, 0, 0], "opacity": 0})";
  const std::string vr = "strands --workload vr-lite-cam --size 16x16 --out '{d}/s.png' --tf ";
  run_cases({
      {vr + "'" + (tf / "none.json") + "'", {tf / "none.json", "cannot open the transfer function (no such file)"}, 1},
      {vr + "'" + file("text.json", "not json") + "'", {tf / "text.json", "not a JSON transfer function"}, 1},
      {vr + "'" + file("nopoints.json", "{}") + "'", {tf / "nopoints.json", "tf.points: expected an array"}, 1},
      {vr + "'" + file("typo.json", R"({"points": [{"value": 0, "color": [0, 0, 0], "opacty": 0}]})") + "'",
       {"tf.points[0].opacty: unknown field (allowed: value, color, opacity)"}, 1},
      {vr + "'" + file("rg.json", R"({"points": [{"value": 0, "color": [0, 0], "opacity": 0}]})") + "'",
       {"tf.points[0].color: expected [r, g, b]"}, 1},
      {vr + "'" + file("one.json", "{\"points\": [" + point + "]}") + "'", {"tf.points", "give 2 to 64"}, 1},
      {vr + "'" + file("order.json", "{\"points\": [" + point + ", " + point + "]}") + "'",
       {"tf.points[1].value", "must increase strictly"}, 1},
      {vr + "'" + file("opaque.json", "{\"points\": [" + point + R"(, {"value": 9, "color": [1, 1, 1], "opacity": 1.5}]})") +
           "'",
       {tf / "opaque.json", "tf.points[1].opacity", "1.5"}, 1},
  });
}

TEST(BadInputs, EmptyValuesAndValuesThatDoNotApplyAreRefused) {
  const std::string strands_bare = "strands --workload mandelbrot --out '{d}/s.png'";
  run_cases({
      {kRender + " --heat-out ''", {"--heat-out: needs a PNG file name, got \"\""}},
      {kRender + " --reference ''", {"--reference: needs an EXR file, got \"\""}},
      {kRender + " --scene ''", {"--scene: needs a scene name or file, got \"\""}},
      {kBench + " --csv ''", {"--csv: needs a CSV file name, got \"\""}},
      {kStrandBench + " --csv ''", {"--csv: needs a CSV file name"}},
      {"bench --cpu --workload mandelbrot --strategy sequential --grid ''", {"--grid: needs n,b[,c] or auto, got \"\""}},
      {"bench --cpu --workload mandelbrot --strategy sequential --size ''", {"--size: needs WxH, got \"\""}},
      {"bench --cpu --workload '' --strategy sequential", {"--workload: needs a strand workload"}},
      {"sort-bench --csv ''", {"--csv: needs a CSV file name"}},
      {"sched-bench --out-prefix '{d}/b' --order-log ''", {"--order-log: needs a CSV file name"}},
      {kViewer + " --window-shot ''", {"--window-shot: needs a PNG file name, got \"\""}},
      {kViewer + " --reference ''", {"--reference: needs an EXR file"}},
      {kViewer + " --workload ''", {"--workload: needs a workload ("}},
      {kViewer + " --strand-strategy ''", {"--strand-strategy: needs a strand strategy"}},
      {kViewer + " --capture-dir ''", {"--capture-dir: needs a folder, got \"\""}},
      {strands_bare + " --size ''", {"--size: needs WxH, got \"\""}},
      {strands_bare + " --kernel ''", {"--kernel: must be one of tent, ctmr, bspln3, got \"\""}},
      {strands_bare + " --kernel abc", {"--kernel: must be one of tent, ctmr, bspln3, got \"abc\""}},
      {"strands --workload vr-lite-cam --out '{d}/s.png' --volume ''", {"--volume: needs a volume name or file"}, 1},
      {strands_bare + " --size 16x16 --volume nonexist", {"--volume", "applies to vr-lite-cam, illust-vr", "not to mandelbrot"}, 1},
      {"strands --workload lic2d --kernel tent --out '{d}/s.png'", {"--kernel", "applies to vr-lite-cam, illust-vr", "not to lic2d"}, 1},
      {strands_bare + " --size 16x16 --step 16", {"--step", "not to mandelbrot"}, 1},
      {strands_bare + " --size 16x16 --smooth 16", {"--smooth", "not to mandelbrot"}, 1},
      {strands_bare + " --size 16x16 --azimuth 90", {"--azimuth", "not to mandelbrot"}, 1},
      {strands_bare + " --size 16x16 --distance 100", {"--distance", "not to mandelbrot"}, 1},
      // The three benches refuse each other's options: the gibbs bench's never reach a render or strand
      // bench silently (--sweep-blocks would bench the path tracer once), nor theirs the gibbs bench.
      {kBench + " --sweep-blocks", {"--sweep-blocks", "belongs to the gibbs bench"}, 1},
      {kBench + " --gamma 1", {"--gamma", "belongs to the gibbs bench"}, 1},
      {kStrandBench + " --block 8x4", {"--block", "belongs to the gibbs bench"}, 1},
      {kStrandBench + " --sweeps 5", {"--sweeps", "belongs to the gibbs bench"}, 1},
      {kStrandBench + " --noise-threshold 0.5", {"--noise-threshold", "not of the strand bench"}, 1},
      {"bench --cpu --workload gibbs --size 64x64", {"--size", "not an option of the gibbs bench"}, 1},
      {"bench --cpu --workload gibbs --sweep", {"--sweep", "not an option of the gibbs bench"}, 1},
      {"bench --cpu --workload gibbs --spp 4", {"--spp", "not an option of the gibbs bench"}, 1},
      {"bench --cpu --workload gibbs --queue kerbl", {"--queue", "not an option of the gibbs bench"}, 1},
      {"bench --cpu --workload gibbs --grid auto", {"--grid", "not an option of the gibbs bench"}, 1},
  });
}

TEST(BadInputs, TheViewersScriptFramesAndCaptureFolderAreCheckedAtStart) {
  run_cases({
      {"--cpu --frames 8 --smoke-at 500:capture", {"--smoke-at", "frame 500", "--frames 8"}, 1},
      {"--cpu --frames 8 --smoke-at 2:capture,9:capture", {"--smoke-at", "\"9:capture\"", "--frames 8"}, 1},
      {"--cpu --frames 0 --window-shot '{d}/z.png'", {"--window-shot", "--frames of at least 1", "got 0"}, 1},
      {kViewer + " --smoke-at '1:strand-pan=nan:0:1'", {"--smoke-at", "centre x must be a finite number, got \"nan\""}, 1,
       {"half_height", "half-height"}},
      {kViewer + " --smoke-at '1:strand-orbit=nan:0:100'", {"--smoke-at", "azimuth must be a finite number, got \"nan\""}, 1,
       {"distance"}},
      {kViewer + " --smoke-at '1:strand-orbit=0:inf:100'", {"--smoke-at", "elevation", "\"inf\""}, 1},
      {kViewer + " --smoke-at '1:strand-pan=0:0:1e999'", {"--smoke-at", "half-height", "\"1e999\""}, 1},
      {kViewer + " --capture-dir '{d}/.cap'", {"--capture-dir", "hidden folder"}, 1},
      {kViewer + " --capture-dir /nonexistent-megaview/c", {"--capture-dir", "/nonexistent-megaview", "does not exist"}, 1},
      {kViewer + " --capture-dir '{d}/existing.png'", {"--capture-dir", "{d}/existing.png", "is a file, not a folder"}, 1},
      {kViewer + " --capture-dir '{d}/afile/c'", {"--capture-dir", "{d}/afile", "is not a folder"}, 1},
  });
}

TEST(BadInputs, AbsurdJobsAreRefusedWithAnEstimate) {
  run_cases({
      {"sched-model --out-prefix '{d}/m' --n 16777216 --workers 1 --task-us 1e7",
       {"--n/--workers/--task-us", "16777216 tasks of 1e+07 µs on 1 workers", "controller passes"}, 1},
      {"sched-model --out-prefix '{d}/m' --n 16777216 --workers 1", {"--n/--workers/--task-us", "controller passes"}, 1},
      {kCurve + " --duration-ms 1e7 --interval-ms 1e-300", {"--interval-ms", "records per series", "at least 10 ms"}, 1},
      {kCurve + " --duration-ms 1000 --interval-ms 1e-4", {"--interval-ms", "records per series"}, 1},
  });
}

TEST(BadInputs, ChoicesAndCountsReadInTheProgramsStyle) {
  const int mismatch = static_cast<int>(CLI::ExitCodes::ArgumentMismatch);
  run_cases({
      {kRender + " --strategy abc", {"--strategy: must be one of sequential, ", "got \"abc\""}},
      {kRender + " --strategy ''", {"--strategy: must be one of", "got \"\""}, kRefused, {"  not in"}},
      {kRender + " --priority abc", {"--priority: must be one of none, intensity, ", "got \"abc\""}},
      {kBench + " --strategies sequential,abc", {"--strategy: must be one of", "got \"abc\""}, 1},
      {"sched-model --out-prefix '{d}/m' --order abc", {"--order: must be one of ascending, random, descending, got \"abc\""}},
      {"sched-bench --out-prefix '{d}/b' --queue abc", {"--queue: must be one of kerbl, buckets, quanta, got \"abc\""}},
      {"strands --workload abc --out '{d}/s.png'", {"--workload: must be one of mandelbrot, vr-lite-cam, illust-vr, path-tracer, lic2d, ridge3d, checkerboard, got \"abc\""}},
      {"sched-model --out-prefix '{d}/m' --sort-us 1.5", {"--sort-us: needs 3 values, comma separated, got 1"}, mismatch},
      {"sched-model --out-prefix '{d}/m' --n ,", {"--n: needs a value"}, mismatch},
      {kRender + " --seed 1 --seed 2", {"--seed: given 2 times; give it once"}, mismatch},
      {kCurve + " --compare abc", {"--compare", "the strategy must be one of", "got \"abc\""}, 1, {"strategy: unknown"}},
      {kCurve + " --compare cpu-parallel:abc", {"--compare", "the priority must be one of", "got \"abc\""}, 1},
      // Knobs in brackets are the named strategy's own (its table, base/params.h), checked before any work.
      {kCurve + " --compare 'uniform[queue=kerbl]'", {"--compare", "\"queue=kerbl\" is not name=value of a knob of uniform"}, 1},
      {kCurve + " --compare 'megakernel[segment-size=100]'", {"--segment-size: must be an integer in [32, 512], a power of two, got \"100\""}, 1},
      {kCurve + " --compare 'cuda-global-queue[queue=kerbl]'", {"is not name=value of a knob of cuda-global-queue"}, 1},
      {"render --cpu --spp 1 --outt '{d}/x.png'", {"--outt: unknown option"}, static_cast<int>(CLI::ExitCodes::RequiredError), {"required"}},
  });
}

TEST(BadInputs, JobsThatDoNotFitInMemoryAreRefusedBeforeAllocating) {
  // A cap of 1 GiB on the memory megaview may assume (app/cli/cli_validate.h), so that the cases do not
  // depend on the machine.
  const std::string cap = "MEGAVIEW_HOST_MEMORY=1073741824";
  run_cases(
      {
          {"render --cpu --spp 1048576 --width 16384 --height 16384 --out '{d}/x.png'",
           {"--width/--height", "16384x16384", "GiB", "available"}, 1},
          {"reference --cpu --spp 1 --width 8192 --height 8192 --out '{d}/r.exr'", {"--width/--height", "8192x8192"}, 1},
          {"mse-curve --cpu --spp 1 --width 16384 --height 16384 --out-prefix '{d}/c'", {"--width/--height"}, 1},
          {"bench --cpu --spp 1 --width 16384 --height 16384 --strategies sequential", {"--width/--height"}, 1},
          {"allocation-bound --cpu --spp 1 --width 16384 --height 16384", {"--width/--height"}, 1},
          {"bench --cpu --workload mandelbrot --strategy sequential --size 16384x16384", {"--size", "16384x16384", "GiB"}, 1},
          {"strands --workload mandelbrot --size 16384x16384 --out '{d}/s.png'", {"--size", "16384x16384", "GiB"}, 1},
      },
      cap);
}

TEST(BadInputs, ReferenceIntoAMissingFolderFailsAtOnce) {
  test::TempDir io("bad-io");
  const test::CliResult r = test::run_megaview(io, "reference --scene room --spp 65536 --out /nonexistent/r.exr");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_LT(r.seconds, 1.0);
}

// ---- the validators and the progress class themselves ----

std::string validate(const CLI::Validator& v, std::string text) { return v(text); }

TEST(CliValidate, RangesPrintShortAndExact) {
  EXPECT_EQ(cli::range_text({0.0, false}, {1e7}), "(0, 1e7]");
  EXPECT_EQ(cli::range_text({1}, {1048576}), "[1, 1048576]");
  EXPECT_EQ(cli::range_text({0.05}, {16.0, false}), "[0.05, 16)");
  EXPECT_EQ(cli::range_text({0.0, false}, {std::numeric_limits<double>::infinity()}), "> 0");
}

TEST(CliValidate, RealRefusesNonFiniteAndOutOfRangeAndAcceptsTheRange) {
  const CLI::Validator v = cli::real({0.0, false}, {1e7}, "ms");
  EXPECT_EQ(validate(v, "nan"), "must be a finite number in (0, 1e7] ms, got \"nan\"");
  EXPECT_EQ(validate(v, "x"), "must be a finite number in (0, 1e7] ms, got \"x\" (not a number)");
  for (const char* bad : {"0", "-1", "inf", "1e7.5", "10000001", "", " 5", "5 ", "0x10"}) EXPECT_NE(validate(v, bad), "") << bad;
  for (const char* good : {"1e-9", "5", "1e7", "2.5", ".5"}) EXPECT_EQ(validate(v, good), "") << good;
}

TEST(CliValidate, IntegersAreDecimalAndNeverWrap) {
  EXPECT_EQ(validate(cli::integer(0, 100000000), "1e8"), "must be an integer in [0, 100000000], got \"1e8\"");
  const CLI::Validator v = cli::integer(0, UINT32_MAX);
  EXPECT_NE(validate(v, "-1"), "");
  EXPECT_NE(validate(v, "4294967296"), "");
  EXPECT_NE(validate(v, "1.0"), "");
  std::string octal = "010";
  EXPECT_EQ(v(octal), "");
  EXPECT_EQ(octal, "10");  // rewritten: CLI11 would read "010" as octal 8
  const CLI::Validator u = cli::unsigned64();
  EXPECT_EQ(validate(u, "18446744073709551615"), "");
  EXPECT_EQ(validate(u, "-1"), "must be an integer in [0, 2^64 - 1], got \"-1\"");
  EXPECT_NE(validate(u, "18446744073709551616"), "");
  EXPECT_NE(validate(cli::power_of_two(32, 512), "96"), "");
  EXPECT_EQ(validate(cli::power_of_two(32, 512), "64"), "");
  EXPECT_NE(validate(cli::multiple_of(32, 32, 1024), "48"), "");
}

TEST(CliValidate, OutputChecksNameTheOptionAndLeaveNoProbeBehind) {
  test::TempDir dir("out");
  test::expect_input_error([&] { cli::check_output_file(dir / "none/x.csv", "--csv"); }, "", "--csv", {"does not exist"});
  test::expect_input_error([&] { cli::check_output_file(dir / ".csv", "--csv"); }, "", "--csv", {"hidden"});
  test::expect_input_error([&] { cli::check_output_prefix(dir.str() + "/", "--out-prefix", {".csv"}); }, "", "--out-prefix",
                           {"names a folder"});
  std::ofstream(dir / "a.csv") << "x";
  test::expect_input_error([&] { cli::check_output_file(dir / "a.csv", "--csv"); }, "", "--csv", {"already exists"});
  EXPECT_NO_THROW(cli::check_output_file(dir / "a.csv", "--csv", /*replace=*/true));
  EXPECT_NO_THROW(cli::check_output_prefix(dir / "p", "--out-prefix", {".csv", ".png"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 1);  // only a.csv
}

TEST(CliValidate, MemoryBeyondHalfOfTheAvailableIsRefusedWithBothAmounts) {
  const uint64_t avail = cli::available_host_bytes();
  ASSERT_GT(avail, 0u);
  EXPECT_NO_THROW(cli::check_host_memory(1024, "--size", "a test"));
  test::expect_input_error([&] { cli::check_host_memory(avail, "--size", "a test"); }, "", "--size",
                           {"a test needs", cli::bytes_text(avail)});
  EXPECT_EQ(cli::bytes_text(3ull << 30), "3.0 GiB");
  EXPECT_EQ(cli::bytes_text(512), "512 B");
}

TEST(Progress, PlainLinesAfterTheDelayWithRateEtaAndAFinalLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress::Options o;
    o.terminal = false;
    o.first_after_s = 0.0;
    o.line_every_s = 0.0;
    o.out = f;
    Progress p("job", 100.0, "steps", o);
    p.update(25.0);
    p.update(50.0);
    p.finish();
    p.update(60.0);  // after finish: nothing
  }
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  EXPECT_NE(text.find("job:  25.0%, "), std::string::npos) << text;
  EXPECT_NE(text.find("steps/s, ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("job: 100.0%, "), std::string::npos) << text;
  EXPECT_NE(text.find("took 0:00\n"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
}

TEST(Progress, ShortJobsStayQuiet) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress::Options o;
    o.terminal = false;
    o.out = f;  // first_after_s: the default 2 s
    Progress p("job", 10.0, "steps", o);
    for (int i = 0; i <= 10; ++i) p.update(i);
    EXPECT_FALSE(p.printed());
  }
  EXPECT_EQ(std::ftell(f), 0L);
  std::fclose(f);
}

TEST(Progress, TimesAndRatesRead) {
  EXPECT_EQ(Progress::duration_text(7), "0:07");
  EXPECT_EQ(Progress::duration_text(754), "12:34");
  EXPECT_EQ(Progress::duration_text(3723), "1:02:03");
  EXPECT_EQ(Progress::duration_text(3 * 86400 + 4 * 3600), "3 days 4 h");
  EXPECT_EQ(Progress::duration_text(std::nan("")), "?");
  EXPECT_EQ(Progress::rate_text(12.3e6, "samples"), "12.3 Msamples/s");
  EXPECT_EQ(Progress::rate_text(3.5, "runs"), "3.50 runs/s");
}

}  // namespace
}  // namespace mv

namespace mv {
namespace {

const std::string kGibbsBench = "bench --cpu --workload gibbs --width 64 --height 32 --sweeps 1 --repeat 1";

TEST(BadInputs, NumbersOfTheGibbsBench) {
  run_cases({
      {kGibbsBench + " --lambda 0", {"--lambda", "[1e-06, 16]", "\"0\""}},
      {kGibbsBench + " --lambda -1", {"--lambda", "[1e-06, 16]"}},
      {kGibbsBench + " --lambda nan", {"--lambda", "\"nan\""}},
      {kGibbsBench + " --lambda 17", {"--lambda", "[1e-06, 16]"}},
      {kGibbsBench + " --gamma -0.5", {"--gamma", "[0, 10]"}},
      {kGibbsBench + " --gamma nan", {"--gamma", "\"nan\""}},
      {kGibbsBench + " --decay-width 0", {"--decay-width", "[0.01, 10]"}},
      {kGibbsBench + " --thinning 0", {"--thinning", "[1, 1000000]"}},
      {kGibbsBench + " --sweeps 0", {"--sweeps"}},
      {kGibbsBench + " --padding maybe", {"--padding"}},
      {kGibbsBench + " --block 64x32", {"--block", "W × H ≤ 1024", "\"64x32\""}, 1},
      {kGibbsBench + " --block 0x4", {"--block", "W, H ≥ 1"}, 1},
      {kGibbsBench + " --block 32", {"--block", "WxH"}, 1},
      {"bench --cpu --workload gibbs --width 60 --height 32 --sweeps 1", {"--width", "a multiple of 8"}, 1},
      {kGibbsBench + " --tile-width 12", {"--tile-width", "a multiple of 8"}, 1},
      {kGibbsBench + " --strategy gibbs-nope", {"--strategy", "gibbs-cpu", "\"gibbs-nope\""}, 1},
      {kGibbsBench + " --strategy gibbs-deep", {"--strategy", "\"gibbs-deep\" needs a CUDA GPU"}, 1},
      {kGibbsBench + " --sweep-blocks", {"--sweep-blocks", "--out-prefix"}, 1},
      {kGibbsBench + " --sweep-blocks --block 8x8 --out-prefix '{d}/g'", {"--block", "--sweep-blocks"}, 1},
      {kGibbsBench + " --sweep-blocks --out-prefix '{d}/g'", {"--sweep-blocks: ", "a CUDA GPU", "--cpu"}, 1, {"--strategy"}},
      {kGibbsBench + " --csv '{d}/existing.csv'", {"--csv", "existing.csv"}, 1},
      {kGibbsBench + " --out-prefix '{d}/g'", {"--out-prefix", "--sweep-blocks"}, 1},
      {"bench --cpu --workload gibbs,mandelbrot --width 64 --height 32", {"--workload", "\"mandelbrot\""}, 1},
  });
}

}  // namespace
}  // namespace mv
