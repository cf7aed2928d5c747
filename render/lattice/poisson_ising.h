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
// per site at all: the γ factor exp(−γ(k x² − 2xS)), scaled so its largest value over x is 1 (no
// overflow for any γ ≥ 0), is tabulated once per γ for every (k, S, x) (PoissonIsingTables); the λ part
// λˣ/x! is the running product L(x+1) = L(x) · λ · (1/(x+1)). The draw is the inverse-CDF method on one
// uniform u ∈ [0, 1): the smallest x whose cumulative weight exceeds u · Z.
//
// Every product and sum is rounded separately (no fused multiply-add), so the CPU and the GPU compute
// the same bits from the same tables and the same uniform.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/common.h"

namespace mv {

/// Largest λ the model accepts: x_max(16) = 36, so the state fits uint8 and the tables stay small.
inline constexpr double kPoissonIsingMaxLambda = 16.0;

/// x_max(λ) = ⌈λ + 5 √λ⌉ (five standard deviations above the mean; the document's choice). λ > 0.
MV_HD inline int poisson_ising_xmax(float lambda) {
  return static_cast<int>(std::ceil(static_cast<double>(lambda) + 5.0 * std::sqrt(static_cast<double>(lambda))));
}

/// a · b and a + b rounded once each, on the CPU and on the GPU alike (nvcc would otherwise fuse them).
MV_HD MV_INLINE float pi_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
MV_HD MV_INLINE float pi_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

/// The heat-bath draw of one site. `row` = the γ weights g(x) for this site's (k, S), x = 0 … x_max;
/// `inv[x]` = 1/x (x ≥ 1); `lambda` > 0; `xm` = x_max(λ) ≥ 1; `u` ∈ [0, 1). Returns x ∈ [0, xm]. Where
/// every weight underflows (Z = 0: neighbours far above what λ allows) it returns xm.
MV_HD MV_INLINE int poisson_ising_draw(const float* row, const float* inv, float lambda, int xm, float u) {
  float L = 1.f, z = 0.f;
  for (int x = 0; x <= xm; ++x) {
    z = pi_add(z, pi_mul(L, row[x]));
    L = pi_mul(L, pi_mul(lambda, inv[x + 1]));
  }
  const float t = pi_mul(u, z);
  float c = 0.f;
  int r = 0;
  L = 1.f;
  for (int x = 0; x < xm; ++x) {
    c = pi_add(c, pi_mul(L, row[x]));
    r += c <= t ? 1 : 0;
    L = pi_mul(L, pi_mul(lambda, inv[x + 1]));
  }
  return r;
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
/// weights[((k · (4X+1)) + S) · (X+1) + x] = exp(−γ(k x² − 2xS) − m(k, S)), m = the largest exponent over
/// x ∈ [0, X]; k ∈ 0 … 4, S ∈ 0 … 4X. inv[x] = 1/x for x ∈ 1 … X+1 (inv[0] = 0).
struct PoissonIsingTables {
  int X = 0;
  double gamma = 0.0;
  std::vector<float> weights;
  std::vector<float> inv;
  size_t s_stride() const { return static_cast<size_t>(X) + 1; }
  size_t k_stride() const { return (4 * static_cast<size_t>(X) + 1) * s_stride(); }
  /// The γ weights of a site with k real neighbours summing to S.
  const float* row(int k, int S) const { return weights.data() + k * k_stride() + S * s_stride(); }
};
/// Throws InputError for γ < 0 or not finite ("--gamma") or X outside [1, 36].
PoissonIsingTables make_poisson_ising_tables(double gamma, int X);

/// The exact CPMF in double from its definition (for tests and the docs): P(x) for x = 0 … x_max(λ) given
/// the real neighbours' values. Throws InputError for λ ≤ 0 or γ < 0.
std::vector<double> poisson_ising_cpmf(const std::vector<int>& neighbours, double lambda, double gamma);

/// How λ varies over the lattice. Gaussian: λᵢⱼ = λ · exp(−r² / (2σ²)), r the distance in pixels from the
/// lattice centre ((W−1)/2, (H−1)/2), σ = decay_width · min(W, H) (the document's "Gaussian decay away
/// from the centre"; its width is not given there, the default 0.25 is ours).
enum class LambdaMap : uint8_t { Uniform, Gaussian };
inline const char* const kLambdaMapNames[] = {"uniform", "gaussian"};

/// The λ map (row-major, W × H, floats > 0) and x_max per site (uint8). Throws InputError for λ outside
/// (0, 16] or not a number ("--lambda"), decay_width ≤ 0 ("--decay-width"), or W, H < 2.
void make_lambda_map(LambdaMap map, double lambda, double decay_width, int width, int height,
                     std::vector<float>& lambda_out, std::vector<uint8_t>& xmax_out);

/// One site update rule over device or host arrays (a plain view: the CPU reference and the kernels of
/// sched/lattice/checkerboard_sweep.h take it as their template parameter).
struct PoissonIsingRule {
  const float* lambda = nullptr;   ///< λ per site, row-major
  const uint8_t* xmax = nullptr;   ///< x_max per site
  const float* weights = nullptr;  ///< PoissonIsingTables::weights
  const float* inv = nullptr;      ///< PoissonIsingTables::inv
  int X = 0;                       ///< PoissonIsingTables::X
  float gamma = 0.f;               ///< γ (for draw_direct)

  /// The new value of site `i` with k real neighbours summing to S, from uniform u.
  MV_HD MV_INLINE int draw(uint32_t i, int S, int k, float u) const {
    const float* row = weights + (static_cast<uint32_t>(k) * (4u * X + 1u) + static_cast<uint32_t>(S)) * (X + 1u);
    return poisson_ising_draw(row, inv, lambda[i], xmax[i], u);
  }
  /// The same draw the document's way (poisson_ising_draw_direct): `n` the k real neighbours.
  MV_HD MV_INLINE int draw_direct(uint32_t i, const int* n, int k, float u) const {
    return poisson_ising_draw_direct(n, k, lambda[i], xmax[i], gamma, u);
  }
  /// The initial value of site i from uniform u: uniform on 0 … x_max.
  MV_HD MV_INLINE int initial(uint32_t i, float u) const {
    const int xm = xmax[i];
    const int x = static_cast<int>(u * static_cast<float>(xm + 1));
    return x > xm ? xm : x;
  }
};

}  // namespace mv
