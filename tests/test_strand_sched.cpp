// Lehmann 2023's strand strategies (sched/strand_*.h), the parts that run everywhere: grid parsing and
// its errors, the permutation, step statistics and checksums, the CPU strategies against the reference
// (bitwise images and step counts, every strand exactly once under many block sizes), the registry, and
// `megaview bench --workload` (table, CSV, sweep files, refusals). The GPU strategies are tested in
// test_strand_sched_gpu.cu; the GPU CLI test here skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/session/image_io.h"
#include "app/session/strand_workloads.h"
#include "sched/cpu/strand_cpu.h"
#include "sched/strand_grid.h"
#include "sched/strand_image.h"
#include "sched/strand_stats.h"
#include "strand_test_workloads.h"
#include "test_support.h"

namespace mv {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- grid settings

TEST(StrandGrid, ParsesAutoAndExplicitGrids) {
  EXPECT_TRUE(parse_grid("auto").automatic);
  EXPECT_EQ(parse_grid("auto").work_unit, 1u);
  const GridConfig a = parse_grid("64,128");
  EXPECT_FALSE(a.automatic);
  EXPECT_EQ(a.blocks, 64u);
  EXPECT_EQ(a.threads, 128u);
  EXPECT_EQ(a.work_unit, 1u);
  EXPECT_EQ(a.total_threads(), 8192u);
  const GridConfig b = parse_grid("1,32,1048576");
  EXPECT_EQ(b.blocks, 1u);
  EXPECT_EQ(b.threads, 32u);
  EXPECT_EQ(b.work_unit, 1u << 20);
  EXPECT_EQ(parse_grid("67107840,1024,1").blocks, kMaxGridBlocks);
  EXPECT_EQ(parse_grid("3,96,7").str(), "3,96,7");
  EXPECT_EQ(GridConfig{}.str(), "auto");
}

/// The InputError message of parse_grid(text), or "" if it parses.
std::string grid_error(const std::string& text) {
  try {
    parse_grid(text);
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--grid") << text;
    return e.what();
  }
  return "";
}

TEST(StrandGrid, OutOfRangeSettingsNameTheFieldAndTheRange) {
  const std::string zero_n = grid_error("0,64");
  EXPECT_NE(zero_n.find("--grid: blocks n = 0 is out of range [1, 67107840]"), std::string::npos) << zero_n;
  EXPECT_NE(grid_error("67107841,32").find("blocks n = 67107841 is out of range"), std::string::npos);
  for (const char* t : {"64,48", "64,0", "64,16", "64,2048", "64,1056"}) {
    const std::string e = grid_error(t);
    EXPECT_NE(e.find("threads per block b"), std::string::npos) << t << ": " << e;
    EXPECT_NE(e.find("multiple of 32 in [32, 1024]"), std::string::npos) << t << ": " << e;
  }
  for (const char* t : {"64,64,0", "64,64,1048577", "64,64,99999999999"}) {
    const std::string e = grid_error(t);
    EXPECT_NE(e.find("work unit c"), std::string::npos) << t << ": " << e;
    EXPECT_NE(e.find("[1, 1048576]"), std::string::npos) << t << ": " << e;
  }
  EXPECT_NE(grid_error("99999999999,64").find("blocks n = 99999999999 is out of range"), std::string::npos);
  for (const char* t : {"", "64", "64,64,1,1", "a,64", "-1,64", " 64,64", "64,,1", "64;64", "Auto", "64,64,"}) {
    const std::string e = grid_error(t);
    EXPECT_NE(e.find("expected \"auto\" or \"n,b[,c]\""), std::string::npos) << "\"" << t << "\": " << e;
  }
  EXPECT_THROW(make_grid(0, 64), InputError);
  EXPECT_NO_THROW(make_grid(1, 1024, kMaxWorkUnit));
  StrandRunSettings s;
  s.cpu_block = 0;
  EXPECT_THROW(validate_strand_settings(s), InputError);
}

// ---------------------------------------------------------------- permutation, statistics, checksum

TEST(StrandPermutation, IsABijectionForEverySizeAndSeed) {
  for (uint32_t n : {0u, 1u, 2u, 3u, 31u, 1000u, (1u << 20) + 7u}) {
    for (uint64_t seed : {0ull, 1ull, 0xdeadbeefcafef00dull}) {
      const std::vector<uint32_t> p = strand_permutation(n, seed);
      ASSERT_EQ(p.size(), n);
      std::vector<char> seen(n, 0);
      for (uint32_t v : p) {
        ASSERT_LT(v, n);
        ASSERT_FALSE(seen[v]) << "value " << v << " twice (n " << n << ", seed " << seed << ")";
        seen[v] = 1;
      }
    }
  }
}

TEST(StrandPermutation, IsReproducibleBySeedAndShuffles) {
  EXPECT_EQ(strand_permutation(5000, 42), strand_permutation(5000, 42));
  EXPECT_NE(strand_permutation(5000, 42), strand_permutation(5000, 43));
  const std::vector<uint32_t> p = strand_permutation(5000, 7);
  uint32_t fixed = 0;
  for (uint32_t i = 0; i < p.size(); ++i) fixed += p[i] == i;
  EXPECT_LT(fixed, 10u);  // a uniform permutation has about one fixed point
}

TEST(StrandPermutation, AllOrdersOfFourAreAboutEquallyLikely) {
  std::map<std::vector<uint32_t>, int> count;
  const int trials = 24000;
  for (int s = 0; s < trials; ++s) ++count[strand_permutation(4, static_cast<uint64_t>(s))];
  ASSERT_EQ(count.size(), 24u);
  double chi2 = 0.0;
  for (const auto& [perm, c] : count) chi2 += (c - 1000.0) * (c - 1000.0) / 1000.0;
  EXPECT_LT(chi2, 60.0);  // 23 degrees of freedom: P(chi2 > 60) < 1e-4
}

TEST(StrandStatistics, MeanSigmaAndCvAsFig32DefinesThem) {
  const StepStatistics s = step_statistics(std::vector<uint32_t>{1, 2, 3, 4});
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.total, 10u);
  EXPECT_EQ(s.min, 1u);
  EXPECT_EQ(s.max, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.sigma, std::sqrt(1.25), 1e-12);  // population σ
  EXPECT_NEAR(s.cv, std::sqrt(1.25) / 2.5, 1e-12);
  const StepStatistics e = step_statistics(std::vector<uint32_t>{});
  EXPECT_EQ(e.count, 0u);
  EXPECT_EQ(e.mean, 0.0);
  // Large values: exact integer sums keep σ exact where a float sum of squares would cancel.
  const uint32_t big = 4000000000u;
  const StepStatistics b = step_statistics(std::vector<uint32_t>{big, big + 2, big, big + 2});
  EXPECT_DOUBLE_EQ(b.mean, big + 1.0);
  EXPECT_DOUBLE_EQ(b.sigma, 1.0);
}

