// The Poisson-Ising model on a 2D lattice and its heat-bath (Gibbs) site update, after the source document
// "Poisson-Icing: Gibbs sampling with a GPU using CuPy" (../shared/papers/poisson-ising-gibbs-cupy.txt,
// "The Poisson-Ising Model and Gibbs Sampling" and "CPU Implementation").
//
// Site (i, j) holds a count x in 0 … x_max(λᵢⱼ). Given its neighbours, its conditional probability mass
// function (CPMF) is
//     P(x | N) ∝ λᵢⱼˣ / x! · exp(−γ Σ_{n∈N} (x − n)²),   x = 0 … x_max(λᵢⱼ) = ⌈λᵢⱼ + 5 √λᵢⱼ⌉,
// (the e^−λ factor and, through Σ(x − n)² = k x² − 2x Σn + Σn², the Σn² term cancel in the
// normalisation). Borders use the document's symmetric padding: a border site's missing neighbour equals
// the site itself, so its loss (x − x)² is zero and it drops out: N holds the k ∈ {2, 3, 4} real
// neighbours and S = Σ_{n∈N} n.
//
// The weights come from the ratio recurrence w(x+1)/w(x) = λ/(x+1) · exp(−γ(k(2x+1) − 2S)) with no exp
// per site at all: the part that does not depend on λ, exp(−γ(k x² − 2xS)) / x!, scaled so that the γ
// factor's largest value over x is 1 (no overflow for any γ ≥ 0), is tabulated once per γ for every
// (k, S, x) (PoissonIsingTables); the λ part λˣ is the running product p(x+1) = p(x) · λ. The draw is
// the inverse-CDF method on one uniform u ∈ [0, 1): the smallest x whose cumulative weight exceeds u · Z.
//
// Every product, sum and fused multiply-add is rounded once, the same way on both sides (base/float_rn.h),
// so the CPU and the GPU compute the same bits from the same tables and the same uniform.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/common.h"
#include "base/float_rn.h"

namespace mv {

/// Largest λ the model accepts: x_max(16) = 36, so the state fits uint8 and the tables stay small.
inline constexpr double kPoissonIsingMaxLambda = 16.0;

/// x_max(λ) = ⌈λ + 5 √λ⌉ (five standard deviations above the mean; the document's choice). λ > 0.
MV_HD inline int poisson_ising_xmax(float lambda) {
  return static_cast<int>(std::ceil(static_cast<double>(lambda) + 5.0 * std::sqrt(static_cast<double>(lambda))));
}

/// Terms of the unrolled draw for lattices whose largest x_max is at most 7 (λ ≤ 1.9): 8 weights, two
/// float4 loads per row, no branch.
inline constexpr int kPoissonIsingFastTerms = 8;
/// Terms of the generic draw (x_max ≤ 36 for λ ≤ 16, rounded up to a multiple of 4).
inline constexpr int kPoissonIsingMaxTerms = 40;

/// The heat-bath draw of one site. `row` = the site's table row g'(x) = exp(−γ(k x² − 2xS) − m) / x! for
/// its (x_max, k, S): x = 0 … x_max, then zeros (16-byte aligned); `lambda` > 0; `xm` = x_max(λ) ∈ [1,
/// NX − 1]; `u` ∈ [0, 1). Weights w(x) = λˣ · g'(x) (the λ part by the ratio recurrence p(x+1) = p(x)·λ),
/// cumulative sums c(x) = fma(p(x), g'(x), c(x−1)) (nondecreasing), Z = c(xm); returns the number of
/// x < xm with c(x) ≤ u·Z, i.e. the smallest x with c(x) > u·Z. Where every weight underflows (Z = 0:
/// neighbours far above what λ allows) it returns xm. NX = kPoissonIsingFastTerms runs all 8 terms
/// without a branch (the zeros after x_max add exact zeros and u·Z < Z) and finds the count by a
/// three-step binary search; any other NX runs x ≤ xm and counts. Both compute the same bits.
template <int NX>
MV_HD MV_INLINE int poisson_ising_draw(const float* row, float lambda, int xm, float u) {
  static_assert(NX == 7 || NX % 4 == 0, "the draw reads its row four weights at a time");
  if constexpr (NX <= kPoissonIsingFastTerms) {
    float g[8];
#if defined(__CUDA_ARCH__)
    const float4 a = reinterpret_cast<const float4*>(row)[0], b = reinterpret_cast<const float4*>(row)[1];
    g[0] = a.x; g[1] = a.y; g[2] = a.z; g[3] = a.w; g[4] = b.x; g[5] = b.y; g[6] = b.z; g[7] = b.w;
#else
    for (int x = 0; x < 8; ++x) g[x] = row[x];
#endif
    float c[8], p = 1.f, z = 0.f;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int x = 0; x < NX; ++x) {
      z = fma_rn(p, g[x], z);
      c[x] = z;
      p = mul_rn(p, lambda);
    }
    const float t = mul_rn(u, z);
    // #{x < 7 : c(x) ≤ t} over the nondecreasing c(0 … 6): test c(3), then c(1) or c(5), then one of c(0, 2, 4, 6).
    int r = c[3] <= t ? 4 : 0;
    r += (r ? c[5] : c[1]) <= t ? 2 : 0;
    const float last = r == 0 ? c[0] : r == 2 ? c[2] : r == 4 ? c[4] : c[6];
    r += last <= t ? 1 : 0;
    return r < xm ? r : xm;
  } else {
    float c[NX];
    float p = 1.f, z = 0.f;
    for (int x = 0; x <= xm; ++x) {
      z = fma_rn(p, row[x], z);
      c[x] = z;
      p = mul_rn(p, lambda);
    }
    const float t = mul_rn(u, z);
    int r = 0;
    for (int x = 0; x < xm; ++x) r += c[x] <= t ? 1 : 0;
    return r;
  }
}

