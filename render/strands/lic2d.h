// The `lic2d` strand workload: line integral convolution (Cabral & Leedom 1993, Lehmann 2023's ref [4]) of
// a synthetic 2D vector field, Lehmann 2023 §4.1.1's benchmark "lic2d" (Fig 3.2: 572,220 strands, i.e. a
// 1020 × 561 image; Appendix A.9–A.16).
//
// Domain. Positions are in pixel (lattice) units: pixel (i, j), j = 0 the top row, starts at x = (i, j).
// The noise texture R is a width × height lattice of seeded white noise in [0, 1) (a hash of the seed and
// the node, so the workload holds no array and is the same on host and device), reconstructed with the
// tent kernel. As Diderot's `inside(x, R)` for a tent-reconstructed image (the kernel reads the nodes
// ⌊x⌋ and ⌊x⌋ + 1), a position is inside iff 0 ≤ x < width − 1 and 0 ≤ y < height − 1: the last pixel
// column and row lie outside the field.
//
// Flow (Lic2dFlow). Cells, the default, is the steady cellular (Taylor–Green) flow with stream function
//     ψ(x, y) = sin(a·x)·sin(b·y),  a = π·cells_x/(width − 1),  b = π·cells_y/(height − 1),
//     v = (∂ψ/∂y, −∂ψ/∂x) = (b·sin(a·x)·cos(b·y), −a·cos(a·x)·sin(b·y)):
// cells_x × cells_y counter-rotating vortices (centres of the cells), hyperbolic saddles where four cells
// meet (cells_x = 3, cells_y = 2: two saddles), and walls of the domain that are streamlines (v·n = 0), so
// a strand leaves only through rounding or the integrator's error at a corner. Circular, the tests' flow,
// is the rigid rotation v = (−(y − c_y), x − c_x) about the domain's centre c, whose streamlines are circles.
//
// One update is one midpoint-rule step along the normalised field,
//     x ← x + h·v̂(x + ½h·v̂(x)),   v̂ = v/|v| (0 where |v| = 0: a stagnation point holds the strand),
// then, if x is inside, the strand adds R(x) to its sum. It stabilises after `steps` updates, or at the
// update that leaves the domain (that update adds nothing). A strand whose pixel lies outside (the last
// column and row) stabilises at its first update, sum empty. Strands never die.
//
// Step statistics. The 1020 + 561 − 1 = 1580 pixels of the last column and row take 1 update. With
// steps = 10 and the Cells flow the other strands take 10, except the few that start on a wall or a cell
// boundary (a streamline through a stagnation point on the domain's edge) within 10·h of the left or top
// edge: the normalised field carries them through that point and out (10 strands at 1020 × 561,
// tests/test_lic2d.cpp). Without those, μ = 10 − 9·1580/572220 = 9.9752 and σ = 9·√(p(1 − p)) = 0.4723
// with p = 1580/572220; measured with them (megaview bench --workload lic2d, CPU): μ 9.975, σ 0.474,
// CV 0.048, Fig 3.2's values to the digits it prints. The step length h changes the image (streak length
// 10·h pixels), not these numbers.
//
// Image. The LIC value is the mean of the samples (start included), contrast-stretched about ½; it is
// tinted by the normalised vorticity ω/(a² + b²) = −ψ of the Cells flow (warm: counter-clockwise on screen,
// cool: clockwise) and left grey for Circular. Strands outside have the background colour (black).
//
// Agreement. The CPU strategies run the same host code without FMA clones (kCpuFma = false) and agree
// with sequential bit for bit. The GPU's sinf/cosf and FMA contraction differ from the host's in the last
// bits, so a GPU run agrees to a tolerance (app/session/strand_workloads.cu, lic2d_tolerance).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/common.h"
#include "render/math.h"
#include "render/strands/strand.h"

namespace mv {

struct StrandViewParams;  // the viewer's view (app/session/strand_view_params.h); this workload has none

/// The analytic flow a lic2d instance convolves along (see the file comment).
enum class Lic2dFlow : uint32_t {
  Cells = 0,     ///< cellular Taylor–Green flow: vortices and saddles, walls are streamlines
  Circular = 1,  ///< rigid rotation about the domain's centre: concentric circles
};

struct Lic2dStrands {
  /// kCpuFma = false: the CPU strategies run the plain host code, bit for bit equal to sequential.
  static constexpr bool kCpuFma = false;

  struct State {
    float x, y;       ///< position, pixel units
    float sum;        ///< Σ R over the samples taken
    uint32_t samples; ///< samples in `sum` (0 for a pixel outside)
    uint32_t steps;   ///< updates taken
  };

  uint32_t width = 1020, height = 561;  ///< strands (pixels) = noise lattice nodes, each in [2, 16384]
  Lic2dFlow flow = Lic2dFlow::Cells;
  uint32_t cells_x = 3, cells_y = 2;    ///< Cells: vortex cells across and down, each ≥ 1
  float h = 1.5f;                       ///< step length in pixels, (0, 64]
  uint32_t steps = 10;                  ///< updates of a strand that stays inside, ≥ 1
  uint32_t seed = 0x2c9277b5u;          ///< noise texture seed
  float contrast = 3.f;                 ///< LIC value v ↦ ½ + contrast·(v − ½), clamped to [0, 1]

  /// Throws InputError("lic2d", "<field>", "<value> is out of range …") for width or height outside
  /// [2, 16384], cells_x or cells_y outside [1, 64], h outside (0, 64], steps outside [1, 100000] or
  /// contrast outside (0, 100].
  void validate() const;

  MV_HD uint32_t num_strands() const { return width * height; }
  MV_HD uint32_t pixel(uint32_t index) const { return index; }