TEST(StrandChecksum, Fnv1a64MatchesTheReferenceValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

// ---------------------------------------------------------------- images

TEST(StrandImage, DeadStrandsWriteTheBackgroundAndPixelsOutsideThrow) {
  test::CountingStrands w;
  w.n = 20;
  StrandRun<test::CountingStrands> r = SequentialStrands<test::CountingStrands>().run(w, {});
  const std::vector<float> img = strand_image(w, r, 5, 4);
  ASSERT_EQ(img.size(), 80u);
  for (uint32_t i = 0; i < 20; ++i) {
    if (r.status[i] == WorkStatus::Dead) {
      for (int c = 0; c < 4; ++c) EXPECT_EQ(img[4 * i + c], kStrandBackground[c]) << "strand " << i;
    } else {
      EXPECT_EQ(img[4 * i + 3], 1.f);
      EXPECT_EQ(img[4 * i], static_cast<float>(i) / 255.f);
    }
  }
  EXPECT_EQ(r.status[3], WorkStatus::Dead);
  EXPECT_EQ(r.status[4], WorkStatus::Stable);
  EXPECT_THROW(strand_image(w, r, 4, 4), std::out_of_range);
  const std::vector<uint32_t> packed = rgba8({0.f, 0.5f, 1.f, 2.f, -1.f, 0.25f, 1.f, 0.f});
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0], 0u | (128u << 8) | (255u << 16) | (255u << 24));
  EXPECT_EQ(packed[1], 0u | (64u << 8) | (255u << 16) | (0u << 24));
}