/// Slack of the window draw's bounds A and B for a table whose x_max is at most X, in units of the window's mass
/// W: (8X + 32) · 2⁻²⁴ (4.8 · 10⁻⁶ at X = 6), over twice what the roundings can move a comparison (ε = 2⁻²⁴):
/// - the full draw's (poisson_ising_draw): the weight of x carries x rounded products and at most X + 1 − x
///   rounded sums, so each cumulative sum c(x) and Z are within (X + 1)εZ of their exact values, and t = u · Z
///   one rounding more: c(x) − t is within (2X + 3)εZ of its exact value, and Z < 2W (A and B are below ½);
/// - the window draw's own (poisson_ising_window_decide_parts): W from the rounded ratio and one fused
///   multiply-add is within 2εW, which moves (A − u)W and (u + B)W by at most 3εW; its other operations are exact
///   or decide by the sign of a single rounding, which rounding does not change.
/// Together (4X + 9)εW. The table's bounds widen by this slack and round up to the grids on which 128 + A and
/// B − 128 are exact floats, 2⁻¹⁶ for A and 2⁻¹⁷ for B (build_windows in render/lattice/poisson_ising.cpp); the
/// tests check the window draw against the full draw at and around every boundary of the full draw.
constexpr double poisson_ising_window_slack(int X) { return (8.0 * X + 32.0) / 16777216.0; }

/// Resolution of the uniform the window draw decides from: the kernels draw a site's uniform in two parts, a
/// coarse one u₁₆ = k · 2⁻¹⁶ (16 random bits) and, only where the window cannot decide, 8 more bits that make
/// the full draw's u = u₁₆ + b · 2⁻²⁴ (b < 2⁸; sched/lattice/checkerboard_sweep.h numbers them). The window
/// table's B includes this step, so a window draw at u₁₆ that decides gives the full draw's answer at every
/// u ∈ [u₁₆, u₁₆ + 2⁻¹⁶): its tests that get harder as u grows (d < −BW and u + B < 1) hold at u₁₆ with
/// B + 2⁻¹⁶, hence at u with B, and the others (d > AW and u > A) only get easier. The full draw is
/// nondecreasing in u, so both ends of the interval giving the same answer is what the tests check.
inline constexpr double kPoissonIsingCoarseStep = 1.0 / 65536.0;

/// The window draw takes a coarse uniform u₁₆ as the float f = 128 + u₁₆ (exact: the float with exponent 2⁷ and
/// the 16 coarse bits in the low mantissa bits, one logic operation from the bits; lattice_window_uniform in
/// sched/lattice/checkerboard_sweep.h), and its table holds 128 + A and B − 128, so that A − u₁₆ and u₁₆ + B are
/// single exact subtractions.
inline constexpr float kPoissonIsingWindowBias = 128.f;

/// f = 128 + u₁₆ of a uniform u ∈ [0, 1): u truncated to its coarse part u₁₆ = ⌊u · 2¹⁶⌋ · 2⁻¹⁶ (for a coarse uniform,
/// u itself), so that a window draw at f stands for the full draw at u.
MV_HD MV_INLINE float poisson_ising_window_uniform(float u) {
  return kPoissonIsingWindowBias + static_cast<float>(static_cast<uint32_t>(u * 65536.f)) * (1.f / 65536.f);
}

/// The bits of a float.
MV_HD MV_INLINE uint32_t poisson_ising_float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
#endif
}

