// Adding a workload is one file plus one registration line (docs/architecture.md, "Adding a workload"):
// the toy `checkerboard` (render/strands/checkerboard.h, registered in app/session/strand_workloads.cu) appears
// in the workload registry that the CLI and the GUI picker read, every strategy runs it with the same
// result as the reference loop run_item (base/work.h), and the bench runs it from the command line. The
// GUI side (picker, capture) is checked in tests/test_cli.cpp, "ToyWorkloadRunsAndCapturesInTheGui".
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "app/session/image_io.h"
#include "app/session/strand_workloads.h"
#include "render/gpu.h"
#include "render/strands/checkerboard.h"
#include "test_support.h"

namespace mv {
namespace {

TEST(ToyWorkload, IsRegisteredWithEveryStrategy) {
  const StrandWorkloadEntry& w = find_strand_workload("checkerboard");
  EXPECT_EQ(w.default_width, 512u);
  EXPECT_NE(strand_workload_names().find("checkerboard"), std::string::npos);
  // Every strategy that the paper's workloads have, the toy has too: they come from the one strategy list.
  const StrandWorkloadEntry& m = find_strand_workload("mandelbrot");
  ASSERT_EQ(w.strategies.size(), m.strategies.size());
  for (size_t i = 0; i < w.strategies.size(); ++i) EXPECT_EQ(w.strategies[i].name, m.strategies[i].name);
}

TEST(ToyWorkload, EveryStrategyAgreesWithTheReferenceLoop) {
  constexpr uint32_t kW = 96, kH = 64;
  CheckerboardStrands toy;
  toy.width = kW;
  toy.height = kH;
  std::vector<uint32_t> expected(kW * kH);
  for (uint32_t i = 0; i < kW * kH; ++i) {
    CheckerboardStrands::State s{};
    EXPECT_EQ(run_item(toy, i, s, expected[i]), WorkStatus::Stable);
  }
  EXPECT_EQ(expected[0], toy.long_steps);         // (0, 0) lies in a light cell
  EXPECT_EQ(expected[toy.cell], toy.short_steps);  // the next cell to the right is dark

  const StrandWorkloadEntry& w = find_strand_workload("checkerboard");
  StrandRunSettings settings;
  StrandResult reference;
  int ran = 0;
  for (const StrategyInfo& info : w.strategies) {
    if (info.needs_gpu() && !gpu_available()) continue;  // the GPU strategies run on the device machine
    const StrandResult r = w.run(info.name, kW, kH, settings, true);
    EXPECT_EQ(r.steps, expected) << info.name;
    for (WorkStatus st : r.status) ASSERT_EQ(st, WorkStatus::Stable) << info.name;
    if (ran++ == 0) reference = r;
    EXPECT_EQ(strand_disagreement(reference, r, w.tolerance), "") << info.name;
  }
  EXPECT_GE(ran, gpu_available() ? static_cast<int>(w.strategies.size()) : 2);
}

/// The worked example of docs/architecture.md, "Adding a strategy": a strand strategy is a template over the
/// workload with an info record and one run(); this one runs the strands one after another from the last.
template <class W>
class ReverseSequentialStrands : public StrandStrategy<W> {
 public:
  const StrategyInfo& info() const override { return info_; }
  StrandRun<W> run(const W& w, const StrandRunSettings& settings) override {
    StrandRun<W> r;
    const uint32_t n = w.num_strands();
    r.state.resize(n);
    r.status.resize(n);
    r.steps.resize(n);
    for (uint32_t i = n; i-- > 0;) r.status[i] = run_item(w, i, r.state[i], r.steps[i], settings.max_steps);
    return r;
  }

 private:
  StrategyInfo info_{"reverse-sequential", "one CPU thread, last strand first", "docs/architecture.md"};
};

TEST(ToyWorkload, ANewStrategyIsOneClassAndOneRegistration) {
  StrandStrategyRegistry<CheckerboardStrands> registry;
  registry.add(ReverseSequentialStrands<CheckerboardStrands>().info(),
               [] { return std::make_unique<ReverseSequentialStrands<CheckerboardStrands>>(); });
  CheckerboardStrands toy;
  toy.width = 40;
  toy.height = 24;
  const StrandRun<CheckerboardStrands> r = registry.find("reverse-sequential").make()->run(toy, StrandRunSettings{});
  const StrandResult ref = find_strand_workload("checkerboard").run("sequential", 40, 24, StrandRunSettings{}, false);
  EXPECT_EQ(r.steps, ref.steps);
  EXPECT_EQ(r.status, ref.status);
  EXPECT_THROW(registry.find("sequential"), InputError) << "a registry holds only what was registered in it";
}

TEST(ToyWorkload, TheBenchRunsItFromTheCommandLine) {
  test::TempDir dir("toy");
  const std::string csv = dir / "toy.csv";
  const test::CliResult r = test::run_megaview(
      dir, "bench --workload checkerboard --strategy sequential,cpu-parallel --size 64x32 --repeat 1 --csv '" + csv + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("checkerboard"), std::string::npos) << r.out;
  const std::string table = test::slurp(csv);
  EXPECT_NE(table.find("checkerboard,64,32,sequential"), std::string::npos) << table;
  EXPECT_NE(table.find("checkerboard,64,32,cpu-parallel"), std::string::npos) << table;
  const test::CliResult help = test::run_megaview(dir, "--help");
  EXPECT_NE(help.out.find("checkerboard"), std::string::npos) << "the viewer's --workload help lists the registry";
}

TEST(ToyWorkload, TheStrandsCommandRunsItAndRefusesAnotherWorkloadsKnob) {
  test::TempDir dir("toy");
  const std::string png = dir / "toy.png";
  const test::CliResult r = test::run_megaview(dir, "strands --workload checkerboard --size 64x64 --out '" + png + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  // 64 × 64 strands in 2 × 2 cells of 32: half in light cells of 256 steps, half in dark ones of 8
  // (render/strands/checkerboard.h).
  EXPECT_NE(r.out.find("workload checkerboard, 64x64 = 4096 strands"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mu 132.000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("min 8  max 256"), std::string::npos) << r.out;
  int w = 0, h = 0;
  EXPECT_EQ(read_png(png, w, h).size(), 64u * 64u);
  const test::CliResult bad =
      test::run_megaview(dir, "strands --workload checkerboard --step 1 --out '" + (dir / "b.png") + "'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--step: applies to vr-lite-cam, illust-vr, not to checkerboard"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mv