// ---------------------------------------------------------------- CPU strategies on mandelbrot

TEST(StrandCpu, SequentialIsTheReferenceAndTheRegionsMixEarlyEscapeAndCap) {
  for (const MandelbrotStrands& w : test::mandelbrot_cases()) {
    const StrandResult r = test::run_mandelbrot(w, "sequential");
    const uint32_t n = w.num_strands();
    ASSERT_EQ(r.steps.size(), n);
    uint32_t capped = 0, early = 0;
    for (uint32_t i = 0; i < n; ++i) {
      MandelbrotStrands::State s;
      uint32_t steps = 0;
      const WorkStatus st = run_item(w, i, s, steps);
      ASSERT_EQ(r.steps[i], steps) << "strand " << i;
      ASSERT_EQ(r.status[i], st);
      capped += steps == w.p.max_iterations;
      early += steps < w.p.max_iterations / 10;
    }
    EXPECT_GT(capped, n / 20) << "the region should have strands that run to the cap";
    EXPECT_LT(capped, n - n / 20);
    EXPECT_GT(early, n / 100) << "the region should have strands that escape within a tenth of the cap";
    EXPECT_EQ(r.timing.launches, 0u);
    EXPECT_FALSE(r.timing.cuda_events);
    EXPECT_GT(r.timing.ms, 0.0);
  }
}

TEST(StrandCpu, CpuParallelMatchesSequentialBitwiseForEveryBlockSize) {
  for (const MandelbrotStrands& w : test::mandelbrot_cases()) {
    const StrandResult seq = test::run_mandelbrot(w, "sequential");
    for (uint32_t block : {1u, 7u, 64u, 4096u, w.num_strands() + 5u}) {
      StrandRunSettings s;
      s.cpu_block = block;
      const StrandResult par = test::run_mandelbrot(w, "cpu-parallel", s);
      EXPECT_TRUE(test::same_result(seq, par)) << "cpu_block " << block;
      EXPECT_EQ(par.timing.super_steps, step_statistics(seq.steps).max) << "BSP runs as many super-steps as the longest strand";
    }
  }
}