/// poisson_ising_window_decide_signs in parts, for callers that combine several sites' words. The row is
/// PoissonIsingTables::windows' {x₀, r, 128 + A, B − 128} (x₀ as the bits of its float slot, r = g'(x₀+1) / g'(x₀):
/// the weights relative to g'(x₀)); f = 128 + u₁₆ (poisson_ising_window_uniform). The window decides where bit 31
/// of both `c` and `tw` is set; returns x₀ + [d > AW] (d = u₁₆W − g'(x₀)) in the low byte (x₀ ≤ 35: the other
/// bytes carry no meaning). Six operations of the FMA pipe, relative to g'(x₀): W = fma(λ, r, 1), t = A − u₁₆
/// (exact: (128 + A) − f), [u₁₆ > A] (u₁₆W > AW) as the sign of t, [d > AW] as the sign of
/// fma(t, W, 1) = (A − u₁₆)W + 1, v = u₁₆ + B (exact: f + (B − 128)), [v < 1] as the sign of v − 1, and
/// [vW < 1] (d < −BW) as the sign of fma(v, W, −1). W and the two fused operations round once each, so each
/// compare is off by a few 2⁻²⁴ W at most, which poisson_ising_window_slack covers.
MV_HD MV_INLINE uint32_t poisson_ising_window_decide_parts(float x0, float r1, float ra, float rb, float lambda,
                                                           float f, uint32_t& c, uint32_t& tw) {
  const float w = fma_rn(lambda, r1, 1.f);
  const float t = add_rn(ra, -f);
  const float v = add_rn(f, rb);
  const uint32_t ta = poisson_ising_float_bits(t);                  // u > A: uW > AW
  const uint32_t up = poisson_ising_float_bits(fma_rn(t, w, 1.f));  // (A − u)W + 1 < 0: d > AW
  const uint32_t dn = poisson_ising_float_bits(fma_rn(v, w, -1.f)); // (u + B)W < 1: d < −BW
  tw = poisson_ising_float_bits(add_rn(v, -1.f));                    // u + B < 1: uW + BW < W
  c = up | (dn & ta);
  return poisson_ising_float_bits(x0) + (up >> 31);
}

/// poisson_ising_window_decide's comparisons as sign bits: returns x₀ + 1 where d > AW, else x₀, and sets
/// bit 31 of `ok` where the window decides (the other bits of `ok` carry no meaning). Each comparison x < y is
/// the sign bit of the difference RN(x − y) (or of a fused RN(xy − z)): for finite operands that sign is the
/// exact difference's, and a zero difference gives +0 unless both terms are zeros of opposite signs with the
/// negative one on the left, which cannot happen here (u, A, B and W are ≥ +0, t = A − u is +0 where u = A,
/// and a product tW = −0 meets 1). A row marked never to decide has 128 + A = +∞: t and fma(t, W, 1) are +∞.
/// So the comparisons run as additions and fused multiply-adds (the FMA pipe on the GPU) and combine with
/// bitwise logic, without predicates or selections, the same on the CPU and the GPU.
MV_HD MV_INLINE int poisson_ising_window_decide_signs(float x0, float r1, float ra, float rb, float lambda, float f,
                                                     uint32_t& ok) {
  uint32_t c, tw;
  const uint32_t v = poisson_ising_window_decide_parts(x0, r1, ra, rb, lambda, f, c, tw);
  ok = c & tw;
  return static_cast<int>(v & 63u);
}

/// The window draw: the full draw's answer from two weights, or −1 where two weights cannot tell it. (x0, r1, ra, rb) =
/// PoissonIsingTables::window(xm, k, S) = {x₀, g'(x₀+1) / g'(x₀), 128 + A, B − 128} for the site's row, `lambda` the
/// site's λ (the same float as the full draw's), f = 128 + u₁₆ from the site's uniform u
/// (poisson_ising_window_uniform): the answer holds for every u ∈ [u₁₆, u₁₆ + 2⁻¹⁶). Relative to λ^x₀, the window x₀,
/// x₀+1 weighs W = g'(x₀) + λ g'(x₀+1), the tail below it L = Σ_{y<x₀} λ^(y−x₀) g'(y) and the tail above H = Σ_{y>x₀+1}
/// λ^(y−x₀) g'(y); the table's A ≥ L / W and B ≥ H / W over every λ with this x_max, plus the slack (B also plus
/// kPoissonIsingCoarseStep). With Z = L + W + H, the full draw's cumulative sums satisfy c(x₀−1) − uZ ≤ −(u − A)W,
/// c(x₀) − uZ ∈ [g'(x₀) − uW − BW, g'(x₀) − uW + AW] and c(x₀+1) − uZ ≥ (1 − u − B)W. So the full draw returns x₀ + 1
/// where uW − g'(x₀) > AW and uW + BW < W, and x₀ where g'(x₀) − uW > BW, uW > AW and uW + BW < W; otherwise this
/// returns −1 (u within the tails' mass of a boundary, or a row marked never to decide). Same bits on the CPU and the
/// GPU (every operation rounded once). Cost: one 16-byte load, 3 fused multiply-adds and 3 additions (the compares
/// among them: poisson_ising_window_decide_parts), no branch; the full draw takes x_max + 1 fused multiply-adds, as
/// many multiplies and its count. The tails are small where the CPMF is peaked: for γ = 0.8 and four neighbours the
/// weights fall by e^(−3.2) or faster away from the two largest.
MV_HD MV_INLINE int poisson_ising_window_decide(float x0, float r1, float ra, float rb, float lambda, float f) {
  uint32_t ok;
  const int v = poisson_ising_window_decide_signs(x0, r1, ra, rb, lambda, f, ok);
  return ok >> 31 ? v : -1;
}

