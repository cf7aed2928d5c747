// The `mandelbrot` strand workload (Lehmann 2023, benchmark "mandelbrot", Fig 3.2 and Appendix A.3).
//
// One strand per pixel of a 2000 × 2000 image (4 M strands); one update is one iteration
// z ← z² + c. A strand stabilizes when |z|² > 4 (escaped) or after `max_iterations` (taken as inside).
// Region and cap were chosen so the step statistics match the paper's (μ = 284.571, σ = 679.472,
// CV = 2.388): the view [−2.1, 1.1] × [−1.6, 1.6] with a cap of 1900 iterations gives, over all 4 M
// strands, μ = 284.559, σ = 671.979, CV = 2.3615 (measured with this code's arithmetic, the fused form below).
// The large CV comes from ≈ 14.7 % of the strands running to the cap while the rest escape early.
//
// Bitwise agreement between CPU and GPU without giving up FMA on the GPU: every multiply that feeds an
// add is written as an explicit fmaf (one IEEE-754 fused multiply-add with a single rounding, the same
// result from glibc's fmaf and from the GPU's FFMA), and the one multiply that stands alone goes through
// mul_rn (on the device __fmul_rn, which nvcc never contracts). No `a * b + c` is left for a compiler
// to contract differently on the two sides, so any flags (--fmad=true, the default, included) give the
// same bits. color() uses log2f/cosf, which differ between the CPU and GPU libraries; the strand
// strategies therefore colour strands on the host from the final states (sched/strand_image.h).
#pragma once

#include <cmath>

#include "base/float_rn.h"
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
    const float u = (static_cast<float>(i) + 0.5f) / static_cast<float>(p.width);
    const float v = (static_cast<float>(j) + 0.5f) / static_cast<float>(p.height);
    State s;
    s.cx = fmaf(p.x1 - p.x0, u, p.x0);   // x0 + (x1 − x0)·u, one rounding
    s.cy = fmaf(p.y0 - p.y1, v, p.y1);   // y1 − (y1 − y0)·v
    s.zx = s.zy = 0.f;
    s.iterations = 0;
    return s;
  }

  /// One iteration z ← z² + c; Stable once |z|² > 4 or at the cap.
  MV_HD WorkStatus update(State& s) const {
    const float zx = s.zx, zy = s.zy;
    s.zx = fmaf(zx, zx, fmaf(-zy, zy, s.cx));  // zx² − zy² + cx
    s.zy = fmaf(zx + zx, zy, s.cy);            // 2·zx·zy + cy (zx + zx is exact)
    ++s.iterations;
    if (norm2(s.zx, s.zy) > 4.f || s.iterations >= p.max_iterations) return WorkStatus::Stable;
    return WorkStatus::Active;
  }

  /// |z|² = x² + y², rounded the same way on host and device (base/float_rn.h).
  MV_HD static float norm2(float x, float y) { return fmaf(x, x, mul_rn(y, y)); }

  /// Smooth escape-time colouring: ν = n + 1 − log2(log2 |z|) through a cyclic palette; inside: black.
  MV_HD Vec3 color(const State& s, WorkStatus) const {
    const float r2 = norm2(s.zx, s.zy);
    if (r2 <= 4.f) return Vec3{0.f};
    const float nu = static_cast<float>(s.iterations) + 1.f - log2f(0.5f * log2f(r2));
    const float t = 0.08f * nu;
    return Vec3{0.5f + 0.5f * cosf(6.2831853f * (t + 0.00f)), 0.5f + 0.5f * cosf(6.2831853f * (t + 0.15f)),
                0.5f + 0.5f * cosf(6.2831853f * (t + 0.30f))};
  }
};

}  // namespace mv
