// `megaview sched-bench` (Kerbl 2012 §6.2 on the GPU megakernel with spin tasks): every task runs once,
// FIFO from an ascending queue scores exactly 0, the controller(s) raise the score; the command refuses
// bad settings and says in one line when there is no GPU.
#include <gtest/gtest.h>

#include <string>

#include "app/cli/sched_bench_gpu.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "test_support.h"

namespace mv {
namespace {

TEST(SchedBenchGpu, FifoFromAnAscendingQueueScoresZero) {
  MV_REQUIRE_GPU();
  SchedBenchCase c;
  c.n = 4096;
  c.task_us = 5.0;
  c.settings.segment_size = 64;
  c.settings.controller = false;
  const SchedBenchResult r = run_sched_bench_case(c);  // throws unless every task ran exactly once
  EXPECT_EQ(r.score, 0.0) << "FIFO dequeues in ticket order, which is ascending priority";
  EXPECT_EQ(r.passes[0] + r.passes[1] + r.passes[2], 0u);
  EXPECT_GT(r.worker_warps, 0u);
  EXPECT_EQ(r.controllers, 1u);
}

// Kerbl's setting in size: few workers (one block of 4 warps per SM) against a long ascending queue; the
// controllers, told the static task duration (§5.4), must pull high priorities forward.
TEST(SchedBenchGpu, ControllersRaiseTheScoreOfLongTasks) {
  MV_REQUIRE_GPU();
  for (uint32_t p : {1u, 4u}) {
    SchedBenchCase c;
    c.n = 20000;
    c.task_us = 200.0;
    c.settings.segment_size = 256;
    c.block = 128;
    c.settings.blocks_per_sm = 1;
    c.settings.controllers = p;
    const SchedBenchResult r = run_sched_bench_case(c);
    EXPECT_EQ(r.controllers, p);
    EXPECT_GT(r.passes[0] + r.passes[1] + r.passes[2], 0u) << "P = " << p;
    EXPECT_GT(r.score, 0.2) << "P = " << p << ": the controller should move high priorities forward ("
                            << r.worker_warps << " workers, " << r.refusals << " refusals)";
    EXPECT_LE(r.score, 1.0);
  }
}

TEST(SchedBenchGpu, RefusesSettingsOutOfRange) {
  MV_REQUIRE_GPU();
  SchedBenchCase c;
  c.n = 1;
  EXPECT_THROW(run_sched_bench_case(c), InputError);
  c = SchedBenchCase{};
  c.settings.segment_size = 100;
  EXPECT_THROW(run_sched_bench_case(c), InputError);
  c = SchedBenchCase{};
  c.settings.controllers = 0;
  EXPECT_THROW(run_sched_bench_case(c), InputError);
}

TEST(SchedBenchCli, WithoutAGpuSaysSoInOneLine) {
  test::TempDir dir("sched-bench");
  const test::CliResult r = test::run_megaview(dir, "sched-bench --out-prefix '" + (dir / "x") + "'", "MEGAVIEW_FORCE_CPU=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "megaview: sched-bench needs a CUDA GPU (MEGAVIEW_FORCE_CPU is set)\n");
}

TEST(SchedBenchCli, BadOptionsAreOneLineNamingTheOption) {
  test::TempDir dir("sched-bench");
  for (const char* args : {"--threads 48", "--controllers 0", "--segment-size 100", "--n 1", "--task-us 0", "--repeat 0"}) {
    const test::CliResult r =
        test::run_megaview(dir, std::string("sched-bench ") + args + " --out-prefix '" + (dir / "x") + "'");
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(r.err_lines(), 1) << args << ": " << r.err;
    const std::string option = std::string(args).substr(0, std::string(args).find(' '));
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace mv