/// poisson_ising_window_decide on the window row `win` (16-byte aligned: one 16-byte load on the GPU) at
/// f = 128 + u₁₆ (poisson_ising_window_uniform; kPoissonIsingWindowBias + u₁₆ for a coarse uniform u₁₆).
MV_HD MV_INLINE int poisson_ising_draw_window(const float* win, float lambda, float f) {
#if defined(__CUDA_ARCH__)
  const float4 v = *reinterpret_cast<const float4*>(win);
  return poisson_ising_window_decide(v.x, v.y, v.z, v.w, lambda, f);
#else
  return poisson_ising_window_decide(win[0], win[1], win[2], win[3], lambda, f);
#endif
}

/// The document's way: every weight from its definition, w(x) = exp(x ln λ − ln x! − γ Σ_{n∈N} (x − n)²),
/// one exp (and one lgamma) per x, then the same inverse-CDF draw. `n` holds the k real neighbours.
/// Not bit-identical to poisson_ising_draw (other roundings), the same distribution.
MV_HD MV_INLINE int poisson_ising_draw_direct(const int* n, int k, float lambda, int xm, float gamma, float u) {
  const float ll = logf(lambda);
  float z = 0.f;
  for (int x = 0; x <= xm; ++x) {
    float loss = 0.f;
    for (int j = 0; j < k; ++j) loss += float((x - n[j]) * (x - n[j]));
    z += expf(x * ll - lgammaf(x + 1.f) - gamma * loss);
  }
  const float t = u * z;
  float c = 0.f;
  for (int x = 0; x < xm; ++x) {
    float loss = 0.f;
    for (int j = 0; j < k; ++j) loss += float((x - n[j]) * (x - n[j]));
    c += expf(x * ll - lgammaf(x + 1.f) - gamma * loss);
    if (c > t) return x;
  }
  return xm;
}

/// The γ tables for one γ ≥ 0 and an upper bound X of x_max over the lattice (1 ≤ X ≤ 36).
/// weights[((xm · 5 + k) · (4X+1) + S) · stride + x] = exp(−γ(k x² − 2xS) − m(k, S)) / x! for x ≤ xm, 0 for
/// xm < x < stride (X+1 rounded up to 4, at least 8); m = the largest exponent over x ∈ [0, X]; xm ∈ 0 … X,
/// k ∈ 0 … 4, S ∈ 0 … 4X.
struct PoissonIsingTables {
  int X = 0;
  double gamma = 0.0;
  std::vector<float> weights;
  /// The window draw's rows (poisson_ising_draw_window), 4 floats per (xm, k, S) at
  /// ((xm · 5 + k) · (4X+1) + S) · 4: {x₀, g'(x₀+1) / g'(x₀), 128 + A, B − 128} (x₀ as the bits of the first
  /// float), x₀ ∈ [0, xm − 1] the window of the smallest A + B over xm's λ range (λ + 5√λ ∈ (xm − 1, xm], and
  /// (0, 1] for xm = 1), B including kPoissonIsingCoarseStep (the window decides from a site's coarse uniform),
  /// A rounded up to a multiple of 2⁻¹⁶ and B to one of 2⁻¹⁷ (so 128 + A and B − 128 are exact floats);
  /// {0, 0, +∞, 0} (never decides) where A or B ≥ ½, or where λ^x₀ W could come near float underflow (< 2⁻⁸⁰).
  std::vector<float> windows;
  /// Floats per row: X+1 rounded up to 4, at least 8 (the unrolled draw reads 8).
  size_t s_stride() const { return std::max<size_t>(8, (static_cast<size_t>(X) + 4) / 4 * 4); }
  size_t k_stride() const { return (4 * static_cast<size_t>(X) + 1) * s_stride(); }
  /// The weights of a site with x_max xm and k real neighbours summing to S.
  const float* row(int xm, int k, int S) const {
    return weights.data() + (static_cast<size_t>(xm) * 5 + k) * k_stride() + S * s_stride();
  }
  const float* window(int xm, int k, int S) const {
    return windows.data() + ((static_cast<size_t>(xm) * 5 + k) * (4 * static_cast<size_t>(X) + 1) + S) * 4;
  }
};
/// Throws InputError for γ < 0 or not finite ("--gamma") or X outside [1, 36].
PoissonIsingTables make_poisson_ising_tables(double gamma, int X);

