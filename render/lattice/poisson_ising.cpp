// The Poisson-Ising model's tables, exact CPMF and λ maps (render/lattice/poisson_ising.h).
#include "render/lattice/poisson_ising.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/errors.h"

namespace mv {

namespace {
void check_gamma(double gamma) {
  if (!std::isfinite(gamma) || gamma < 0.0)
    throw InputError("", "--gamma", "must be a finite number ≥ 0, got " + std::to_string(gamma));
}
void check_lambda(double lambda) {
  if (!(lambda > 0.0) || !(lambda <= kPoissonIsingMaxLambda))
    throw InputError("", "--lambda", "must be a number in (0, 16], got " + std::to_string(lambda));
}

/// The λ whose λ + 5√λ = v (v ≥ 0).
double lambda_at(double v) {
  const double r = 0.5 * (-5.0 + std::sqrt(25.0 + 4.0 * v));
  return r * r;
}

/// v ≥ 0 rounded up to a multiple of `grid` (a power of two).
double round_up_to(double v, double grid) { return std::ceil(v / grid) * grid; }

/// PoissonIsingTables::windows from the weights (their float values taken as exact).
void build_windows(PoissonIsingTables& t) {
  const int X = t.X;
  const double slack = poisson_ising_window_slack(X);
  // Rows that never decide: 128 + A = +∞ (poisson_ising_window_decide_signs).
  const size_t rows = (static_cast<size_t>(X) + 1) * 5 * (4 * static_cast<size_t>(X) + 1);
  t.windows.assign(rows * 4, 0.f);
  for (size_t i = 0; i < rows; ++i) t.windows[4 * i + 2] = std::numeric_limits<float>::infinity();
  for (int xm = 1; xm <= X; ++xm) {
    // λ with this x_max, widened by 10⁻⁶ against the rounding of lambda_at: A falls with λ and B rises
    // (A = L / W and B = H / W are sums of λ^(y−x₀) / (g'(x₀) + λ g'(x₀+1)) with y < x₀ and y ≥ x₀ + 2), so
    // their largest values over the range are at its ends.
    const double lmin = xm == 1 ? 0.0 : lambda_at(xm - 1) * (1.0 - 1e-6), lmax = lambda_at(xm) * (1.0 + 1e-6);
    for (int k = 0; k <= 4; ++k)
      for (int S = 0; S <= 4 * X; ++S) {
        const float* g = t.row(xm, k, S);
        int best = -1;
        double best_a = 0.0, best_b = 0.0;
        for (int x0 = 0; x0 < xm; ++x0) {
          if (x0 > 0 && lmin == 0.0) break;  // L / W unbounded as λ → 0
          if (!(g[x0] > 0.f)) continue;      // the row is relative to g'(x₀)
          const double wmin = g[x0] + lmin * g[x0 + 1], wmax = g[x0] + lmax * g[x0 + 1];
          if (!(std::pow(lmin, x0) * wmin >= std::ldexp(1.0, -80))) continue;
          double L = 0.0, H = 0.0;
          for (int y = 0; y < x0; ++y) L += std::pow(lmin, y - x0) * g[y];
          for (int y = x0 + 2; y <= xm; ++y) H += std::pow(lmax, y - x0) * g[y];
          const double a = L / wmin * (1.0 + 1.0 / 1024) + slack;
          const double b = H / wmax * (1.0 + 1.0 / 1024) + slack + kPoissonIsingCoarseStep;
          if (a >= 0.5 || b >= 0.5) continue;
          if (best < 0 || a + b < best_a + best_b) {
            best = x0;
            best_a = a;
            best_b = b;
          }
        }
        if (best < 0) continue;  // never decides
        float* w = t.windows.data() + ((static_cast<size_t>(xm) * 5 + k) * (4 * static_cast<size_t>(X) + 1) + S) * 4;
        const uint32_t x0 = static_cast<uint32_t>(best);
        std::memcpy(&w[0], &x0, sizeof x0);
        w[1] = static_cast<float>(static_cast<double>(g[best + 1]) / g[best]);
        // A up to a multiple of 2⁻¹⁶ and B of 2⁻¹⁷ (both < ½): 128 + A (in [128, 128.5), where floats are 2⁻¹⁶ apart)
        // and B − 128 (in (−128, −127.5], 2⁻¹⁷ apart) are then exact floats.
        w[2] = static_cast<float>(kPoissonIsingWindowBias + round_up_to(best_a, kPoissonIsingCoarseStep));
        w[3] = static_cast<float>(round_up_to(best_b, kPoissonIsingCoarseStep / 2) - kPoissonIsingWindowBias);
      }
  }
}
}  // namespace

PoissonIsingTables make_poisson_ising_tables(double gamma, int X) {
  check_gamma(gamma);
  if (X < 1 || X > 36) throw InputError("", "x_max", "must be in [1, 36], got " + std::to_string(X));
  PoissonIsingTables t;
  t.X = X;
  t.gamma = gamma;
  t.weights.assign((static_cast<size_t>(X) + 1) * 5 * t.k_stride(), 0.f);
  for (int k = 0; k <= 4; ++k)
    for (int S = 0; S <= 4 * X; ++S) {
      double m = -1e300;
      for (int x = 0; x <= X; ++x) m = std::max(m, -gamma * (double(k) * x * x - 2.0 * x * S));
      for (int xm = 0; xm <= X; ++xm) {
        float* row = t.weights.data() + (static_cast<size_t>(xm) * 5 + k) * t.k_stride() + S * t.s_stride();
        for (int x = 0; x <= xm; ++x)
          row[x] = static_cast<float>(std::exp(-gamma * (double(k) * x * x - 2.0 * x * S) - m - std::lgamma(x + 1.0)));
      }
    }
  build_windows(t);
  return t;
}

std::vector<double> poisson_ising_cpmf(const std::vector<int>& neighbours, double lambda, double gamma) {
  check_lambda(lambda);
  check_gamma(gamma);
  const int xm = poisson_ising_xmax(static_cast<float>(lambda));
  std::vector<double> logw(xm + 1);
  for (int x = 0; x <= xm; ++x) {
    double loss = 0.0;
    for (int n : neighbours) loss += double(x - n) * (x - n);
    logw[x] = x * std::log(lambda) - std::lgamma(x + 1.0) - gamma * loss;
  }
  const double m = *std::max_element(logw.begin(), logw.end());
  double z = 0.0;
  std::vector<double> p(xm + 1);
  for (int x = 0; x <= xm; ++x) z += p[x] = std::exp(logw[x] - m);
  for (double& v : p) v /= z;
  return p;
}

std::vector<uint8_t> poisson_ising_site_ids(const std::vector<uint8_t>& xmax, int width, int height) {
  std::vector<uint8_t> ids(static_cast<size_t>(width) * height);
  const int gpr = width / 8;
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c) {
      const int k = 4 - (r == 0) - (r + 1 == height) - (c == 0) - (c + 1 == width);
      const int g = c / 8, p = c & 1, j = (c % 8) / 2;
      ids[(static_cast<size_t>(r) * gpr + g) * 8 + 4 * p + j] =
          static_cast<uint8_t>(xmax[static_cast<size_t>(r) * width + c] * 5 + k);
    }
  return ids;
}