  /// Diderot's inside(x, R) for the tent-reconstructed width × height texture.
  MV_HD bool inside(float x, float y) const {
    return x >= 0.f && y >= 0.f && x < static_cast<float>(width - 1) && y < static_cast<float>(height - 1);
  }

  /// The noise lattice value at node (i, j), in [0, 1): a 32-bit integer hash (Wang/Jenkins style mixing)
  /// of the seed and the node.
  MV_HD float noise_node(uint32_t i, uint32_t j) const {
    uint32_t k = seed ^ (i * 0x9E3779B1u) ^ (j * 0x85EBCA77u);
    k ^= k >> 16;
    k *= 0x7FEB352Du;
    k ^= k >> 15;
    k *= 0x846CA68Bu;
    k ^= k >> 16;
    return static_cast<float>(k >> 8) * (1.f / 16777216.f);
  }

  /// R(x): tent (bilinear) reconstruction of the noise lattice; x must be inside.
  MV_HD float noise(float x, float y) const {
    const float fx = floorf(x), fy = floorf(y);
    const uint32_t i = static_cast<uint32_t>(fx), j = static_cast<uint32_t>(fy);
    const float tx = x - fx, ty = y - fy;
    const float n00 = noise_node(i, j), n10 = noise_node(i + 1, j);
    const float n01 = noise_node(i, j + 1), n11 = noise_node(i + 1, j + 1);
    const float lo = n00 + (n10 - n00) * tx, hi = n01 + (n11 - n01) * tx;
    return lo + (hi - lo) * ty;
  }

  /// Cells: the wave numbers a, b of ψ = sin(a·x)·sin(b·y) (radians per pixel).
  MV_HD float wave_x() const { return 3.14159265f * static_cast<float>(cells_x) / static_cast<float>(width - 1); }
  MV_HD float wave_y() const { return 3.14159265f * static_cast<float>(cells_y) / static_cast<float>(height - 1); }

  /// The field v at (x, y) (pixels per unit time; only its direction matters).
  MV_HD void field(float x, float y, float& vx, float& vy) const {
    if (flow == Lic2dFlow::Circular) {
      vx = -(y - 0.5f * static_cast<float>(height - 1));
      vy = x - 0.5f * static_cast<float>(width - 1);
      return;
    }
    const float a = wave_x(), b = wave_y();
    vx = b * sinf(a * x) * cosf(b * y);
    vy = -a * cosf(a * x) * sinf(b * y);
  }

  /// v̂ = v/|v| at (x, y), or 0 where |v| = 0.
  MV_HD void direction(float x, float y, float& dx, float& dy) const {
    float vx, vy;
    field(x, y, vx, vy);
    const float len = sqrtf(vx * vx + vy * vy);
    if (!(len > 0.f)) {
      dx = dy = 0.f;
      return;
    }
    dx = vx / len;
    dy = vy / len;
  }

  /// Normalised vorticity in [−1, 1]: −ψ for Cells (ω = −(a² + b²)·ψ), 0 for Circular.
  MV_HD float vorticity(float x, float y) const {
    if (flow == Lic2dFlow::Circular) return 0.f;
    return -sinf(wave_x() * x) * sinf(wave_y() * y);
  }

  MV_HD State init(uint32_t index) const {
    State s;
    s.x = static_cast<float>(index % width);
    s.y = static_cast<float>(index / width);
    s.steps = 0;
    const bool in = inside(s.x, s.y);
    s.sum = in ? noise(s.x, s.y) : 0.f;
    s.samples = in ? 1u : 0u;
    return s;
  }

  /// One midpoint-rule step and one sample (see the file comment).
  MV_HD WorkStatus update(State& s) const {
    ++s.steps;
    if (!inside(s.x, s.y)) return WorkStatus::Stable;  // a pixel of the last column or row
    float dx, dy;
    direction(s.x, s.y, dx, dy);
    float mx, my;
    direction(s.x + 0.5f * h * dx, s.y + 0.5f * h * dy, mx, my);
    const float nx = s.x + h * mx, ny = s.y + h * my;
    if (!inside(nx, ny)) return WorkStatus::Stable;  // left the field: keep the position, add nothing
    s.x = nx;
    s.y = ny;
    s.sum += noise(nx, ny);
    ++s.samples;
    return s.steps >= steps ? WorkStatus::Stable : WorkStatus::Active;
  }

  /// The LIC value: mean of the samples, contrast-stretched about ½ and clamped; 0 without samples.
  MV_HD float lic_value(const State& s) const {
    if (s.samples == 0) return 0.f;
    const float v = 0.5f + contrast * (s.sum / static_cast<float>(s.samples) - 0.5f);
    return fminf(fmaxf(v, 0.f), 1.f);
  }

  /// Grey LIC value tinted by the vorticity at the strand's final position (see the file comment).
  MV_HD Vec3 color(const State& s, WorkStatus) const {
    const float g = lic_value(s);
    if (s.samples == 0) return Vec3{0.f};
    const float w = vorticity(s.x, s.y);
    const float t = fabsf(w) * 0.6f;
    const Vec3 tint = w >= 0.f ? Vec3{1.f, 0.55f, 0.25f} : Vec3{0.3f, 0.6f, 1.f};
    const Vec3 mix = Vec3{1.f} * (1.f - t) + tint * t;
    return mix * g;
  }
};

/// The workload at width × height with the defaults above (the registry's factory: the view is fixed and the
/// workload holds no data, so the side does not matter). Throws InputError("lic2d", "width" or "height", …)
/// for a side outside [2, 16384] (Lic2dStrands::validate).
Lic2dStrands lic2d_workload(uint32_t width, uint32_t height, Side, const StrandViewParams&);

}  // namespace mv