/// The exact CPMF in double from its definition (for tests and the docs): P(x) for x = 0 … x_max(λ) given
/// the real neighbours' values. Throws InputError for λ ≤ 0 or γ < 0.
std::vector<double> poisson_ising_cpmf(const std::vector<int>& neighbours, double lambda, double gamma);

/// How λ varies over the lattice. Gaussian: λᵢⱼ = λ · exp(−r² / (2σ²)), r the distance in pixels from the
/// lattice centre ((W−1)/2, (H−1)/2), σ = decay_width · min(W, H) (the document's "Gaussian decay away
/// from the centre"; its width is not given there, the default 0.25 is ours). Image and Volume: λᵢⱼ =
/// λ · max(gᵢⱼ, kLambdaGridFloor), g a grey image in [0, 1] (a picture's luminance, or a volume slice
/// normalised by its min and max) resampled to the lattice (LambdaGrid, make_lambda_map).
enum class LambdaMap : uint8_t { Uniform, Gaussian, Image, Volume };
inline const char* const kLambdaMapNames[] = {"uniform", "gaussian", "image", "volume"};

/// The smallest grey level of an image or volume map: black sites get λ · 0.01 (λ > 0, x_max ≥ 1).
inline constexpr double kLambdaGridFloor = 0.01;

/// A grey image, values in [0, 1], row-major, row 0 at the top: the source of the image and volume maps.
struct LambdaGrid {
  int width = 0, height = 0;
  std::vector<float> v;
};

/// The λ map and x_max per site (uint8, row-major). Uniform and Gaussian are separable: λ(i, j) = row[i] ·
/// col[j] rounded once (float), row[i] = λ · exp(−(i − cy)²/(2σ²)), col[j] = exp(−(j − cx)²/(2σ²))
/// (uniform: row = λ, col = 1), and `site` is empty. Image and Volume are not: `site` holds λ per site
/// (row-major float), row and col are empty.
struct LambdaField {
  int width = 0, height = 0;
  std::vector<float> row, col;
  std::vector<float> site;
  std::vector<uint8_t> xmax;
  bool separable() const { return site.empty(); }
  float at(int i, int j) const { return separable() ? row[i] * col[j] : site[static_cast<size_t>(i) * width + j]; }
  /// The largest λ over the lattice.
  float max() const;
};
/// The λ map of `map` on a width × height lattice; `grid` (Image, Volume: required) is resampled to the
/// lattice by bilinear interpolation between pixel centres (lattice site (i, j) samples the grid at
/// ((j + ½) · gw / W − ½, (i + ½) · gh / H − ½), clamped to the grid: the picture is stretched to fill the
/// lattice, its aspect ratio is not kept). Throws InputError for λ outside (0, 16] or not a number
/// ("--lambda"), decay_width ≤ 0 ("--decay-width"), W, H < 2, or an Image/Volume map without a grid
/// ("--lambda-map").
LambdaField make_lambda_map(LambdaMap map, double lambda, double decay_width, int width, int height,
                            const LambdaGrid* grid = nullptr);

/// The window table's bytes: PoissonIsingTables::windows for x_max bound X, 16 bytes per (xm, k, S) row.
inline size_t poisson_ising_window_bytes(int X) {
  return (static_cast<size_t>(X) + 1) * 5 * (4 * static_cast<size_t>(X) + 1) * 16;
}
/// Largest window table the strip kernel stages in shared memory (X ≤ 11: λ ≤ 2.73 everywhere): its byte
/// offsets fit the 16-bit halves of a word, and the table fits the 48 KiB a block gets without opting in.
inline constexpr size_t kPoissonIsingStripTableBytes = 48 * 1024;

