// The Poisson-Ising Gibbs sampler on the GPU: the counter-RNG kernels (gibbs-deep with several tile and
// launch shapes, gibbs-groups, gibbs-persistent, gibbs-window, gibbs-strips, gibbs-ahead and gibbs-resident with several block
// shapes) give the CPU
// reference's bits; gibbs-blog (its
// own roundings) gives the same law; switching strategy keeps the chain; an image λ map (λ per site) gives
// the CPU's bits too. Skips without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

#include "app/session/gibbs_run.h"
#include "app/session/image_io.h"
#include "render/gpu.h"
#include "test_support.h"

namespace mv {
namespace {

#define MV_GIBBS_REQUIRE_GPU()                                                              \
  do {                                                                                      \
    if (!::mv::gpu_available()) GTEST_SKIP() << "no CUDA GPU: " << ::mv::gpu_info().reason; \
  } while (0)

ParamValues knobs(const char* w, const char* h) {
  return {{"width", w}, {"height", h}, {"thinning", "3"}, {"seed", "11"}, {"lambda", "2.5"}, {"decay-width", "0.3"}};
}

/// Sets the block shape through 1 × bh, so that no intermediate shape exceeds 1024 threads.
void set_block(GibbsRun& g, int bw, int bh) {
  Params& p = g.params();
  p.set(p.find("block-width"), 1);
  p.set(p.find("block-height"), bh);
  p.set(p.find("block-width"), bw);
}

std::vector<uint8_t> cpu_state(const ParamValues& k, uint64_t sweeps) {
  GibbsRun cpu(k, false);
  cpu.run_sweeps(sweeps);
  return cpu.state();
}

/// gibbs-groups, gibbs-persistent, gibbs-window, gibbs-strips, gibbs-ahead and gibbs-resident (13 sweeps, the persistent
/// ones in two runs)
/// give `want`
/// at block bw × bh.
void expect_groups_and_persistent_give(const ParamValues& k, const std::vector<uint8_t>& want, int bw, int bh,
                                       const std::string& what) {
  GibbsRun g(k, true);
  set_block(g, bw, bh);
  g.set_strategy("gibbs-groups");
  g.run_sweeps(13);
  EXPECT_EQ(g.state(), want) << "gibbs-groups " << what << " block " << bw << "x" << bh;
  for (const char* strategy :
       {"gibbs-persistent", "gibbs-window", "gibbs-strips", "gibbs-ahead", "gibbs-resident"}) {  // 13 sweeps in two launches
    GibbsRun q(k, true);
    set_block(q, bw, bh);
    q.set_strategy(strategy);
    q.run_sweeps(6);
    q.run_sweeps(7);
    EXPECT_EQ(q.state(), want) << strategy << " " << what << " block " << bw << "x" << bh;
  }
}

TEST(GibbsGpu, CounterRngKernelsGiveTheCpuBitsForEveryShape) {
  MV_GIBBS_REQUIRE_GPU();
  // λ 2.5 (x_max up to 11: the generic draw), 0.9 (6: the unrolled draw) and 0.05 (2: the unrolled draw
  // on short table rows), on a lattice of whole and of partial tiles.
  for (auto [w, h, lambda] : {std::tuple{"64", "40", "2.5"}, std::tuple{"136", "27", "0.9"}, std::tuple{"72", "33", "0.05"}}) {
    ParamValues k = knobs(w, h);
    k["lambda"] = lambda;
    const std::vector<uint8_t> want = cpu_state(k, 13);
    for (auto [bw, bh] : {std::pair{1, 1}, std::pair{32, 4}, std::pair{4, 16}, std::pair{3, 5}, std::pair{256, 1},
                          std::pair{32, 32}})
      expect_groups_and_persistent_give(k, want, bw, bh, std::string(w) + "x" + h + " λ " + lambda);
    for (auto [tw, th, n] : {std::tuple{8, 8, 1}, std::tuple{32, 16, 4}, std::tuple{128, 64, 4}, std::tuple{16, 3, 6}}) {
      GibbsRun g(k, true);
      g.params().set(g.params().find("tile-width"), tw);
      g.params().set(g.params().find("tile-height"), th);
      g.params().set(g.params().find("sweeps-per-launch"), n);
      g.set_strategy("gibbs-deep");
      g.run_sweeps(13);
      EXPECT_EQ(g.state(), want) << "gibbs-deep " << w << "x" << h << " λ " << lambda << " tile " << tw << "x" << th
                                 << " n " << n;
    }
  }
}

TEST(GibbsGpu, ImageMapGivesTheCpuBitsOnEveryCounterRngKernel) {
  MV_GIBBS_REQUIRE_GPU();
  // A grey ramp with a dark disc, 13 × 9 pixels, stretched over lattices of whole and partial tiles; λ 2.5
  // (the generic draw) and 0.9 (the unrolled draw).
  test::TempDir dir("gibbs-gpu-image");
  const std::string png = dir / "ramp.png";
  std::vector<uint32_t> rgba(13 * 9);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 13; ++x) {
      const int d2 = (x - 6) * (x - 6) + (y - 4) * (y - 4);
      const uint32_t g = d2 < 6 ? 10u : static_cast<uint32_t>(20 * x);
      rgba[y * 13 + x] = g | g << 8 | g << 16 | 0xFF000000u;
    }
  write_png(png, rgba.data(), 13, 9);
  for (auto [w, h, lambda] : {std::tuple{"64", "40", "2.5"}, std::tuple{"136", "27", "0.9"}}) {
    ParamValues k = knobs(w, h);
    k["lambda"] = lambda;
    k["lambda-map"] = "image";
    k["lambda-image"] = png;
    const std::vector<uint8_t> want = cpu_state(k, 13);
    for (auto [bw, bh] : {std::pair{32, 4}, std::pair{3, 5}})
      expect_groups_and_persistent_give(k, want, bw, bh, std::string("image map ") + w + "x" + h + " λ " + lambda);
    GibbsRun d(k, true);
    d.params().set(d.params().find("tile-width"), 32);
    d.params().set(d.params().find("tile-height"), 16);
    d.set_strategy("gibbs-deep");
    d.run_sweeps(13);
    EXPECT_EQ(d.state(), want) << "gibbs-deep " << w << "x" << h << " λ " << lambda;
    // The λ view on the GPU is the CPU's.
    GibbsRun c(k, false);
    std::vector<uint32_t> gpu_view, cpu_view;
    uint32_t vw = 0, vh = 0;
    d.image(2, gpu_view, vw, vh);
    c.image(2, cpu_view, vw, vh);
    EXPECT_EQ(gpu_view, cpu_view);
  }
}

TEST(GibbsGpu, SevenRoundPhiloxGivesTheCpuBitsOnEveryCounterRngKernel) {
  // --philox-rounds 7: another stream of uniforms, the same on the CPU and on every kernel.
  MV_GIBBS_REQUIRE_GPU();
  for (const char* lambda : {"2.5", "0.9"}) {
    ParamValues k = knobs("136", "27");
    k["lambda"] = lambda;
    k["philox-rounds"] = "7";
    const std::vector<uint8_t> want = cpu_state(k, 13);
    ParamValues k10 = k;
    k10["philox-rounds"] = "10";
    EXPECT_NE(cpu_state(k10, 13), want) << "7 rounds must give another chain";
    for (auto [bw, bh] : {std::pair{32, 4}, std::pair{3, 5}})
      expect_groups_and_persistent_give(k, want, bw, bh, std::string("7 rounds λ ") + lambda);
    GibbsRun d(k, true);
    d.set_strategy("gibbs-deep");
    d.run_sweeps(13);
    EXPECT_EQ(d.state(), want) << "gibbs-deep, 7 rounds, λ " << lambda;
  }
}

TEST(GibbsGpu, WindowKernelGivesThePersistentBitsAtTheBenchmarkConfiguration) {
  // The benchmark's lattice and model (2048², λ 0.9 Gaussian, γ 0.8): about 0.02 % of the draws fall back
  // to the full draw there, hundreds per half-sweep, so both of gibbs-window's (and gibbs-strips') paths
  // run. gibbs-strips at the bench's 32 × 32 and at two other shapes.
  MV_GIBBS_REQUIRE_GPU();
  GibbsRun p({}, true);
  p.set_strategy("gibbs-persistent");
  p.run_sweeps(30);
  const std::vector<uint8_t> want = p.state();
  GibbsRun v({}, true);
  v.set_strategy("gibbs-window");
  v.run_sweeps(30);
  EXPECT_EQ(v.state(), want);
  for (auto [bw, bh] : {std::pair{32, 32}, std::pair{64, 8}, std::pair{32, 24}}) {
    GibbsRun s({}, true);
    set_block(s, bw, bh);
    s.set_strategy("gibbs-strips");
    s.run_sweeps(30);
    EXPECT_EQ(s.state(), want) << "gibbs-strips block " << bw << "x" << bh;
  }
  // gibbs-ahead at the bench's 32 × 32, at two other shapes, and at 3 × 5, where a thread has two strips or more
  // (the later strips' words are computed in the half-sweep, not ahead).
  for (auto [bw, bh] : {std::pair{32, 32}, std::pair{64, 8}, std::pair{32, 24}, std::pair{3, 5}}) {
    GibbsRun s({}, true);
    set_block(s, bw, bh);
    s.set_strategy("gibbs-ahead");
    s.run_sweeps(30);
    EXPECT_EQ(s.state(), want) << "gibbs-ahead block " << bw << "x" << bh;
  }
  // gibbs-resident (a band of 16 rows per block: 128 bands, the edge rows exchanged 60 times) at the same shapes:
  // strips of 4 rows at 32 × 32 and 32 × 24, of 8 rows at 64 × 8 and 3 × 5 (blocks of at most 512 threads); at 3 × 5 a
  // thread has many strips of its band. 30 sweeps in launches of 1, 2, 3 and 24 sweeps:
  // each launch loads and stores the bands, and the first half-sweep of a launch reads its halo from the lattice.
  for (auto [bw, bh] : {std::pair{32, 32}, std::pair{64, 8}, std::pair{32, 24}, std::pair{3, 5}}) {
    GibbsRun s({}, true);
    set_block(s, bw, bh);
    s.set_strategy("gibbs-resident");
    for (uint64_t n : {1u, 2u, 3u, 24u}) s.run_sweeps(n);
    EXPECT_EQ(s.state(), want) << "gibbs-resident block " << bw << "x" << bh;
  }
}

TEST(GibbsGpu, ResidentKernelWhereTheBandDoesNotFitRunsTheAheadKernel) {
  // 8192 × 1024: 256 strip rows over the SMs, 2 strip rows (8 rows of 8 KiB) per band, held twice, and 64 KiB of
  // words: 206 KiB with the table, it fits. 8192 × 8192: 16 strip rows per band on 128 SMs, 512 KiB held twice: it does
  // not, and gibbs-ahead's kernel runs (the same bits as gibbs-persistent either way).
  MV_GIBBS_REQUIRE_GPU();
  for (auto [w, h, kernel] : {std::tuple{"8192", "1024", "gibbs-resident"}, std::tuple{"8192", "8192", "gibbs-ahead"}}) {
    ParamValues k = {{"width", w}, {"height", h}, {"seed", "5"}};
    GibbsRun p(k, true);
    p.set_strategy("gibbs-persistent");
    p.run_sweeps(3);
    EXPECT_EQ(p.report()["kernel"], "gibbs-persistent");
    GibbsRun r(k, true);
    r.set_strategy("gibbs-resident");
    r.run_sweeps(3);
    EXPECT_EQ(r.state(), p.state()) << w << "x" << h;
    EXPECT_EQ(r.report()["strategy"], "gibbs-resident");
    EXPECT_EQ(r.report()["kernel"], kernel) << w << "x" << h << ": the kernel that ran, in the report";
  }
}

TEST(GibbsGpu, StripKernelWithATableOver48KiBRunsTheWindowKernel) {
  // λ 4 (x_max up to 14: a window table of 68 KiB): gibbs-strips runs gibbs-window's kernel, the same bits.
  MV_GIBBS_REQUIRE_GPU();
  ParamValues k = knobs("64", "40");
  k["lambda"] = "4";
  const std::vector<uint8_t> want = cpu_state(k, 13);
  expect_groups_and_persistent_give(k, want, 32, 4, "λ 4");
}

TEST(GibbsGpu, SwitchingStrategyKeepsTheChain) {
  MV_GIBBS_REQUIRE_GPU();
  const ParamValues k = knobs("64", "32");
  const std::vector<uint8_t> want = cpu_state(k, 17);
  GibbsRun g(k, true);
  g.set_strategy("gibbs-deep");
  g.run_sweeps(5);
  g.set_strategy("gibbs-cpu");
  g.run_sweeps(3);
  g.set_strategy("gibbs-groups");
  g.run_sweeps(2);
  g.set_strategy("gibbs-persistent");
  g.run_sweeps(2);
  g.set_strategy("gibbs-window");
  g.run_sweeps(1);
  g.set_strategy("gibbs-strips");
  g.run_sweeps(1);
  g.set_strategy("gibbs-ahead");
  g.run_sweeps(1);
  g.set_strategy("gibbs-resident");
  g.run_sweeps(1);
  g.set_strategy("gibbs-ahead");
  g.run_sweeps(1);
  EXPECT_EQ(g.steps(), 17u);
  EXPECT_EQ(g.state(), want);
}

TEST(GibbsGpu, BlogKernelSamplesTheSameLaw) {
  MV_GIBBS_REQUIRE_GPU();
  // Uniform λ 0.9, γ 0.8 on 256 × 256: the mean of x and the share of each value over 2,000 sweeps
  // (thinning 1) agree between gibbs-blog and gibbs-deep within a few standard errors of their noise.
  ParamValues k = {{"width", "256"}, {"height", "256"}, {"lambda-map", "uniform"}, {"thinning", "1"}};
  auto law = [&](const char* strategy, int bw, int bh, bool padding, const char* seed) {
    ParamValues kk = k;
    kk["seed"] = seed;
    GibbsRun g(kk, true);
    g.set_strategy(strategy);
    set_block(g, bw, bh);
    g.params().set(g.params().find("padding"), padding ? 1 : 0);
    g.run_sweeps(200);  // burn-in
    std::vector<double> share(8, 0.0);
    for (int i = 0; i < 50; ++i) {
      g.run_sweeps(20);
      for (uint8_t v : g.state()) share[v < 7 ? v : 7] += 1.0;
    }
    for (double& s : share) s /= 50.0 * 256 * 256;
    return share;
  };
  const std::vector<double> ref = law("gibbs-deep", 32, 4, false, "3");
  for (auto [bw, bh, pad] : {std::tuple{32, 4, false}, std::tuple{8, 8, true}, std::tuple{4, 16, true}, std::tuple{1, 64, false}}) {
    const std::vector<double> got = law("gibbs-blog", bw, bh, pad, "5");
    for (int x = 0; x < 4; ++x)
      EXPECT_NEAR(got[x], ref[x], 0.01 + 0.05 * ref[x]) << "block " << bw << "x" << bh << " x = " << x;
  }
}

TEST(GibbsGpu, LiveRunAt2048SquaredKeepsUpWithTheViewer) {
  MV_GIBBS_REQUIRE_GPU();
  // The viewer's frame: advance for a 16 ms budget, then the sample view as RGBA. At the benchmark's
  // configuration (2048², the default knobs) a frame must take well under 33 ms (30 fps).
  GibbsRun g({}, true);
  EXPECT_EQ(g.strategy(), "gibbs-resident");
  std::vector<uint32_t> rgba;
  uint32_t w = 0, h = 0;
  g.advance(16.0);  // warm-up: the first advance measures the rate
  g.image(0, rgba, w, h);
  const int frames = 20;
  const auto t0 = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f) {
    g.advance(16.0);
    g.image(static_cast<size_t>(f % 3), rgba, w, h);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / frames;
  std::printf("gibbs live 2048x2048: %.2f ms per frame (%.1f fps), %.0f sweeps/s\n", ms, 1000.0 / ms,
              g.report()["sweeps_per_s"].get<double>());
  EXPECT_EQ(w, 2048u);
  EXPECT_EQ(h, 2048u);
  EXPECT_LT(ms, 33.0);
  const nlohmann::json r = g.report();
  EXPECT_GT(r["site_updates_per_ns"].get<double>(), 1.0);
  EXPECT_EQ(r["strategy"], "gibbs-resident");
}

}  // namespace
}  // namespace mv
