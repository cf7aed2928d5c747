// The Poisson-Ising Gibbs sampler on the CPU: Philox, the CPMF (the source document's worked example), the
// table-driven draw against the exact CPMF, the border's zero loss, the chain's stationary law on a 3 × 3
// lattice against exact enumeration (χ²), bad inputs, the LatticeRun contract of the gibbs workload, and the
// λ maps from an image file or a volume slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "app/session/gibbs_lambda.h"
#include "app/session/gibbs_run.h"
#include "app/session/image_io.h"
#include "app/session/params_report.h"
#include "app/session/lattice_run.h"
#include "base/errors.h"
#include "base/philox.h"
#include "render/lattice/poisson_ising.h"
#include "render/tonemap.h"
#include "sched/lattice/checkerboard_sweep.h"
#include "test_support.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

TEST(Gibbs, PhiloxMatchesTheKnownAnswers) {
  // Known-answer vectors of Random123 (Salmon et al. 2011) for Philox4x32-10.
  Philox4x32 a = philox4x32_10(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(a.v[0], 0x6627e8d5u);
  EXPECT_EQ(a.v[1], 0xe169c58du);
  EXPECT_EQ(a.v[2], 0xbc57ac4cu);
  EXPECT_EQ(a.v[3], 0x9b00dbd8u);
  Philox4x32 b = philox4x32_10(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  EXPECT_EQ(b.v[0], 0x408f276du);
  EXPECT_EQ(b.v[1], 0x41c83b0eu);
  EXPECT_EQ(b.v[2], 0xa20bc7c6u);
  EXPECT_EQ(b.v[3], 0x6d5451fdu);
  Philox4x32 c = philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(c.v[0], 0xd16cfe09u);
  EXPECT_EQ(c.v[1], 0x94fdccebu);
  EXPECT_EQ(c.v[2], 0x5001e420u);
  EXPECT_EQ(c.v[3], 0x24126ea1u);
}

TEST(Gibbs, PhiloxRoundsSevenAndTenAreTheRoundFunctionRepeated) {
  // philox4x32(…, 10) is Philox4x32-10 (the known answers above); philox4x32(…, 7) is the same round
  // function with the same key schedule stopped after 7 rounds.
  for (uint32_t i = 0; i < 1000; ++i) {
    const uint32_t c0 = i * 2654435761u, c1 = i ^ 0x5bd1e995u, c2 = i * 7u, c3 = ~i, k0 = i * 40503u, k1 = 0x50495347u;
    const Philox4x32 ten = philox4x32(c0, c1, c2, c3, k0, k1, 10), want10 = philox4x32_10(c0, c1, c2, c3, k0, k1);
    uint32_t d0 = c0, d1 = c1, d2 = c2, d3 = c3;
    for (uint32_t r = 0; r < 7; ++r) philox4x32_round(d0, d1, d2, d3, k0 + r * 0x9E3779B9u, k1 + r * 0xBB67AE85u);
    const Philox4x32 seven = philox4x32(c0, c1, c2, c3, k0, k1, 7);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(ten.v[j], want10.v[j]) << i;
    EXPECT_EQ(seven.v[0], d0);
    EXPECT_EQ(seven.v[1], d1);
    EXPECT_EQ(seven.v[2], d2);
    EXPECT_EQ(seven.v[3], d3);
    EXPECT_NE(seven.v[0], ten.v[0]);
  }
}

TEST(Gibbs, PhiloxBlocksRoundByRoundAreTheBlocksOneByOne) {
  // philox4x32_round_keys_n (N counters round by round, as the strip kernels compute a strip's words) gives each
  // counter's philox4x32_round_keys block, at 7 and 10 rounds.
  const LatticeKeys keys = lattice_keys(12345u);
  for (int rounds : {7, 10})
    for (uint32_t i = 0; i < 200; ++i) {
      uint32_t c[3][4];
      for (uint32_t n = 0; n < 3; ++n) {
        c[n][0] = i * 2654435761u + n;
        c[n][1] = i;
        c[n][2] = n & 1u;
        c[n][3] = 0u;
      }
      uint32_t in[3][4];
      std::memcpy(in, c, sizeof in);
      philox4x32_round_keys_n(c, keys.k0, kLatticeKeyHi, rounds);
      for (int n = 0; n < 3; ++n) {
        const Philox4x32 one = philox4x32_round_keys(in[n][0], in[n][1], in[n][2], in[n][3], keys.k0, kLatticeKeyHi, rounds);
        const Philox4x32 ref = philox4x32(in[n][0], in[n][1], in[n][2], in[n][3], 12345u, kLatticeKeyHi, rounds);
        for (int j = 0; j < 4; ++j) {
          EXPECT_EQ(c[n][j], one.v[j]) << i << " " << n;
          EXPECT_EQ(c[n][j], ref.v[j]) << i << " " << n;
        }
      }
    }
}

TEST(Gibbs, CpmfMatchesTheDocumentsWorkedExample) {
  // Neighbours {0, 2, 3, 4}, λ 0.9, γ 0.8: P(1) = 1.7 %, P(2) = 92.6 %, P(3) = 5.6 % in the document
  // (exactly 1.695 %, 92.690 %, 5.614 %: within 0.1 percentage point of its rounding).
  const std::vector<double> p = poisson_ising_cpmf({0, 2, 3, 4}, 0.9, 0.8);
  ASSERT_EQ(p.size(), 7u);  // x_max(0.9) = ⌈0.9 + 5 √0.9⌉ = 6
  EXPECT_NEAR(100 * p[1], 1.7, 0.1);
  EXPECT_NEAR(100 * p[2], 92.6, 0.1);
  EXPECT_NEAR(100 * p[3], 5.6, 0.1);
  EXPECT_LT(p[0] + p[4] + p[5] + p[6], 1e-3);
}

/// The probability of each outcome of the table draw, by sweeping u over a fine grid.
std::vector<double> draw_law(const PoissonIsingTables& t, int k, int S, float lambda, int xm) {
  std::vector<double> f(xm + 1, 0.0);
  const int n = 1 << 16;
  for (int i = 0; i < n; ++i) {
    const int x = poisson_ising_draw<kPoissonIsingMaxTerms>(t.row(xm, k, S), lambda, xm, (i + 0.5f) / n);
    EXPECT_GE(x, 0);
    EXPECT_LE(x, xm);
    f[x] += 1.0 / n;
  }
  return f;
}

TEST(Gibbs, TableDrawFollowsTheExactCpmf) {
  for (double gamma : {0.0, 0.8, 3.0})
    for (double lambda : {0.05, 0.9, 4.0}) {
      const int xm = poisson_ising_xmax(static_cast<float>(lambda));
      // The tables span the largest neighbour value (on a lattice: the largest x_max).
      const PoissonIsingTables t = make_poisson_ising_tables(gamma, std::max(xm, 4));
      for (const std::vector<int>& nb : std::vector<std::vector<int>>{{0, 2, 3, 4}, {1, 1, 0, 0}, {xm, xm, xm, xm}, {0, 0, 0, 0}}) {
        int S = 0;
        for (int v : nb) S += v;
        const std::vector<double> exact = poisson_ising_cpmf(nb, lambda, gamma);
        const std::vector<double> got = draw_law(t, 4, S, static_cast<float>(lambda), xm);
        for (int x = 0; x <= xm; ++x)
          EXPECT_NEAR(got[x], exact[x], 1e-4) << "γ " << gamma << " λ " << lambda << " S " << S << " x " << x;
      }
    }
}

TEST(Gibbs, UnrolledDrawGivesTheGenericDrawsBits) {
  // The kernels' branch-free 8-term (x_max ≤ 7) and 7-term (x_max ≤ 6) draws and the generic one agree
  // bit for bit, also at the edges of u and where every weight underflows.
  for (auto [gamma, X] : {std::pair{0.0, 7}, std::pair{0.8, 7}, std::pair{5.0, 7}, std::pair{0.8, 2}, std::pair{0.8, 3}}) {
    const PoissonIsingTables t = make_poisson_ising_tables(gamma, X);
    uint32_t h = 12345;
    for (int i = 0; i < 20000; ++i) {
      const Philox4x32 r = philox4x32_10(i, 0, 0, 0, 99, 0);
      const int xm = 1 + static_cast<int>(r.v[0] % X), k = static_cast<int>(r.v[1] % 5);
      const int S = static_cast<int>(r.v[2] % (4 * X + 1));
      const float lambda = 1e-6f + 1.9f * uniform_from_bits(r.v[3]);
      const float u = i % 97 == 0 ? 0.f : i % 89 == 0 ? 0.99999994f : uniform_from_bits(h = r.v[3] ^ (h * 2654435761u));
      const int want = poisson_ising_draw<kPoissonIsingMaxTerms>(t.row(xm, k, S), lambda, xm, u);
      EXPECT_EQ(poisson_ising_draw<kPoissonIsingFastTerms>(t.row(xm, k, S), lambda, xm, u), want)
          << "γ " << gamma << " xm " << xm << " k " << k << " S " << S << " λ " << lambda << " u " << u;
      if (xm <= 6) EXPECT_EQ(poisson_ising_draw<7>(t.row(xm, k, S), lambda, xm, u), want) << "7 terms, xm " << xm;
    }
  }
}

/// A window-draw case of table t from the Philox block r: x_max in 1 … X, k in 2 … 4 real neighbours summing to
/// S ≤ k · x_max, λ with λ + 5√λ uniform in (x_max − 1, x_max] (where the table's bounds hold), the site's table
/// row, and the full draw's cumulative sums c(0 … x_max) and Z at that λ, rounded as poisson_ising_draw rounds
/// them. False where λ's rounding leaves x_max's range (the case is skipped).
struct WindowCase {
  int xm = 0, k = 0, S = 0;
  float lambda = 0.f, z = 0.f;
  const float* row = nullptr;
  float c[64] = {};
};
bool window_case(const PoissonIsingTables& t, const Philox4x32& r, WindowCase& wc) {
  const int X = t.X;
  wc.xm = 1 + static_cast<int>(r.v[0] % X);
  wc.k = 2 + static_cast<int>(r.v[1] % 3);
  wc.S = static_cast<int>(r.v[2] % (wc.k * wc.xm + 1));
  const double v = wc.xm - uniform_from_bits(r.v[3]), root = 0.5 * (-5.0 + std::sqrt(25.0 + 4.0 * v));
  wc.lambda = static_cast<float>(root * root);
  if (wc.lambda <= 0.f || std::max(1, poisson_ising_xmax(wc.lambda)) != wc.xm) return false;
  wc.row = t.row(wc.xm, wc.k, wc.S);
  float p = 1.f;
  wc.z = 0.f;
  for (int x = 0; x <= wc.xm; ++x) {
    wc.z = fma_rn(p, wc.row[x], wc.z);
    wc.c[x] = wc.z;
    p = mul_rn(p, wc.lambda);
  }
  return true;
}

TEST(Gibbs, WindowDrawGivesTheFullDrawsAnswerOrNone) {
  // gibbs-window's two-weight draw returns the full draw's answer or −1, never another value: random rows,
  // λ anywhere in the row's x_max range (the table's bounds hold there), and u at and a few floats around
  // every boundary c(x)/Z of the full draw, where the window's bounds are tightest. At the benchmark's γ it
  // decides most sites.
  for (auto [gamma, X] : {std::pair{0.8, 6}, std::pair{0.8, 11}, std::pair{0.0, 7}, std::pair{5.0, 6}, std::pair{0.1, 20}}) {
    const PoissonIsingTables t = make_poisson_ising_tables(gamma, X);
    ASSERT_EQ(t.windows.size(), (static_cast<size_t>(X) + 1) * 5 * (4 * X + 1) * 4);
    int decided = 0, tried = 0;
    for (int i = 0; i < 4000; ++i) {
      const Philox4x32 r = philox4x32_10(i, 1, 0, 0, 77, 0);
      WindowCase wc;
      if (!window_case(t, r, wc)) continue;
      const int xm = wc.xm, k = wc.k, S = wc.S;
      const float lambda = wc.lambda, z = wc.z, *row = wc.row, *c = wc.c;
      std::vector<float> us = {0.f, 0.99999994f, uniform_from_bits(r.v[3] * 2654435761u)};
      for (int x = 0; x < xm && z > 0.f; ++x) {
        float b = c[x] / z;
        for (int s = 0; s < 3; ++s) b = std::nextafter(b, 0.f);
        for (int s = 0; s < 7; ++s, b = std::nextafter(b, 1.f))
          if (b >= 0.f && b < 1.f) us.push_back(b);
      }
      for (size_t n = 0; n < us.size(); ++n) {
        const float u = us[n];
        const int want = poisson_ising_draw<kPoissonIsingMaxTerms>(row, lambda, xm, u);
        const int got = poisson_ising_draw_window(t.window(xm, k, S), lambda, poisson_ising_window_uniform(u));
        if (n == 2) {  // the random u
          ++tried;
          if (got >= 0) ++decided;
        }
        EXPECT_TRUE(got == -1 || got == want) << "γ " << gamma << " xm " << xm << " k " << k << " S " << S << " λ "
                                              << lambda << " u " << u << ": window " << got << ", full " << want;
      }
    }
    // Rows and neighbour sums drawn uniformly, not as the chain visits them (there it decides 99.99 %).
    if (gamma == 0.8 && X == 6) EXPECT_GT(decided, tried * 9 / 10) << "the window decides too few draws at γ 0.8";
  }
}

TEST(Gibbs, WindowDrawAtTheCoarseUniformHoldsForEveryFineOne) {
  // The kernels' window draw decides from a site's coarse uniform u₁₆ = k · 2⁻¹⁶ and stands for the full draw at
  // every full uniform u₁₆ + b · 2⁻²⁴, b < 2⁸ (kPoissonIsingCoarseStep). The full draw is nondecreasing in u, so
  // a window answer is checked against the full draws at both ends of that interval: k random, and every k whose
  // interval holds or touches one of the full draw's boundaries c(x)/Z, where the window is tightest.
  for (auto [gamma, X] : {std::pair{0.8, 6}, std::pair{0.8, 11}, std::pair{0.1, 20}, std::pair{5.0, 6}}) {
    const PoissonIsingTables t = make_poisson_ising_tables(gamma, X);
    long tried = 0, decided = 0;
    for (int i = 0; i < 3000; ++i) {
      const Philox4x32 r = philox4x32_10(i, 2, 0, 0, 78, 0);
      WindowCase wc;
      if (!window_case(t, r, wc)) continue;
      const int xm = wc.xm, k = wc.k, S = wc.S;
      const float lambda = wc.lambda, z = wc.z, *row = wc.row, *c = wc.c;
      std::vector<uint32_t> ks = {0u, 65535u, r.v[3] >> 16};
      for (int x = 0; x < xm && z > 0.f; ++x) {
        const double b = static_cast<double>(c[x]) / z * 65536.0;
        for (int d = -2; d <= 2; ++d) {
          const long kk = static_cast<long>(std::floor(b)) + d;
          if (kk >= 0 && kk < 65536) ks.push_back(static_cast<uint32_t>(kk));
        }
      }
      for (size_t n = 0; n < ks.size(); ++n) {
        const float coarse = static_cast<float>(ks[n]) * (1.f / 65536.f);
        ASSERT_EQ(poisson_ising_window_uniform(coarse), kPoissonIsingWindowBias + coarse);
        const int got = poisson_ising_draw_window(t.window(xm, k, S), lambda, kPoissonIsingWindowBias + coarse);
        if (n == 2) {
          ++tried;
          decided += got >= 0;
        }
        if (got < 0) continue;
        for (uint32_t b : {0u, 255u}) {
          const float u = lattice_fine_uniform(coarse, b, 0);
          ASSERT_EQ(u, static_cast<float>(ks[n] * 256u + b) / 16777216.f);
          ASSERT_EQ(got, poisson_ising_draw<kPoissonIsingMaxTerms>(row, lambda, xm, u))
              << "γ " << gamma << " xm " << xm << " k " << k << " S " << S << " λ " << lambda << " k " << ks[n]
              << " b " << b;
        }
      }
    }
    if (gamma == 0.8 && X == 6) EXPECT_GT(decided, tried * 9 / 10) << "the window decides too few draws at γ 0.8";
  }
}

TEST(Gibbs, WindowBoundsOfTheChainsCommonestSitesAreAsTightAsTheirGridsAllow) {
  // At the benchmark's γ 0.8 the chain's sites are mostly 0 (mean x about 0.04), so most draws are of a site with
  // four neighbours summing to 0. There the window is x₀ = 0 with no tail below it and a tail above it far below
  // one coarse step, so the bounds are as tight as their grids allow: A one coarse step (the slack rounded up to
  // 2⁻¹⁶) and B one and a half (the step itself, and the tail and the slack rounded up to 2⁻¹⁷). A wider slack,
  // 2⁻¹⁵, made them 2 and 4 steps and the window undecided at about 1.7 times as many of these sites; B on the
  // coarse grid, 2 steps, at about 1.2 times as many of all sites (docs/perf.md).
  const PoissonIsingTables t = make_poisson_ising_tables(0.8, 6);
  ASSERT_LT(poisson_ising_window_slack(6), kPoissonIsingCoarseStep / 2);
  ASSERT_GE(poisson_ising_window_slack(6), (4 * 6 + 9) / 16777216.0) << "the rounding bound the slack covers";
  for (int xm = 1; xm <= 6; ++xm) {
    const float* w = t.window(xm, 4, 0);
    uint32_t x0;
    std::memcpy(&x0, &w[0], sizeof x0);
    EXPECT_EQ(x0, 0u) << "xm " << xm;
    EXPECT_EQ(w[2] - kPoissonIsingWindowBias, static_cast<float>(kPoissonIsingCoarseStep)) << "A at xm " << xm;
    EXPECT_EQ(w[3] + kPoissonIsingWindowBias, static_cast<float>(1.5 * kPoissonIsingCoarseStep)) << "B at xm " << xm;
  }
}

TEST(Gibbs, SitesDrawTheirUniformsFromTheDocumentedPhiloxWords) {
  // checkerboard_sweep.h's numbering, written out: rows 2i, 2i + 1 and columns 8g … 8g + 7 share a coarse and a
  // fine block per colour; the j-th colour-c site of row 2i + h takes half h of the coarse word j (h = 0: the high
  // 16 bits) and byte h of the fine word j. So the eight same-coloured sites of a group pair use disjoint bits.
  const uint32_t seed = 4242, W = 40;  // 5 groups per row
  for (int rounds : {7, 10})
    for (uint32_t sweep : {0u, 7u, kLatticeInitialSweep})
      for (uint32_t row = 0; row < 6; ++row)
        for (uint32_t col = 0; col < W; ++col) {
          const uint32_t colour = (row + col) & 1u, h = row & 1u, j = (col % 8u) / 2u;
          const uint32_t g = (row / 2u) * 5u + col / 8u;
          const Philox4x32 coarse = philox4x32(g, sweep, colour, 0u, seed, kLatticeKeyHi, rounds);
          const Philox4x32 fine = philox4x32(g, sweep, colour, 1u, seed, kLatticeKeyHi, rounds);
          const uint32_t k = h ? coarse.v[j] & 0xFFFFu : coarse.v[j] >> 16, b = (fine.v[j] >> (8 * h)) & 0xFFu;
          ASSERT_EQ(lattice_coarse_uniform_at(seed, W, row, col, sweep, rounds), static_cast<float>(k) / 65536.f);
          ASSERT_EQ(lattice_uniform(seed, W, row, col, sweep, rounds), static_cast<float>(k * 256u + b) / 16777216.f);
        }
  // Over many sites the full uniforms are uniform on the 2²⁴ grid: mean ½, and each of 16 bins near 1/16.
  std::vector<long> bins(16, 0);
  double sum = 0.0;
  const int n = 256 * 256;
  for (uint32_t row = 0; row < 256; ++row)
    for (uint32_t col = 0; col < 256; ++col) {
      const float u = lattice_uniform(seed, 256, row, col, 3, 10);
      sum += u;
      ++bins[static_cast<size_t>(u * 16.f)];
    }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  for (long b : bins) EXPECT_NEAR(static_cast<double>(b) / n, 1.0 / 16, 0.004);
}

TEST(Gibbs, ByteWiseNeighbourSumsAndMergeMatchTheSiteBySiteOnes) {
  // The kernels' 8-column group arithmetic (lattice_sums8, lattice_merge4, lattice_merge4_byte0) against
  // lattice_neighbours and byte stores on random rows with states up to 63 (4 · 63 < 256), at both parities.
  for (uint32_t i = 0; i < 2000; ++i) {
    const Philox4x32 a = philox4x32_10(i, 3, 0, 0, 5, 0), b = philox4x32_10(i, 4, 0, 0, 5, 0);
    const uint32_t m0 = a.v[0] & 0x3F3F3F3Fu, m1 = a.v[1] & 0x3F3F3F3Fu, u0 = a.v[2] & 0x3F3F3F3Fu,
                   u1 = a.v[3] & 0x3F3F3F3Fu, d0 = b.v[0] & 0x3F3F3F3Fu, d1 = b.v[1] & 0x3F3F3F3Fu;
    const uint32_t left = b.v[2] & 0x3Fu, right = (b.v[2] >> 8) & 0x3Fu;
    // A 3 × 10 lattice: columns 0 and 9 hold left and right, rows 0 and 2 the rows above and below.
    std::vector<uint8_t> x(30, 0);
    const uint32_t w[6] = {u0, u1, m0, m1, d0, d1};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 8; ++c) x[r * 10 + 1 + c] = static_cast<uint8_t>(w[2 * r + c / 4] >> (8 * (c % 4)));
    x[10] = static_cast<uint8_t>(left);
    x[19] = static_cast<uint8_t>(right);
    uint32_t s0, s1;
    lattice_sums8(m0, m1, u0, u1, d0, d1, left, right, s0, s1);
    for (int c = 0; c < 8; ++c) {
      int k, S;
      lattice_neighbours(x.data(), 10, 3, 1, 1 + c, k, S);
      EXPECT_EQ(static_cast<int>(((c < 4 ? s0 : s1) >> (8 * (c % 4))) & 0xFFu), S) << i << " column " << c;
    }
    for (int p = 0; p < 2; ++p) {
      const int v[4] = {static_cast<int>(b.v[3] & 0xFF), static_cast<int>((b.v[3] >> 8) & 0xFF),
                        static_cast<int>((b.v[3] >> 16) & 0xFF), static_cast<int>(b.v[3] >> 24)};
      uint32_t o0 = m0, o1 = m1;
      lattice_merge4(o0, o1, p, v);
      for (int c = 0; c < 8; ++c) {
        const int got = static_cast<int>(((c < 4 ? o0 : o1) >> (8 * (c % 4))) & 0xFFu);
        const int want = c % 2 == p ? v[c / 2] : x[11 + c];
        EXPECT_EQ(got, want) << i << " p " << p << " column " << c;
      }
      // lattice_merge4_byte0: the values in the low byte, anything above it.
      int g[4];
      for (int j = 0; j < 4; ++j) g[j] = static_cast<int>(static_cast<uint32_t>(v[j]) | (a.v[j] << 8));
      uint32_t q0 = m0, q1 = m1;
      lattice_merge4_byte0(q0, q1, p, g);
      for (int c = 0; c < 8; ++c) {
        const int got = static_cast<int>(((c < 4 ? q0 : q1) >> (8 * (c % 4))) & 0xFFu);
        const int want = c % 2 == p ? v[c / 2] : x[11 + c];
        EXPECT_EQ(got, want) << i << " p " << p << " column " << c << " (byte 0)";
      }
    }
  }
}

TEST(Gibbs, StripKernelsSiteIdsAndTableOffsetsAddressTheSitesRows) {
  // gibbs-strips' per-site layout: the row ids x_max · 5 + k split by parity, the split λ columns, and the
  // packed 16-bit table offsets against the rows PoissonIsingTables::window(xm, k, S) addresses.
  const int W = 24, H = 5;
  std::vector<uint8_t> xmax(W * H);
  for (int i = 0; i < W * H; ++i) xmax[i] = static_cast<uint8_t>(1 + (i * 7) % 11);
  const std::vector<uint8_t> ids = poisson_ising_site_ids(xmax, W, H);
  std::vector<float> col(W);
  for (int c = 0; c < W; ++c) col[c] = 0.5f + c;
  const std::vector<float> split = poisson_ising_split_columns(col);
  for (int r = 0; r < H; ++r)
    for (int c = 0; c < W; ++c) {
      const int k = 4 - (r == 0) - (r == H - 1) - (c == 0) - (c == W - 1);
      const size_t at = (static_cast<size_t>(r) * (W / 8) + c / 8) * 8 + 4 * (c & 1) + (c % 8) / 2;
      EXPECT_EQ(ids[at], xmax[r * W + c] * 5 + k) << r << ", " << c;
      if (r == 0) EXPECT_EQ(split[at], col[c]) << c;
    }
  // The largest table that fits the strip kernel's shared memory, and every id and S of it.
  const PoissonIsingTables t = make_poisson_ising_tables(0.8, 11);
  ASSERT_LE(poisson_ising_window_bytes(11), kPoissonIsingStripTableBytes);
  ASSERT_GT(poisson_ising_window_bytes(12), kPoissonIsingStripTableBytes);
  ASSERT_EQ(t.windows.size() * sizeof(float), poisson_ising_window_bytes(11));
  for (uint32_t i = 0; i < 4000; ++i) {
    const Philox4x32 a = philox4x32_10(i, 9, 0, 0, 5, 0);
    uint32_t idw = 0;
    int id[4], S[8];
    for (int j = 0; j < 4; ++j) {
      const int xm = 1 + static_cast<int>((a.v[j] & 0xFFFFu) % 11), k = 2 + static_cast<int>((a.v[j] >> 16) % 3);
      id[j] = xm * 5 + k;
      idw |= static_cast<uint32_t>(id[j]) << (8 * j);
    }
    uint32_t s0 = 0, s1 = 0;
    for (int b = 0; b < 8; ++b) {
      S[b] = static_cast<int>((a.v[b % 4] >> (8 + b)) % 45);  // 0 … 4X
      (b < 4 ? s0 : s1) |= static_cast<uint32_t>(S[b]) << (8 * (b % 4));
    }
    for (int p = 0; p < 2; ++p) {
      uint32_t off[4];
      if (p == 0) poisson_ising_strip_offsets<0>(idw, s0, s1, 11, off);
      else poisson_ising_strip_offsets<1>(idw, s0, s1, 11, off);
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(reinterpret_cast<const char*>(t.windows.data()) + off[j],
                  reinterpret_cast<const char*>(t.window(id[j] / 5, id[j] % 5, S[p + 2 * j])))
            << i << " p " << p << " j " << j;
    }
  }
}

TEST(Gibbs, WindowDecideSignBitsGiveTheComparisonsAnswer) {
  // poisson_ising_window_decide_signs (the comparisons as sign bits of differences) against the comparisons
  // themselves, written out here: every window row of two tables (rows that never decide included), λ over the
  // row's x_max range and its ends, and u₁₆ at 0, near 1, random, and a few steps of 2⁻¹⁶ around each of the row's
  // four thresholds (where the differences are smallest, zero included).
  auto by_compares = [](float x0, float r1, float ra, float rb, float lambda, float f) {
    uint32_t lo;
    std::memcpy(&lo, &x0, sizeof lo);
    const float w = fma_rn(lambda, r1, 1.f), t = add_rn(ra, -f), v = add_rn(f, rb);
    const bool up = fma_rn(t, w, 1.f) < 0.f, ok = (up || (fma_rn(v, w, -1.f) < 0.f && t < 0.f)) && v < 1.f;
    return ok ? static_cast<int>(lo) + (up ? 1 : 0) : -1;
  };
  long checked = 0, decided = 0;
  for (auto [gamma, X] : {std::pair{0.8, 6}, std::pair{0.1, 11}}) {
    const PoissonIsingTables t = make_poisson_ising_tables(gamma, X);
    for (size_t row = 0; row < t.windows.size() / 4; ++row) {
      const float* v = t.windows.data() + 4 * row;
      const int xm = static_cast<int>(row / (5 * (4 * static_cast<size_t>(X) + 1)));
      const float lmax = static_cast<float>(std::max(xm, 1)), lams[3] = {lmax * 0.05f, lmax * 0.31f, 16.f};
      for (float lambda : lams) {
        const Philox4x32 r = philox4x32_10(static_cast<uint32_t>(row), 7, 0, 0, 5, 0);
        // Relative to g'(x₀): W = 1 + λr, A = (128 + A) − 128, B = (B − 128) + 128.
        const double w = fma_rn(lambda, v[1], 1.f), a = double(v[2]) - 128.0, b = double(v[3]) + 128.0;
        std::vector<float> us;  // as f = 128 + u₁₆
        for (float u : {0.f, 0.99999994f, uniform_from_bits(r.v[0]), uniform_from_bits(r.v[1])})
          us.push_back(poisson_ising_window_uniform(u));
        // u where uW − 1 meets ±AW and ±BW, and where u meets A and 1 − B
        for (double target : {a + 1.0 / w, 1.0 / w - b, a, 1.0 - b}) {
          if (!std::isfinite(target) || target < 0.0 || target >= 1.0) continue;
          float f = poisson_ising_window_uniform(static_cast<float>(target));
          for (int s = 0; s < 3; ++s) f = std::nextafter(f, 0.f);
          for (int s = 0; s < 7; ++s, f = std::nextafter(f, 256.f))
            if (f >= 128.f && f < 129.f) us.push_back(f);
        }
        for (float u : us) {
          const int want = by_compares(v[0], v[1], v[2], v[3], lambda, u);
          uint32_t ok;
          const int got = poisson_ising_window_decide_signs(v[0], v[1], v[2], v[3], lambda, u, ok);
          ASSERT_EQ(ok >> 31 ? got : -1, want) << "row " << row << " λ " << lambda << " u " << u;
          ASSERT_EQ(poisson_ising_window_decide(v[0], v[1], v[2], v[3], lambda, u), want);
          // The strip kernels merge the parts' word by its low byte (lattice_merge4_byte0): it is the answer.
          uint32_t c, tw;
          const uint32_t word = poisson_ising_window_decide_parts(v[0], v[1], v[2], v[3], lambda, u, c, tw);
          if (want >= 0) ASSERT_EQ(static_cast<int>(word & 0xFFu), want) << "row " << row << " u " << u;
          ++checked;
          decided += want >= 0;
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
  EXPECT_GT(decided, checked / 10);
}

TEST(Gibbs, WindowDrawDecidesAlmostEverySiteOfTheBenchmarksChain) {
  // The benchmark's model (λ 0.9 Gaussian, σ = 0.25 · min(W, H), γ 0.8) on 256², after 200 sweeps of the
  // CPU reference: the share of sites whose window draw (from the site's coarse uniform, as the kernels draw
  // it) does not decide, over both colours, and the share
  // of 32-group warps (128 sites of one colour in one row, as gibbs-window's threads take them) in which
  // at least one site falls back to the full draw.
  GibbsRun run({{"width", "256"}, {"height", "256"}, {"thinning", "1000"}}, false);
  run.run_sweeps(200);
  const std::vector<uint8_t> x = run.state();
  const int W = 256, H = 256;
  const LambdaField f = make_lambda_map(LambdaMap::Gaussian, 0.9, 0.25, W, H);
  const PoissonIsingTables t = make_poisson_ising_tables(0.8, *std::max_element(f.xmax.begin(), f.xmax.end()));
  long sites = 0, undecided = 0, warps = 0, slow_warps = 0;
  for (int colour = 0; colour < 2; ++colour)
    for (int r = 0; r < H; ++r)
      for (int c0 = 0; c0 < W; c0 += 256) {
        bool slow = false;
        for (int c = c0 + ((r + colour) & 1); c < c0 + 256; c += 2) {
          int k, S;
          lattice_neighbours(x.data(), W, H, r, c, k, S);
          const int xm = f.xmax[static_cast<size_t>(r) * W + c];
          const float u = lattice_coarse_uniform_at(1, W, r, c, 200, 10);
          const int got = poisson_ising_draw_window(t.window(xm, k, S), f.at(r, c), kPoissonIsingWindowBias + u);
          ++sites;
          if (got < 0) ++undecided, slow = true;
        }
        ++warps;
        slow_warps += slow ? 1 : 0;
      }
  std::printf("window draw at the benchmark's model: %.4f %% of sites undecided, %.2f %% of warps fall back\n",
              100.0 * undecided / sites, 100.0 * slow_warps / warps);
  EXPECT_LT(undecided, sites / 1000);
  EXPECT_LT(slow_warps, warps / 10);
}

TEST(Gibbs, SymmetricPaddingAddsZeroLossAtTheBorder) {
  // A border site with three real neighbours: its law equals the full definition with the padded fourth
  // neighbour equal to the site itself, whose (x − x)² is zero, and the sampler's k = 3 row draws it.
  const double lambda = 0.9, gamma = 0.8;
  const std::vector<int> real = {2, 3, 1};
  const int xm = poisson_ising_xmax(static_cast<float>(lambda));
  std::vector<double> padded(xm + 1);
  double z = 0.0;
  for (int x = 0; x <= xm; ++x) {
    double loss = (x - x) * (x - x);  // the mirrored neighbour
    for (int n : real) loss += double(x - n) * (x - n);
    z += padded[x] = std::pow(lambda, x) / std::tgamma(x + 1.0) * std::exp(-gamma * loss);
  }
  const std::vector<double> three = poisson_ising_cpmf(real, lambda, gamma);
  const PoissonIsingTables t = make_poisson_ising_tables(gamma, xm);
  const std::vector<double> drawn = draw_law(t, 3, 6, static_cast<float>(lambda), xm);  // S = 2 + 3 + 1
  for (int x = 0; x <= xm; ++x) {
    EXPECT_NEAR(padded[x] / z, three[x], 1e-12);
    EXPECT_NEAR(drawn[x], three[x], 1e-4);
  }
}

/// χ² critical value at upper-tail probability 0.001 (z = 3.0902) by the Wilson–Hilferty approximation.
double chi2_critical_0001(int df) {
  const double z = 3.0902, a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

class GibbsChi2 : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(PhiloxRounds, GibbsChi2, ::testing::Values(10, 7));

TEST_P(GibbsChi2, ChainOnA3x3LatticeMatchesTheExactJointDistribution) {
  // 3 × 3 sites, x_max 1 everywhere but 2 at the centre (768 states), λ 1, γ 0.3: the joint law
  // ∝ Π λˣ/x! · exp(−γ Σ_{edges} (xᵢ − xⱼ)²) by enumeration, against the CPU reference's states every
  // 4th sweep over 200,000 sweeps (seed 7), uniforms from Philox4x32-10 and -7. χ² over cells with ≥ 5
  // expected, significance 0.001.
  const int W = 3, H = 3;
  const float lambda = 1.f;
  const double gamma = 0.3;
  const std::vector<float> lam_row(3, lambda), lam_col(3, 1.f);
  std::vector<uint8_t> xm(9, 1);
  xm[4] = 2;
  const PoissonIsingTables t = make_poisson_ising_tables(gamma, 2);
  PoissonIsingArrays arrays;
  arrays.lam_row = lam_row.data();
  arrays.lam_col = lam_col.data();
  arrays.xmax = xm.data();
  arrays.weights = t.weights.data();
  const auto rule = make_poisson_ising_rule<kPoissonIsingMaxTerms>(arrays, t, W, GetParam());
  auto code = [&](const std::vector<uint8_t>& x) {
    int c = 0;
    for (int i = 0; i < 9; ++i) c = c * 3 + x[i];
    return c;
  };
  // Exact law.
  std::map<int, double> exact;
  double z = 0.0;
  for (int m = 0; m < (1 << 8) * 3; ++m) {
    std::vector<uint8_t> x(9);
    int rest = m;
    x[4] = static_cast<uint8_t>(rest % 3);
    rest /= 3;
    for (int i = 0, b = 0; i < 9; ++i)
      if (i != 4) x[i] = static_cast<uint8_t>((rest >> b++) & 1);
    double logw = 0.0;
    for (int i = 0; i < 9; ++i) logw += x[i] * std::log(lambda) - std::lgamma(x[i] + 1.0);
    for (int r = 0; r < H; ++r)
      for (int c = 0; c < W; ++c) {
        const int i = r * W + c;
        if (c + 1 < W) logw -= gamma * (x[i] - x[i + 1]) * (x[i] - x[i + 1]);
        if (r + 1 < H) logw -= gamma * (x[i] - x[i + W]) * (x[i] - x[i + W]);
      }
    const double w = std::exp(logw);
    exact[code(x)] = w;
    z += w;
  }
  for (auto& [k, v] : exact) v /= z;
  // The chain.
  std::vector<uint8_t> x(9);
  const uint32_t seed = 7;
  lattice_initial_cpu(rule, x.data(), W, H, seed);
  std::map<int, double> count;
  const int sweeps = 200000, thin = 4;
  int samples = 0;
  for (int s = 0; s < sweeps; s += thin) {
    checkerboard_sweeps_cpu(rule, x.data(), W, H, seed, static_cast<uint32_t>(s), thin);
    if (s >= 1000) {
      count[code(x)] += 1;
      ++samples;
    }
  }
  double chi2 = 0.0, pooled_e = 0.0, pooled_o = 0.0;
  int cells = 0;
  for (const auto& [k, p] : exact) {
    const double e = p * samples;
    const double o = count.count(k) ? count[k] : 0.0;
    if (e >= 5.0) {
      chi2 += (o - e) * (o - e) / e;
      ++cells;
    } else {
      pooled_e += e;
      pooled_o += o;
    }
  }
  if (pooled_e > 0.0) {
    chi2 += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
    ++cells;
  }
  ASSERT_GT(cells, 50);
  EXPECT_LT(chi2, chi2_critical_0001(cells - 1)) << cells << " cells, " << samples << " samples";
}

ParamValues small_knobs() { return {{"width", "16"}, {"height", "8"}, {"thinning", "2"}}; }

/// A CPU run with `knobs` is refused with one line naming `option` (and saying `also`).
void refused(const ParamValues& knobs, const std::string& option, const std::string& also = "") {
  try {
    GibbsRun run(knobs, false);
    ADD_FAILURE() << "accepted " << option;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(option), std::string::npos) << what;
    EXPECT_NE(what.find(also), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(Gibbs, BadInputsAreOneLineErrorsNamingTheOption) {
  ParamValues k = small_knobs();
  for (const char* bad : {"0", "-1", "nan", "NaN", "17"}) {
    k["lambda"] = bad;
    refused(k, "--lambda");
  }
  k = small_knobs();
  k["gamma"] = "-0.5";
  refused(k, "--gamma");
  k = small_knobs();
  k["block-width"] = "64";
  k["block-height"] = "32";
  refused(k, "--block-width");
  k = small_knobs();
  k["block-width"] = "0";
  refused(k, "--block-width");
  k = small_knobs();
  k["width"] = "12";
  refused(k, "--width");
  k = small_knobs();
  k["philox-rounds"] = "8";
  refused(k, "--philox-rounds", "one of 7, 10");
  // The table says what the check allows: a choice of 7 or 10 (the CLI's help, the GUI's combo, the sidecar).
  const std::vector<ParamSpec>& specs = gibbs_params().specs();
  const auto rounds = std::find_if(specs.begin(), specs.end(), [](const ParamSpec& p) { return p.name == "philox-rounds"; });
  ASSERT_NE(rounds, specs.end());
  EXPECT_EQ(rounds->kind, ParamKind::Choice);
  EXPECT_EQ(rounds->choices, (std::vector<std::string>{"7", "10"}));
  for (const char* r : {"7", "10"}) {
    k["philox-rounds"] = r;
    GibbsRun run(k, false);
    EXPECT_EQ(run.settings().philox_rounds, std::stoi(r));
    EXPECT_EQ(params_json(run.params())["philox_rounds"], r);
  }
  GibbsSettings s;
  s.philox_rounds = 9;  // a count that no choice names is refused by the table's check
  EXPECT_THROW(s.validate(), InputError);
  EXPECT_THROW(make_poisson_ising_tables(std::nan(""), 4), InputError);
  EXPECT_THROW(poisson_ising_cpmf({0}, 0.0, 0.8), InputError);
}

TEST(Gibbs, LatticeRunContractOnTheCpu) {
  const LatticeWorkloadEntry* e = find_lattice_workload("gibbs");
  ASSERT_NE(e, nullptr);
  std::unique_ptr<LatticeRun> run = e->make(small_knobs(), false);
  EXPECT_EQ(run->workload(), "gibbs");
  EXPECT_EQ(run->strategy(), "gibbs-cpu");
  EXPECT_THROW(run->set_strategy("gibbs-nope"), InputError);
  EXPECT_EQ(run->steps(), 0u);
  const uint64_t ran = run->advance(1.0);
  EXPECT_GE(ran, 1u);
  EXPECT_EQ(run->steps(), ran);
  ASSERT_EQ(run->views(), (std::vector<std::string>{"sample", "mean", "lambda"}));
  for (size_t v = 0; v < run->views().size(); ++v) {
    std::vector<uint32_t> rgba;
    uint32_t w = 0, h = 0;
    run->image(v, rgba, w, h);
    EXPECT_EQ(w, 16u);
    EXPECT_EQ(h, 8u);
    EXPECT_EQ(rgba.size(), 128u);
  }
  std::vector<uint32_t> rgba;
  uint32_t w, h;
  EXPECT_THROW(run->image(3, rgba, w, h), std::out_of_range);
  const nlohmann::json r = run->report();
  for (const char* key : {"workload", "strategy", "steps", "knobs", "sweeps", "sweeps_per_s", "site_updates_per_ns", "histogram"})
    EXPECT_TRUE(r.contains(key)) << key;
  uint64_t total = 0;
  for (const auto& c : r["histogram"]) total += c.get<uint64_t>();
  EXPECT_EQ(total, 128u);
  EXPECT_EQ(r["knobs"]["block_width"], 32);
  EXPECT_EQ(r["kernel"], "gibbs-cpu");  // the kernel that ran the sweeps
  // Grid knobs keep the chain; model knobs restart it.
  EXPECT_FALSE(run->restarts("block-width"));
  EXPECT_FALSE(run->restarts("padding"));
  EXPECT_TRUE(run->restarts("gamma"));
  EXPECT_TRUE(run->restarts("lambda"));
  Params& p = run->params();
  p.set(p.find("block-width"), 8);
  const uint64_t before = run->steps();
  run->advance(0.5);
  EXPECT_GT(run->steps(), before);
  p.set(p.find("gamma"), 1.5);
  const uint64_t ran2 = run->advance(0.5);
  EXPECT_EQ(run->steps(), ran2);  // the chain restarted
  run->restart();
  EXPECT_EQ(run->steps(), 0u);
  // A refused combination changes nothing.
  p.set(p.find("block-width"), 1);
  p.set(p.find("block-width"), 32);
  EXPECT_THROW(p.set(p.find("block-width"), 128), InputError);  // 128 × 16 threads
  EXPECT_EQ(p.get(p.find("block-width")), 32.0);
  EXPECT_EQ(p.get(p.find("block-height")), 16.0);
}

TEST(GibbsBench, TheWarmUpReportsItsProgressToo) {
  // 100 warm-up sweeps (the most the bench warms up), then 100 timed, of 2048 x 2048 on the CPU: about 7 s on
  // 2 cores, the warm-up half of it, so a progress line comes while it runs.
  test::TempDir io("gibbs-bench-warm-up");
  const test::CliResult r =
      test::run_megaview(io, "bench --cpu --workload gibbs --width 2048 --height 2048 --sweeps 100 --repeat 1");
  ASSERT_EQ(r.code, 0) << r.err;
  if (r.seconds < 5.0)
    GTEST_SKIP() << "the run took " << r.seconds << " s: its warm-up was too short for a progress line (after 2 s)";
  // a line "gibbs gibbs-cpu 32x16:  NN.N%, …" with NN.N below the warm-up's 50 %
  EXPECT_LT(test::least_progress_percent(r.err, "gibbs gibbs-cpu 32x16: "), 50.0) << r.err;
}

TEST(GibbsBench, PrintsTheDocumentsFig19BesideOurs) {
  // The document's table comes with the binary (assets/poisson-ising-fig19.json, embedded at build time):
  // its H100 best in the table's last column, and each CSV row with the document's three GPUs at the same
  // configuration (32x4: V100 178.42 ± 0.04, A100 93.302 ± 0.004, H100 69.31 ± 0.026 s).
  test::TempDir io("gibbs-bench-fig19");
  const std::string csv = io / "g.csv";
  const test::CliResult r = test::run_megaview(
      io, "bench --cpu --workload gibbs --width 64 --height 32 --sweeps 1 --repeat 1 --block 32x4 --csv '" + csv + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("69.310 s (32x4)"), std::string::npos) << r.out;
  const std::string text = test::slurp(csv);
  EXPECT_NE(text.find("doc_v100_s,doc_v100_sd,doc_a100_s,doc_a100_sd,doc_h100_s,doc_h100_sd"), std::string::npos) << text;
  EXPECT_NE(text.find(",178.42,0.04,93.302,0.004,69.31,0.026\n"), std::string::npos) << text;
}

TEST(Gibbs, ACpuFrameOfALargeLatticeStaysWithinItsBudget) {
  // A 4096 x 4096 sweep takes about a second on 2 cores: a 10 ms frame runs bands of rows of it instead.
  const ParamValues k = {{"width", "4096"}, {"height", "4096"}, {"thinning", "1"}};
  GibbsRun run(k, false);
  for (int f = 0; f < 3; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(run.advance(10.0), 0u);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 250.0) << "frame " << f << " of 10 ms took " << ms << " ms";
  }
  EXPECT_EQ(run.steps(), 0u);  // no whole sweep yet
  EXPECT_EQ(run.kept(), 0u);
  run.run_sweeps(1);  // completes the sweep in progress
  EXPECT_EQ(run.steps(), 1u);
  EXPECT_EQ(run.kept(), 1u);
  GibbsRun whole(k, false);
  whole.run_sweeps(1);
  EXPECT_TRUE(run.state() == whole.state());
}

TEST(Gibbs, ACpuChainRunInBandsOfRowsIsTheChainOfWholeSweeps) {
  const ParamValues k = {{"width", "1024"}, {"height", "512"}, {"thinning", "2"}};
  GibbsRun bands(k, false), whole(k, false);
  int mid = 0;  // frames that ended inside a sweep
  for (int f = 0; f < 400 && bands.steps() < 5; ++f) mid += bands.advance(0.5) == 0 ? 1 : 0;
  EXPECT_GT(mid, 0);
  bands.run_sweeps(2);  // the sweep in progress, then one more
  whole.run_sweeps(bands.steps());
  EXPECT_TRUE(bands.state() == whole.state());
  EXPECT_EQ(bands.kept(), whole.kept());
  std::vector<uint32_t> a, b;
  uint32_t w = 0, h = 0;
  bands.image(1, a, w, h);  // the running mean of the kept sweeps
  whole.image(1, b, w, h);
  EXPECT_TRUE(a == b);
}

TEST(Gibbs, CpuRunIsReproducibleBySeedAndKeepsTheMean) {
  GibbsRun a(small_knobs(), false), b(small_knobs(), false);
  a.run_sweeps(10);
  b.run_sweeps(4);
  b.run_sweeps(6);
  EXPECT_EQ(a.state(), b.state());
  EXPECT_EQ(a.kept(), 5u);
  ParamValues k = small_knobs();
  k["seed"] = "2";
  GibbsRun c(k, false);
  c.run_sweeps(10);
  EXPECT_NE(a.state(), c.state());
}

}  // namespace
}  // namespace mv

namespace mv {
namespace {

/// A width × height grey PNG whose pixel (x, y) has grey level f(x, y) ∈ 0 … 255.
template <class F>
void write_grey_png(const std::string& path, int width, int height, F f) {
  std::vector<uint32_t> rgba(static_cast<size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const uint32_t g = static_cast<uint32_t>(f(x, y)) & 0xFFu;
      rgba[static_cast<size_t>(y) * width + x] = g | g << 8 | g << 16 | 0xFF000000u;
    }
  write_png(path, rgba.data(), width, height);
}

TEST(GibbsLambdaMap, ImageMapIsTheLuminanceStretchedToTheLattice) {
  test::TempDir dir("gibbs-image");
  // Left half white, right half black, 4 × 2 pixels; on a 16 × 8 lattice each pixel covers 4 × 4 sites.
  const std::string png = dir / "halves.png";
  write_grey_png(png, 4, 2, [](int x, int) { return x < 2 ? 255 : 0; });
  const LambdaGrid g = read_lambda_image(png);
  ASSERT_EQ(g.width, 4);
  ASSERT_EQ(g.height, 2);
  EXPECT_EQ(g.v[0], 1.f);
  EXPECT_EQ(g.v[3], 0.f);
  const LambdaField f = make_lambda_map(LambdaMap::Image, 2.0, 0.25, 16, 8, &g);
  ASSERT_FALSE(f.separable());
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 6; ++j) EXPECT_EQ(f.at(i, j), 2.f) << i << " " << j;  // up to the white pixels' centre + ½ pixel
    for (int j = 10; j < 16; ++j) EXPECT_EQ(f.at(i, j), static_cast<float>(2.0 * kLambdaGridFloor)) << i << " " << j;
    EXPECT_GT(f.at(i, 7), f.at(i, 8));  // the bilinear ramp between the pixel centres
  }
  EXPECT_EQ(f.max(), 2.f);
  EXPECT_EQ(f.xmax[0], poisson_ising_xmax(2.f));
  EXPECT_EQ(f.xmax[15], std::max(1, poisson_ising_xmax(0.02f)));
  EXPECT_THROW(make_lambda_map(LambdaMap::Image, 2.0, 0.25, 16, 8, nullptr), InputError);

  // The live run's λ view shows the image: white sites at the top of the ramp, black ones at the floor.
  ParamValues k = small_knobs();
  k["lambda"] = "2";
  k["lambda-map"] = "image";
  k["lambda-image"] = png;
  GibbsRun run(k, false);
  EXPECT_EQ(run.params().text(run.params().find("lambda-image")), png);
  EXPECT_EQ(params_json(run.params())["lambda_image"], png);
  std::vector<uint32_t> rgba;
  uint32_t w = 0, h = 0;
  run.image(2, rgba, w, h);
  ASSERT_EQ(rgba.size(), 128u);
  EXPECT_EQ(rgba[0], pack_rgba8(heat_color(1.f)));
  EXPECT_EQ(rgba[15], pack_rgba8(heat_color(static_cast<float>(kLambdaGridFloor))));
  EXPECT_EQ(rgba[7 * 16 + 2], pack_rgba8(heat_color(1.f)));
  run.run_sweeps(5);
  // Black sites (λ = 0.02, x_max 1) are almost always 0, white ones (λ = 2) mostly not.
  const std::vector<uint8_t> x = run.state();
  int white = 0, black = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) {
      white += x[i * 16 + j] > 0;
      black += x[i * 16 + 12 + j] > 0;
    }
  EXPECT_GT(white, 10);
  EXPECT_LT(black, 4);
}

TEST(GibbsLambdaMap, WhiteImageGivesTheUniformMapsChainBitForBit) {
  // λ per site (the image path) and λ = row · col (the separable path) draw the same bits for the same λ.
  test::TempDir dir("gibbs-white");
  const std::string png = dir / "white.png";
  write_grey_png(png, 3, 5, [](int, int) { return 255; });
  ParamValues k = {{"width", "24"}, {"height", "10"}, {"lambda", "2.5"}, {"seed", "7"}, {"lambda-map", "uniform"}};
  GibbsRun uniform(k, false);
  k["lambda-map"] = "image";
  k["lambda-image"] = png;
  GibbsRun image(k, false);
  EXPECT_EQ(uniform.state(), image.state());
  uniform.run_sweeps(9);
  image.run_sweeps(9);
  EXPECT_EQ(uniform.state(), image.state());
}

TEST(GibbsLambdaMap, BadImageOrSliceIsOneLineNamingTheKnob) {
  test::TempDir dir("gibbs-bad-image");
  const std::string junk = dir / "junk.png";
  {
    std::FILE* f = std::fopen(junk.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("not an image\n", f);
    std::fclose(f);
  }
  ParamValues k = small_knobs();
  k["lambda-map"] = "image";
  refused(k, "--lambda-image", "PNG or JPEG");  // no path given
  k["lambda-image"] = dir / "missing.png";
  refused(k, "--lambda-image", "no such file");
  k["lambda-image"] = dir.str();
  refused(k, "--lambda-image", "not a regular file");
  k["lambda-image"] = junk;
  refused(k, "--lambda-image", "cannot decode");
  // A live change to a bad file is refused at the restart and the run keeps its old map.
  test::TempDir ok("gibbs-good-image");
  const std::string png = ok / "grey.png";
  write_grey_png(png, 2, 2, [](int x, int y) { return 60 * (x + 2 * y); });
  k["lambda-image"] = png;
  GibbsRun run(k, false);
  run.params().apply({{"lambda-image", junk}});
  EXPECT_THROW(run.restart(), InputError);
  EXPECT_EQ(run.params().text(run.params().find("lambda-image")), png);
  run.run_sweeps(2);
  EXPECT_EQ(run.steps(), 2u);
  k = small_knobs();
  k["lambda-map"] = "volume";
  k["volume"] = dir / "missing.nii.gz";
  refused(k, "--volume", "missing.nii.gz");
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  k["volume"] = "ch2";
  k["slice-axis"] = "z";
  k["slice"] = "181";
  refused(k, "--slice", "[0, 180]");
  k["slice-axis"] = "y";
  k["slice"] = "300";
  refused(k, "--slice", "[0, 216]");
}

TEST(GibbsLambdaMap, Ch2SliceIsNormalisedAndRunsLive) {
  std::string why;
  if (test::ch2_path(why).empty()) GTEST_SKIP() << why;
  const LambdaGrid g = read_lambda_slice("ch2", 2, -1);  // the middle axial slice
  EXPECT_EQ(g.width, 181);
  EXPECT_EQ(g.height, 217);
  const auto [lo, hi] = std::minmax_element(g.v.begin(), g.v.end());
  EXPECT_EQ(*lo, 0.f);
  EXPECT_EQ(*hi, 1.f);
  const LambdaGrid sag = read_lambda_slice("ch2", 0, 90);
  EXPECT_EQ(sag.width, 217);
  EXPECT_EQ(sag.height, 181);
  ParamValues k = {{"width", "32"}, {"height", "40"}, {"lambda-map", "volume"}, {"volume", "ch2"}, {"lambda", "3"}};
  GibbsRun run(k, false);
  run.run_sweeps(3);
  EXPECT_EQ(run.steps(), 3u);
  EXPECT_TRUE(run.restarts("slice"));
  run.params().apply({{"slice", "100"}});
  run.restart();
  EXPECT_EQ(run.steps(), 0u);
}

}  // namespace
}  // namespace mv