/// The strip kernel's per-site table row ids id = x_max · 5 + k (k = the site's real neighbours, 2 … 4, by
/// its position: the window and weight rows are at id · (4X+1) + S), one byte per site (id ≤ 184), in groups
/// of 8 columns split by colour parity: byte (r · W/8 + g) · 8 + 4p + j is site (r, 8g + p + 2j), so that the
/// four sites of one parity in a group are one 4-byte load. `xmax` = LambdaField::xmax (W × H, W a multiple
/// of 8).
std::vector<uint8_t> poisson_ising_site_ids(const std::vector<uint8_t>& xmax, int width, int height);
/// A row of W values (W a multiple of 8) split by parity like poisson_ising_site_ids: value (2g + p) · 4 + j is
/// col[8g + p + 2j].
std::vector<float> poisson_ising_split_columns(const std::vector<float>& col);

/// The byte offsets into the window table (PoissonIsingTables::windows, 16 bytes a row) of the four parity-P
/// sites j = 0 … 3 of an 8-column group: off[j] = (id_j · (4X+1) + S_j) · 16, with id_j = byte j of `ids`
/// (poisson_ising_site_ids) and S_j = byte P + 2j of the group's byte-wise neighbour sums (s0, s1)
/// (lattice_sums8 in sched/lattice/checkerboard_sweep.h). Two sites at a time in the 16-bit halves of a
/// word: needs every offset below 2¹⁶ (a table of at most kPoissonIsingStripTableBytes).
template <int P>
MV_HD MV_INLINE void poisson_ising_strip_offsets(uint32_t ids, uint32_t s0, uint32_t s1, int X, uint32_t* off) {
  const uint32_t rb = (4u * static_cast<uint32_t>(X) + 1u) * 16u;
  const uint32_t m01 = P == 0 ? (s0 & 0x00FF00FFu) << 4 : (s0 & 0xFF00FF00u) >> 4;
  const uint32_t m23 = P == 0 ? (s1 & 0x00FF00FFu) << 4 : (s1 & 0xFF00FF00u) >> 4;
#if defined(__CUDA_ARCH__)
  const uint32_t i01 = __byte_perm(ids, 0u, 0x4140), i23 = __byte_perm(ids, 0u, 0x4342);
#else
  const uint32_t i01 = (ids & 0xFFu) | (ids & 0xFF00u) << 8, i23 = (ids >> 16 & 0xFFu) | (ids >> 24) << 16;
#endif
  const uint32_t o01 = i01 * rb + m01, o23 = i23 * rb + m23;
  off[0] = o01 & 0xFFFFu;
  off[1] = o01 >> 16;
  off[2] = o23 & 0xFFFFu;
  off[3] = o23 >> 16;
}

/// The arrays a PoissonIsingRule reads, on one side (host or device), each row-major where it is per site.
/// Null where the rule does not read it (see each field).
struct PoissonIsingArrays {
  const float* lam_row = nullptr;  ///< LambdaField::row (H); separable maps
  const float* lam_col = nullptr;  ///< LambdaField::col (W); separable maps
  const float* lam_site = nullptr; ///< LambdaField::site (W × H); Site only
  const uint8_t* xmax = nullptr;   ///< x_max per site
  const float* weights = nullptr;  ///< PoissonIsingTables::weights
  const float* windows = nullptr;  ///< PoissonIsingTables::windows (Window only)
  const uint8_t* site_ids = nullptr; ///< poisson_ising_site_ids (the strip kernels' strip_sites only)
  /// lam_col split by parity like site_ids (strip_sites only, separable maps): float (2g + p) · 4 + j is
  /// lam_col[8g + p + 2j] (poisson_ising_split_columns).
  const float* lam_col_split = nullptr;
};

/// One site update rule over device or host arrays (a plain view: the CPU reference and the kernels of
/// sched/lattice/checkerboard_sweep.h take it as their template parameter). NX: the draw's unrolling
/// (7 when X ≤ 6, kPoissonIsingFastTerms when X = 7, else kPoissonIsingMaxTerms); every NX > X gives the
/// same bits. Site: λ per site from lam_site (a map that is not separable) instead of lam_row · lam_col.
/// Window: the kernels' draw4 tries poisson_ising_draw_window first and runs the full draw only where it
/// returns −1 (the same bits: the window draw returns the full draw's answer or nothing).
/// make_poisson_ising_rule builds one.
template <int NX, bool Site = false, bool Window = false>
struct PoissonIsingRule : PoissonIsingArrays {
  static constexpr int kTerms = NX;
  static constexpr bool kSite = Site;
  static constexpr bool kWindow = Window;
  int X = 0;                       ///< PoissonIsingTables::X
  int stride = 0;                  ///< PoissonIsingTables::s_stride()
  int width = 0;
  float gamma = 0.f;               ///< γ (for draw_direct)
  int rng_rounds = 10;             ///< Philox rounds of the sweeps' uniforms, 7 or 10 (base/philox.h)