TEST(StrandCpu, EveryStrandRunsExactlyOnceToCompletion) {
  for (uint32_t n : {0u, 1u, 1000u, 4099u}) {
    for (uint32_t block : {1u, 3u, 64u, 4096u, 100000u}) {
      for (uint32_t max_steps : {0xffffffffu, 17u, 0u}) {
        for (int parallel = 0; parallel < 2; ++parallel) {
          std::vector<uint32_t> inits(n + 1, 0), updates(n + 1, 0);
          test::CountingStrands w;
          w.n = n;
          w.init_calls = inits.data();
          w.update_calls = updates.data();
          StrandRunSettings s;
          s.cpu_block = block;
          s.max_steps = max_steps;
          const StrandRun<test::CountingStrands> r = parallel ? CpuParallelStrands<test::CountingStrands>().run(w, s)
                                                              : SequentialStrands<test::CountingStrands>().run(w, s);
          EXPECT_TRUE(test::ran_exactly_once(r, inits, updates, n, max_steps))
              << (parallel ? "cpu-parallel" : "sequential") << " n " << n << " block " << block << " max_steps "
              << max_steps;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- registry

TEST(StrandRegistry, HasAppendixAsStrategiesInOrderWithTheirNeeds) {
  const std::vector<std::string> expected = {"sequential",
                                             "cpu-parallel",
                                             "cuda",
                                             "cuda-permute",
                                             "cuda-batch",
                                             "cuda-batch-permute",
                                             "cuda-unified-memory",
                                             "cuda-global-queue",
                                             "cuda-global-queue-unified-memory",
                                             // the patch-task strategies, on groups of 32 strands
                                             "sequential-priority",
                                             "uniform",
                                             "sorted-waves",
                                             "megakernel"};
  EXPECT_EQ(mandelbrot_strand_strategies().names(), expected);
  const StrandWorkloadEntry& w = find_strand_workload("mandelbrot");
  EXPECT_EQ(w.default_width * w.default_height, 4000000u);  // Lehmann 2023 Fig 3.2
  for (const StrategyInfo& i : w.strategies) {
    const bool task = i.name == "sequential-priority" || i.name == "uniform" || i.name == "sorted-waves" ||
                      i.name == "megakernel";
    EXPECT_EQ(i.reads("task-quantum"), task) << i.name;
    EXPECT_EQ(i.needs_gpu(), i.name.rfind("cuda", 0) == 0 || (task && i.name != "sequential-priority")) << i.name;
    EXPECT_EQ(i.uses_grid, i.needs_gpu() && !task) << i.name;
    EXPECT_EQ(i.reads("work-unit"), i.name.find("global-queue") != std::string::npos) << i.name;
    EXPECT_EQ(i.reads("permute-seed"), i.name.find("permute") != std::string::npos) << i.name;
    EXPECT_EQ(i.reads("prefetch"), i.name.find("unified-memory") != std::string::npos) << i.name;
    EXPECT_FALSE(i.section.empty()) << i.name;
  }
  try {
    mandelbrot_strand_strategies().find("warp-drive");
    ADD_FAILURE() << "no exception";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda-global-queue-unified-memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_strand_workload("no-such-workload"), InputError);
}

TEST(StrandRegistry, GpuStrategiesHaveTheirSectionsAndKnobsInOrder) {
  // Appendix A's seven GPU strategies: where the paper describes each, and the knobs it reads, in order.
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> expected = {
      {"cuda", "Lehmann 2023 §3.1", {}},
      {"cuda-permute", "Lehmann 2023 §3.2", {"permute-seed"}},
      {"cuda-batch", "Lehmann 2023 §3.3", {}},
      {"cuda-batch-permute", "Lehmann 2023 §3.2, §3.3", {"permute-seed"}},
      {"cuda-unified-memory", "Lehmann 2023 §3.1, §4.2.3", {"prefetch", "managed-counter"}},
      {"cuda-global-queue", "Lehmann 2023 §3.4", {"work-unit"}},
      {"cuda-global-queue-unified-memory", "Lehmann 2023 §3.4, §4.2.3", {"work-unit", "prefetch", "managed-counter"}}};
  std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> got;
  for (const StrategyInfo& i : find_strand_workload("mandelbrot").strategies) {
    if (i.name.rfind("cuda", 0) != 0) continue;
    got.emplace_back(i.name, i.section, i.knobs);
    EXPECT_TRUE(i.needs_gpu() && i.uses_grid) << i.name;
    EXPECT_FALSE(i.description.empty()) << i.name;
  }
  EXPECT_EQ(got, expected);
}

TEST(StrandRegistry, AGpuStrategyWithoutAGpuThrowsCudaError) {
  if (gpu_available() || std::getenv("MEGAVIEW_FORCE_CPU")) GTEST_SKIP() << "only meaningful where CUDA has no device";
  const MandelbrotStrands w = mandelbrot_workload(16, 16);
  for (const char* name : {"cuda", "cuda-batch", "cuda-global-queue", "cuda-unified-memory"})
    EXPECT_THROW(mandelbrot_strand_strategies().find(name).make()->run(w, {}), CudaError) << name;
}

// ---------------------------------------------------------------- the CLI

using Result = test::CliResult;

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

/// The 16-hex-digit checksums in the table rows of `out` that start with one of `names`.
std::map<std::string, std::string> checksums(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream lines(out);
  const std::regex row(R"(^(\S+)\s.*\s([0-9a-f]{16})\s)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch sm;
    if (std::regex_search(line, sm, row)) m[sm[1]] = sm[2];
  }
  return m;
}

TEST(StrandBenchCli, PrintsATableWithEqualChecksumsAndWritesEveryStrategyToCsv) {
  test::TempDir dir("strand-bench");
  const Result r = test::run_megaview(dir, "bench --workload mandelbrot --size 64x48 --strategy sequential,cpu-parallel "
                                           "--repeat 2 --csv '" + (dir / "b.csv") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* word : {"median ms", "steps mu", "sigma", "CV", "image checksum", "CUDA events", "3072 strands"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  const auto sums = checksums(r.out);
  ASSERT_EQ(sums.count("sequential"), 1u) << r.out;
  ASSERT_EQ(sums.count("cpu-parallel"), 1u) << r.out;
  EXPECT_EQ(sums.at("sequential"), sums.at("cpu-parallel"));
  EXPECT_NE(r.out.find("agreement: every strategy gave the same image"), std::string::npos) << r.out;

  // The printed checksum is the image's: compute it here.
  const StrandResult ref = test::run_mandelbrot(mandelbrot_workload(64, 48), "sequential");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(ref.checksum()));
  EXPECT_EQ(sums.at("sequential"), hex);

  const auto rows = read_csv(dir / "b.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].at(3), "strategy");
  EXPECT_EQ(rows[1].at(3), "sequential");
  EXPECT_EQ(rows[2].at(3), "cpu-parallel");
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at(0), "mandelbrot");
    EXPECT_EQ(rows[i].at(1), "64");
    EXPECT_GT(std::stod(rows[i].at(8)), 0.0);
    EXPECT_EQ(rows[i].at(17), hex);
    EXPECT_NEAR(std::stod(rows[i].at(14)), step_statistics(ref.steps).mean, 1e-3);
  }
  // Never replaces a file.
  const Result again = test::run_megaview(dir, "bench --workload mandelbrot --size 8x8 --strategy sequential "
                                               "--repeat 1 --csv '" + (dir / "b.csv") + "'");
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(again.err_lines(), 1) << again.err;
  EXPECT_NE(again.err.find("b.csv"), std::string::npos) << again.err;
}

TEST(StrandBenchCli, RefusesGpuStrategiesWithoutAGpuInOneLine) {
  test::TempDir dir("strand-bench");
  const Result r = test::run_megaview(dir, "bench --workload mandelbrot --size 16x16 --strategy sequential,cuda-batch",
                                      "MEGAVIEW_FORCE_CPU=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "megaview: bench: strategy cuda-batch needs a CUDA GPU (MEGAVIEW_FORCE_CPU is set)\n");
  EXPECT_EQ(r.out.find("sequential "), std::string::npos) << "nothing should run before the refusal:\n" << r.out;
  const Result cpu = test::run_megaview(dir, "bench --cpu --workload mandelbrot --size 16x16 --strategy cuda");
  EXPECT_EQ(cpu.code, 1);
  EXPECT_EQ(cpu.err, "megaview: bench: strategy cuda needs a CUDA GPU (--cpu given)\n");
  // Without --strategy and without a GPU: the CPU strategies only.
  const Result def = test::run_megaview(dir, "bench --workload mandelbrot --size 16x16 --repeat 1", "MEGAVIEW_FORCE_CPU=1");
  ASSERT_EQ(def.code, 0) << def.err;
  const auto sums = checksums(def.out);
  EXPECT_EQ(sums.size(), 3u) << def.out;
  EXPECT_EQ(sums.count("cpu-parallel"), 1u) << def.out;
  EXPECT_EQ(sums.count("sequential-priority"), 1u) << def.out;
}

TEST(StrandBenchCli, BadInputGivesOneLineNamingTheFieldAndRange) {
  test::TempDir dir("strand-bench");
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"--grid 64,48", "--grid: threads per block b = 48 must be a multiple of 32 in [32, 1024]"},
      {"--grid 0,64", "--grid: blocks n = 0 is out of range [1, 67107840]"},
      {"--grid 64,64,0", "--grid: work unit c = 0 is out of range [1, 1048576]"},
      {"--grid 64", "--grid: expected \"auto\" or \"n,b[,c]\""},
      {"--strategy warp-drive", "--strategy: unknown strand strategy \"warp-drive\" (allowed: sequential, cpu-parallel"},
      {"--size 0x10", "--size: 0x10 is out of range for mandelbrot: width and height in [1, 16384]"},
      {"--size 100", "--size: expected WxH"},
      {"--repeat 0", "--repeat"},
      {"--sweep", "--sweep: needs --out-prefix P"},
      {"--sweep --grid 64,64 --out-prefix x", "--grid: is not used with --sweep"},
      {"--spp 4", "--spp: is an option of the path tracer's bench"},
      // --strategies is --strategy: on the strand bench it names strand strategies too.
      {"--strategies warp-drive", "--strategy: unknown strand strategy \"warp-drive\""},
  };
  for (const Case& c : cases) {
    const std::string size = c.args.find("--size") == std::string::npos ? " --size 16x16" : "";
    const Result r = test::run_megaview(dir, "bench --workload mandelbrot --strategy sequential " + c.args + size,
                                        "MEGAVIEW_FORCE_CPU=1");
    EXPECT_NE(r.code, 0) << c.args;
    EXPECT_EQ(r.err_lines(), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.out.find("image checksum"), std::string::npos) << c.args << ": ran anyway";
  }
  const Result wl = test::run_megaview(dir, "bench --workload no-such-workload");
  EXPECT_EQ(wl.code, 1);
  EXPECT_NE(wl.err.find("--workload: unknown strand workload \"no-such-workload\" (allowed: " + strand_workload_names() + ")"),
            std::string::npos)
      << wl.err;
  const Result grid_only = test::run_megaview(dir, "bench --grid 64,64 --cpu --spp 1 --width 8 --height 8");
  EXPECT_EQ(grid_only.code, 1);
  EXPECT_NE(grid_only.err.find("--grid: belongs to the strand bench: give --workload too"), std::string::npos)
      << grid_only.err;
}

TEST(StrandBenchCli, SweepWritesCsvMetadataAndBestTableAndNeverOverwrites) {
  test::TempDir dir("strand-sweep");
  const std::string prefix = dir / "sweep";
  const std::string env = "MEGAVIEW_FORCE_CPU=1 MV_FIGURES_SCRIPT='" + (dir / "absent.py") + "'";
  const Result r = test::run_megaview(
      dir, "bench --workload mandelbrot --size 40x30 --repeat 1 --sweep --out-prefix '" + prefix + "'", env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("best configuration per strategy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("steps per strand: mu"), std::string::npos) << r.out;
  const auto rows = read_csv(prefix + ".csv");
  // header, sequential, cpu-parallel (no GPU: no grid to sweep), then sequential-priority on groups of
  // 32 strands at quantum 4, 16, 64 × the three group priorities
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[1].at(3), "sequential");
  EXPECT_EQ(rows[2].at(3), "cpu-parallel");
  EXPECT_EQ(rows[1].at(15), "1.0000");
  EXPECT_EQ(rows[2].at(16), "1");  // matches sequential
  EXPECT_EQ(rows[1].at(17), "0");  // no task quantum outside the task strategies
  std::set<std::string> task_configs;
  for (size_t i = 3; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at(3), "sequential-priority");
    EXPECT_EQ(rows[i].at(16), "1") << "sequential-priority " << rows[i].at(17) << "," << rows[i].at(18);
    task_configs.insert(rows[i].at(17) + "," + rows[i].at(18));
  }
  EXPECT_EQ(task_configs.size(), 9u);
  EXPECT_EQ(task_configs.count("64,least-remaining"), 1u);
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(prefix + ".json"));
  EXPECT_EQ(meta["kind"], "strand-sweep");
  EXPECT_EQ(meta["redoes"], "Lehmann 2023, Appendix A");
  EXPECT_EQ(meta["units"]["median_ms"], "ms");
  EXPECT_EQ(meta["units"].size(), rows[0].size()) << meta.dump();
  EXPECT_NE(r.out.find("figures: "), std::string::npos) << r.out;
  // The rows of each finished strategy were kept in P.partial.csv while the sweep ran; the complete P.csv
  // replaces it.
  EXPECT_NE(r.err.find("sweep: the rows of each finished strategy go to " + prefix + ".partial.csv"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(prefix + ".partial.csv"));
  const std::string before = test::slurp(prefix + ".csv");
  const Result again = test::run_megaview(
      dir, "bench --workload mandelbrot --size 40x30 --repeat 1 --sweep --out-prefix '" + prefix + "'", env);
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(again.err_lines(), 1) << again.err;
  EXPECT_NE(again.err.find("sweep.csv"), std::string::npos) << again.err;
  EXPECT_EQ(test::slurp(prefix + ".csv"), before);
}

TEST(StrandBenchCli, OnTheGpuEveryStrategyAgreesWithSequential) {
  MV_REQUIRE_GPU();
  test::TempDir dir("strand-bench");
  const Result r = test::run_megaview(dir, "bench --workload mandelbrot --size 120x90 --repeat 2 --grid 16,64,3");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto sums = checksums(r.out);
  EXPECT_EQ(sums.size(), 13u) << r.out;  // Appendix A's nine and the four task strategies
  for (const auto& [name, sum] : sums) EXPECT_EQ(sum, sums.at("sequential")) << name;
  EXPECT_NE(r.out.find("agreement: every strategy gave the same image"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mv

namespace mv {
namespace {

/// n strands that each take k updates, so that all finish on the same super-step; each update sleeps
/// `sleep_ms`. Declares max_updates (render/strands/strand.h) as the path tracer's strands do.
struct TogetherStrands {
  struct State {
    uint32_t updates;
  };
  uint32_t n = 64, k = 4, sleep_ms = 0;
  uint32_t num_strands() const { return n; }
  uint32_t pixel(uint32_t i) const { return i; }
  uint32_t max_updates() const { return k; }
  State init(uint32_t) const { return State{0}; }
  WorkStatus update(State& s) const {
    if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    return ++s.updates < k ? WorkStatus::Active : WorkStatus::Stable;
  }
  Vec3 color(const State&, WorkStatus) const { return Vec3{0.f}; }
};

TEST(CpuParallelProgress, MovesWhileAllStrandsFinishTogether) {
  TogetherStrands w;  // 64 strands of 4 updates each: nothing finishes before the last super-step
  StrandRunSettings s;
  s.cpu_block = 16;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  s.on_progress = [&](uint64_t done, uint64_t total) { seen.emplace_back(done, total); };
  CpuParallelStrands<TogetherStrands>().run(w, s);
  ASSERT_FALSE(seen.empty());
  int within = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].second, seen.back().second);
    if (i) EXPECT_GE(seen[i].first, seen[i - 1].first) << "progress went back at report " << i;
    within += seen[i].first > 0 && seen[i].first < seen[i].second;
  }
  EXPECT_GE(within, 3) << "the three super-steps before the last reported no progress";
  EXPECT_EQ(seen.back().first, seen.back().second);
}

TEST(CpuParallelProgress, ReportsWithinALongSuperStep) {
  // One super-step of 32 strands per core, a block each, 20 ms an update: about 0.64 s whatever the cores.
  TogetherStrands w;
  w.n = 32 * std::max(1u, std::thread::hardware_concurrency());
  w.k = 1;
  w.sleep_ms = 20;
  StrandRunSettings s;
  s.cpu_block = 1;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  const std::thread::id caller = std::this_thread::get_id();
  bool other_thread = false;
  s.on_progress = [&](uint64_t done, uint64_t total) {
    other_thread |= std::this_thread::get_id() != caller;
    seen.emplace_back(done, total);
  };
  CpuParallelStrands<TogetherStrands>().run(w, s);
  EXPECT_FALSE(other_thread);
  ASSERT_GE(seen.size(), 2u) << "no report before the super-step's end";
  EXPECT_GT(seen.front().first, 0u);
  EXPECT_LT(seen.front().first, seen.front().second);
  EXPECT_EQ(seen.back().first, seen.back().second);
}

}  // namespace
}  // namespace mv
