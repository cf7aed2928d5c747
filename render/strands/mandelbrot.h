// The `mandelbrot` strand workload (Lehmann 2023, benchmark "mandelbrot", Fig 3.2 and Appendix A.3).
//
// One strand per pixel of a 2000 × 2000 image (4 M strands); one update is one iteration
// z ← z² + c. A strand stabilizes when |z|² > 4 (escaped) or after `max_iterations` (taken as inside).
// Region and cap were chosen so the step statistics match the paper's (μ = 284.571, σ = 679.472,
// CV = 2.388): the view [−2.1, 1.1] × [−1.6, 1.6] with a cap of 1900 iterations gives, over all 4 M
// strands, μ = 284.56, σ = 671.97, CV = 2.361 (measured with this code's arithmetic, 2026-11-23).
// The large CV comes from ≈ 14.7 % of the strands running to the cap while the rest escape early.
//
// Bitwise agreement: the iteration uses separate multiplies and adds. The CPU does exactly these IEEE
// operations; a CUDA translation unit that runs this code must be compiled with --fmad=false so nvcc
// does not contract them into FMAs, and then GPU and CPU images and step counts agree bit for bit.
#pragma once

#include <cmath>

#include "render/math.h"
#include "render/strands/strand.h"

namespace mv {

struct MandelbrotParams {
  uint32_t width = 2000, height = 2000;  ///< strands (pixels), each in [1, 16384]
  float x0 = -2.1f, x1 = 1.1f;           ///< real range of the view
  float y0 = -1.6f, y1 = 1.6f;           ///< imaginary range (y0 at the bottom row)
  uint32_t max_iterations = 1900;        ///< cap, [1, 1e6]
};

struct MandelbrotStrands {
  struct State {
    float cx, cy, zx, zy;
    uint32_t iterations;
  };
  MandelbrotParams p;

  MV_HD uint32_t num_strands() const { return p.width * p.height; }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }

  MV_HD State init(uint32_t index) const {
    const uint32_t i = index % p.width, j = index / p.width;  // j = 0: top row
    State s;
    s.cx = p.x0 + (p.x1 - p.x0) * ((static_cast<float>(i) + 0.5f) / static_cast<float>(p.width));
    s.cy = p.y1 - (p.y1 - p.y0) * ((static_cast<float>(j) + 0.5f) / static_cast<float>(p.height));
    s.zx = s.zy = 0.f;
    s.iterations = 0;
    return s;
  }

  MV_HD StrandStatus update(State& s) const {
    const float xx = s.zx * s.zx, yy = s.zy * s.zy, xy = s.zx * s.zy;
    s.zx = (xx - yy) + s.cx;
    s.zy = (xy + xy) + s.cy;
    ++s.iterations;
    const float r2 = s.zx * s.zx + s.zy * s.zy;
    if (r2 > 4.f || s.iterations >= p.max_iterations) return StrandStatus::Stable;
    return StrandStatus::Active;
  }

  /// Smooth escape-time colouring: ν = n + 1 − log2(log2 |z|) through a cyclic palette; inside: black.
  MV_HD Vec3 color(const State& s, StrandStatus) const {
    const float r2 = s.zx * s.zx + s.zy * s.zy;
    if (r2 <= 4.f) return Vec3{0.f};
    const float nu = static_cast<float>(s.iterations) + 1.f - log2f(0.5f * log2f(r2));
    const float t = 0.08f * nu;
    return Vec3{0.5f + 0.5f * cosf(6.2831853f * (t + 0.00f)), 0.5f + 0.5f * cosf(6.2831853f * (t + 0.15f)),
                0.5f + 0.5f * cosf(6.2831853f * (t + 0.30f))};
  }
};

}  // namespace mv