  MV_HD MV_INLINE float lambda(int r, int c) const {
    if constexpr (Site) return lam_site[static_cast<size_t>(r) * width + c];
    else return mul_rn(lam_row[r], lam_col[c]);
  }
  MV_HD MV_INLINE const float* row(int xm, int k, int S) const {
    return weights + ((static_cast<uint32_t>(xm) * 5u + static_cast<uint32_t>(k)) * (4u * X + 1u) +
                      static_cast<uint32_t>(S)) * static_cast<uint32_t>(stride);
  }
  /// The new value of site (r, c) with k real neighbours summing to S, from uniform u.
  MV_HD MV_INLINE int draw(int r, int c, int S, int k, float u) const {
    const int xm = xmax[static_cast<size_t>(r) * width + c];
    return poisson_ising_draw<NX>(row(xm, k, S), lambda(r, c), xm, u);
  }
#if defined(__CUDACC__)
  /// draw() of the four sites c0 + 2j + p (j = 0 … 3) of row r (c0 a multiple of 8, width too), reading
  /// their x_max and λ factors (Site: their λ) with one 8-byte and two 16-byte loads. `coarse`: the sites'
  /// coarse uniforms (kPoissonIsingCoarseStep); fine(uf) fills uf[j] with their full uniforms, the draw's u.
  /// Window: the window draws decide from `coarse` and call fine only where one does not (rare); otherwise
  /// fine is called once.
  template <class Fine>
  __device__ __forceinline__ void draw4(int r, int c0, int p, const int* S, const int* k, const float* coarse,
                                        const Fine& fine, int* out) const {
    const size_t base = static_cast<size_t>(r) * width + c0;
    const uint2 xm8 = *reinterpret_cast<const uint2*>(xmax + base);
    const uint64_t xm64 = (static_cast<uint64_t>(xm8.y) << 32 | xm8.x) >> (8 * p);
    const float* lp = Site ? lam_site + base : lam_col + c0;
    const float4 ca = reinterpret_cast<const float4*>(lp)[0];
    const float4 cb = reinterpret_cast<const float4*>(lp)[1];
    const float col[4] = {p ? ca.y : ca.x, p ? ca.w : ca.z, p ? cb.y : cb.x, p ? cb.w : cb.z};
    const float lr = Site ? 1.f : lam_row[r];
    if constexpr (Window) {
      // The four window draws without a branch, then the full draw for those that did not decide (rare:
      // about 0.011 % of the sites, and 1.3 % of a warp's rows of 32 groups, at the benchmark's model,
      // docs/perf.md).
      uint32_t i[4];
      float lam[4];
      bool all = true;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t xm = static_cast<uint32_t>((xm64 >> (16 * j)) & 0xFFu);
        i[j] = (xm * 5u + static_cast<uint32_t>(k[j])) * (4u * X + 1u) + static_cast<uint32_t>(S[j]);
        lam[j] = Site ? col[j] : mul_rn(lr, col[j]);
        out[j] = poisson_ising_draw_window(windows + 4u * i[j], lam[j], add_rn(kPoissonIsingWindowBias, coarse[j]));
        all &= out[j] >= 0;
      }
      if (__builtin_expect(!all, 0)) {
        float u[4];
        fine(u);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (out[j] < 0)
            out[j] = poisson_ising_draw<NX>(weights + i[j] * static_cast<uint32_t>(stride), lam[j],
                                            static_cast<int>((xm64 >> (16 * j)) & 0xFFu), u[j]);
      }
    } else {
      float u[4];
      fine(u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int xm = static_cast<int>((xm64 >> (16 * j)) & 0xFFu);
        out[j] = poisson_ising_draw<NX>(row(xm, k[j], S[j]), Site ? col[j] : mul_rn(lr, col[j]), xm, u[j]);
      }
    }
  }
  /// The four sites c0 + P + 2j (j = 0 … 3) of row r, c0 = 8 · gi, for the strip kernels' draws: their byte offsets
  /// `off` into the window table (poisson_ising_strip_offsets, from the site ids: one 4-byte load) and their λ
  /// (lam_row · lam_col_split: one 16-byte load; Site: lam_site). s0, s1: the 8 columns' byte-wise neighbour sums
  /// (lattice_sums8 in sched/lattice/checkerboard_sweep.h). Returns the four site ids.
  template <int P>
  __device__ __forceinline__ uint32_t strip_sites(int r, int gi, uint32_t s0, uint32_t s1, float* lam,
                                                  uint32_t* off) const {
    // The site's index in 32 bits (a lattice holds at most 8192² sites): a strip's rows share the arithmetic.
    const uint32_t at = static_cast<uint32_t>(r) * static_cast<uint32_t>(width) + 8u * static_cast<uint32_t>(gi);
    const uint32_t ids = *reinterpret_cast<const uint32_t*>(site_ids + (at + 4u * P));
    if constexpr (Site) {
      const float4* lp = reinterpret_cast<const float4*>(lam_site + at);
      const float4 a = lp[0], b = lp[1];
      lam[0] = P ? a.y : a.x;
      lam[1] = P ? a.w : a.z;
      lam[2] = P ? b.y : b.x;
      lam[3] = P ? b.w : b.z;
    } else {
      const float lr = lam_row[r];
      const float4 c = reinterpret_cast<const float4*>(lam_col_split)[2 * gi + P];
      lam[0] = mul_rn(lr, c.x);
      lam[1] = mul_rn(lr, c.y);
      lam[2] = mul_rn(lr, c.z);
      lam[3] = mul_rn(lr, c.w);
    }
    poisson_ising_strip_offsets<P>(ids, s0, s1, X, off);
    return ids;
  }
  /// draw() of strip_sites' four sites c0 + P + 2j (j = 0 … 3) of row r, c0 = 8 · gi, from the window rows in `table`
  /// (PoissonIsingTables::windows staged in shared memory, at most kPoissonIsingStripTableBytes) at f[j] = 128 + their
  /// coarse uniforms (poisson_ising_window_uniform; kPoissonIsingCoarseStep): the window draws decide
  /// (poisson_ising_window_decide) or, rarely, the full draws from the global weights at the full uniforms that
  /// fine(uf) fills in. The same bits as draw() in the low byte of out[j] (the other bytes carry no meaning:
  /// lattice_merge4_byte0 in sched/lattice/checkerboard_sweep.h merges them).
  template <int P, class Fine>
  __device__ __forceinline__ void draw4_strip(const float4* table, int r, int gi, uint32_t s0, uint32_t s1,
                                              const float* f, const Fine& fine, int* out) const {
    float lam[4];
    uint32_t off[4];
    const uint32_t ids = strip_sites<P>(r, gi, s0, s1, lam, off);
    // The comparisons as sign bits (poisson_ising_window_decide_parts): bit 31 of `all` is set where all four
    // windows decide (eight words ANDed: four three-input operations).
    uint32_t c[4], tw[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float4 w = *reinterpret_cast<const float4*>(reinterpret_cast<const char*>(table) + off[j]);
      out[j] = static_cast<int>(poisson_ising_window_decide_parts(w.x, w.y, w.z, w.w, lam[j], f[j], c[j], tw[j]));
    }
    const uint32_t all = ((c[0] & tw[0]) & (c[1] & tw[1])) & ((c[2] & tw[2]) & (c[3] & tw[3]));
    if (__builtin_expect(static_cast<int32_t>(all) >= 0, 0)) {
      float u[4];
      fine(u);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (static_cast<int32_t>(c[j] & tw[j]) >= 0)
          out[j] = poisson_ising_draw<NX>(weights + (off[j] >> 4) * static_cast<uint32_t>(stride), lam[j],
                                          static_cast<int>(((ids >> (8 * j)) & 0xFFu) / 5u), u[j]);
    }
  }