std::vector<float> poisson_ising_split_columns(const std::vector<float>& col) {
  std::vector<float> out(col.size());
  for (size_t c = 0; c < col.size(); ++c) out[(c / 8 * 2 + (c & 1)) * 4 + (c % 8) / 2] = col[c];
  return out;
}

float LambdaField::max() const {
  if (!separable()) return *std::max_element(site.begin(), site.end());
  return *std::max_element(row.begin(), row.end()) * *std::max_element(col.begin(), col.end());
}

LambdaField make_lambda_map(LambdaMap map, double lambda, double decay_width, int width, int height,
                            const LambdaGrid* grid) {
  check_lambda(lambda);
  if (map == LambdaMap::Gaussian && (!std::isfinite(decay_width) || !(decay_width > 0.0)))
    throw InputError("", "--decay-width", "must be a finite number > 0, got " + std::to_string(decay_width));
  if (width < 2 || height < 2)
    throw InputError("", "--width", "the lattice must be at least 2 × 2, got " + std::to_string(width) + " × " +
                                        std::to_string(height));
  LambdaField f;
  f.width = width;
  f.height = height;
  f.xmax.resize(static_cast<size_t>(width) * height);
  if (map == LambdaMap::Image || map == LambdaMap::Volume) {
    if (!grid || grid->width < 1 || grid->height < 1 ||
        grid->v.size() != static_cast<size_t>(grid->width) * grid->height)
      throw InputError("", "--lambda-map", std::string(kLambdaMapNames[static_cast<int>(map)]) +
                                               " needs a grey image (--lambda-image or --volume)");
    // Bilinear between pixel centres, in double, rounded once to float.
    auto axis = [](int i, int n, int gn, int& i0, int& i1, double& t) {
      const double s = std::clamp((i + 0.5) * gn / n - 0.5, 0.0, gn - 1.0);
      i0 = static_cast<int>(std::floor(s));
      i1 = std::min(i0 + 1, gn - 1);
      t = s - i0;
    };
    f.site.resize(static_cast<size_t>(width) * height);
    for (int i = 0; i < height; ++i) {
      int y0, y1;
      double ty;
      axis(i, height, grid->height, y0, y1, ty);
      for (int j = 0; j < width; ++j) {
        int x0, x1;
        double tx;
        axis(j, width, grid->width, x0, x1, tx);
        auto g = [&](int y, int x) { return static_cast<double>(grid->v[static_cast<size_t>(y) * grid->width + x]); };
        const double v = (1 - ty) * ((1 - tx) * g(y0, x0) + tx * g(y0, x1)) + ty * ((1 - tx) * g(y1, x0) + tx * g(y1, x1));
        const size_t k = static_cast<size_t>(i) * width + j;
        f.site[k] = static_cast<float>(lambda * std::clamp(v, kLambdaGridFloor, 1.0));
        f.xmax[k] = static_cast<uint8_t>(std::max(1, poisson_ising_xmax(f.site[k])));
      }
    }
    return f;
  }
  f.row.resize(height);
  f.col.resize(width);
  const double sigma = decay_width * std::min(width, height);
  const double cx = 0.5 * (width - 1), cy = 0.5 * (height - 1);
  auto decay = [&](double d) { return map == LambdaMap::Gaussian ? std::exp(-d * d / (2.0 * sigma * sigma)) : 1.0; };
  // Far tails keep λ > 0 (x_max = 1, the site almost surely 0): each factor at least 1e-18.
  for (int i = 0; i < height; ++i) f.row[i] = static_cast<float>(std::max(lambda * decay(i - cy), 1e-18));
  for (int j = 0; j < width; ++j) f.col[j] = static_cast<float>(std::max(decay(j - cx), 1e-18));
  for (int i = 0; i < height; ++i)
    for (int j = 0; j < width; ++j)
      f.xmax[static_cast<size_t>(i) * width + j] = static_cast<uint8_t>(std::max(1, poisson_ising_xmax(f.at(i, j))));
  return f;
}

}  // namespace mv
