// The stencil as a lattice run (app/session/stencil_run.h), headless on the CPU reference: registry,
// knobs, live changes of the decomposition that keep the field, refusals, the view and the report.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/session/lattice_run.h"
#include "app/session/stencil_run.h"
#include "base/errors.h"
#include "render/lattice/jacobi.h"
#include "sched/lattice/halo_cpu.h"
#include "stencil_cases.h"
#include "test_support.h"

namespace mv {
namespace {

TEST(StencilRun, IsRegisteredAndKeepsTheFieldAcrossLiveChanges) {
  const LatticeWorkloadEntry* e = find_lattice_workload("stencil");
  ASSERT_NE(e, nullptr);
  std::unique_ptr<LatticeRun> run = e->make({{"size", "96"}, {"partitions", "4"}, {"iterations-per-frame", "5"}}, false);
  EXPECT_EQ(run->workload(), "stencil");
  EXPECT_EQ(run->views().front(), "field");
  EXPECT_EQ(run->advance(1000.0), 5u);
  EXPECT_FALSE(run->restarts("depth"));
  EXPECT_TRUE(run->restarts("size"));
  Params& p = run->params();
  p.set(p.find("depth"), 4);
  p.set(p.find("overlap"), 1);
  run->advance(1000.0);
  p.set(p.find("exchange"), 1);  // async
  p.set(p.find("partitions"), 6);
  run->advance(1000.0);
  EXPECT_EQ(run->steps(), 15u);
  auto* s = dynamic_cast<StencilRun*>(run.get());
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(same_bits(s->field(), stencil_reference(96, 15)));
  const nlohmann::json r = run->report();
  EXPECT_EQ(r["knobs"]["depth"], 4);
  EXPECT_EQ(r["tiles"], "2x3");
  EXPECT_TRUE(r.contains("gb_per_s"));
  EXPECT_TRUE(r["phase_ms_per_iteration"].contains("inner"));
}

TEST(StencilRun, ARefusedCombinationLeavesTheRunAsItWas) {
  StencilRun run({{"size", "64"}, {"partitions", "4"}, {"iterations-per-frame", "3"}}, false);
  run.advance(1000.0);
  Params& p = run.params();
  p.set(p.find("depth"), 40);  // larger than a 32-site partition
  try {
    run.advance(1000.0);
    FAIL() << "depth 40 on 32-site partitions was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--depth"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.text(p.find("depth")), "1");
  run.advance(1000.0);
  EXPECT_TRUE(same_bits(run.field(), stencil_reference(64, 6)));
  EXPECT_THROW(StencilRun({{"gpus", "2"}}, false), InputError);
  EXPECT_THROW(StencilRun({{"depth", "0"}}, false), InputError);
}

TEST(StencilRun, MoreGpusOnTheCpuReferenceAreRefusedAndTheRunGoesOn) {
  StencilRun run({{"size", "64"}, {"partitions", "4"}, {"iterations-per-frame", "3"}}, false);
  run.advance(1000.0);
  Params& p = run.params();
  p.set(p.find("gpus"), 8);
  try {
    run.advance(1000.0);
    FAIL() << "gpus 8 on the CPU reference was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpus"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.text(p.find("gpus")), "1");  // back to the running knobs: the sidecar records what ran
  EXPECT_EQ(run.report()["knobs"]["gpus"], 1);
  EXPECT_EQ(run.advance(1000.0), 3u);  // the next frames run, and a later change is judged on its own
  p.set(p.find("depth"), 2);
  EXPECT_EQ(run.advance(1000.0), 3u);
  EXPECT_TRUE(same_bits(run.field(), stencil_reference(64, 9)));
}

TEST(StencilRun, AFrameRunsNoMoreIterationsThanItsBudgetFits) {
  // 20000 iterations of a 128 x 128 grid take about a second on the CPU; a 5 ms frame runs far fewer.
  StencilRun run({{"size", "128"}, {"partitions", "1"}, {"iterations-per-frame", "20000"}}, false);
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t ran = 0;
  for (int f = 0; f < 3; ++f) {
    const uint64_t k = run.advance(5.0);
    EXPECT_GE(k, 1u);
    EXPECT_LT(k, 20000u);
    ran += k;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 0.5) << "three 5 ms frames took " << s << " s";
  EXPECT_EQ(run.steps(), ran);
  EXPECT_TRUE(same_bits(run.field(), stencil_reference(128, int(ran))));
}

TEST(StencilRun, AGridLargerThanTheHostMemoryIsRefusedAndTheRunKept) {
  const char* old = std::getenv("MEGAVIEW_HOST_MEMORY");
  const std::string saved = old ? old : "";
  ::setenv("MEGAVIEW_HOST_MEMORY", "1048576", 1);  // 1 MiB: a 1024 x 1024 grid (8 MiB) does not fit
  StencilRun run({{"size", "64"}, {"partitions", "4"}, {"iterations-per-frame", "2"}}, false);
  run.advance(1000.0);
  Params& p = run.params();
  p.set(p.find("size"), 1024);
  std::string message;
  try {
    run.advance(1000.0);
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_THROW(StencilRun({{"size", "1024"}}, false), InputError);
  old ? ::setenv("MEGAVIEW_HOST_MEMORY", saved.c_str(), 1) : ::unsetenv("MEGAVIEW_HOST_MEMORY");
  EXPECT_NE(message.find("--size"), std::string::npos) << message;
  EXPECT_NE(message.find("host memory"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(p.text(p.find("size")), "64");
  run.advance(1000.0);
  EXPECT_TRUE(same_bits(run.field(), stencil_reference(64, 4)));
}

TEST(StencilRun, TheViewDrawsThePartitionBorders) {
  StencilRun run({{"size", "64"}, {"partitions", "4"}}, false);
  std::vector<uint32_t> rgba;
  uint32_t w = 0, h = 0;
  run.image(0, rgba, w, h);
  ASSERT_EQ(w, 64u);
  ASSERT_EQ(h, 64u);
  EXPECT_EQ(rgba[size_t(5) * w + 32], 0xFFFFFFFFu);  // the border between the two tile columns
  EXPECT_EQ(rgba[size_t(32) * w + 5], 0xFFFFFFFFu);  // and between the rows
  EXPECT_NE(rgba[size_t(5) * w + 5], 0xFFFFFFFFu);
  EXPECT_THROW(run.image(1, rgba, w, h), std::out_of_range);
}

// The bench end to end on the CPU: the table, the coverage and speed-up lines, the CSV and its metadata.
TEST(StencilBench, WritesTheTableAndTheCsv) {
  test::TempDir io("stencil-bench");
  const std::string csv = io.str() + "/s.csv";
  const test::CliResult r = test::run_megaview(
      io, "bench --cpu --workload stencil --size 48 --partitions 1,4 --depth 1,2 --exchange sync,async --overlap off,on "
          "--iterations 4 --repeat 1 --csv '" + csv + "'", "MV_FIGURES_SCRIPT=/nonexistent");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("overlap coverage"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("best: size 48"), std::string::npos) << r.out;
  const std::string text = test::slurp(csv);
  EXPECT_EQ(text.rfind("size,partitions,gpus,tiles,depth,exchange,overlap,kernel,", 0), 0u) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 2 * 2 * 2 * 2);
  EXPECT_NE(test::slurp(io.str() + "/s.json").find("\"stencil-bench\""), std::string::npos);
}

// A long run reports within itself: a progress line below 100 % (and, past three minutes, the estimate)
// comes while the one timed run goes on, not only when it has ended.
TEST(StencilBench, ALongRunReportsItsProgressWhileItRuns) {
  test::TempDir io("stencil-bench-progress");
  const test::CliResult r =
      test::run_megaview(io, "bench --cpu --workload stencil --size 2048 --partitions 1 --iterations 3000 --repeat 1");
  ASSERT_EQ(r.code, 0) << r.err;
  if (r.seconds < 3.0)
    GTEST_SKIP() << "the run took " << r.seconds << " s: too short for progress lines (the first comes after 2 s)";
  // a line "stencil bench:  NN.N%, …" with NN.N < 100
  EXPECT_LT(test::least_progress_percent(r.err, "stencil bench: "), 100.0) << r.err;
}

}  // namespace
}  // namespace mv