#endif
  /// The same draw the document's way (poisson_ising_draw_direct): `n` the k real neighbours.
  MV_HD MV_INLINE int draw_direct(int r, int c, const int* n, int k, float u) const {
    return poisson_ising_draw_direct(n, k, lambda(r, c), xmax[static_cast<size_t>(r) * width + c], gamma, u);
  }
  /// The initial value of site (r, c) from uniform u: uniform on 0 … x_max.
  MV_HD MV_INLINE int initial(int r, int c, float u) const {
    const int xm = xmax[static_cast<size_t>(r) * width + c];
    const int x = static_cast<int>(mul_rn(u, static_cast<float>(xm + 1)));
    return x > xm ? xm : x;
  }
};

/// The rule of the model in `t` (X, γ, the row stride) on a lattice `width` sites wide, drawing with
/// Philox-`rng_rounds` (7 or 10), over `arrays` (host or device: the rule only reads through them).
template <int NX, bool Site = false, bool Window = false>
PoissonIsingRule<NX, Site, Window> make_poisson_ising_rule(const PoissonIsingArrays& arrays,
                                                           const PoissonIsingTables& t, int width, int rng_rounds) {
  PoissonIsingRule<NX, Site, Window> r;
  static_cast<PoissonIsingArrays&>(r) = arrays;
  r.X = t.X;
  r.stride = static_cast<int>(t.s_stride());
  r.width = width;
  r.gamma = static_cast<float>(t.gamma);
  r.rng_rounds = rng_rounds;
  return r;
}

}  // namespace mv
