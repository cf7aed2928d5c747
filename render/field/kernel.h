// Reconstruction kernels for continuous fields (Lehmann 2023 §2: Diderot's `img ⊛ ctmr`, `img ⊛ bspln3`).
// A field F = V ⊛ h is the sum over samples V[n] of h(x − n), separably in 3-D.
//
// Kernels (x in index units; all are even, so h(−x) = h(x)):
//   tent    radius 1, C0:  h(x) = 1 − |x|                                        |x| < 1
//   ctmr    radius 2, C1:  Catmull–Rom (Keys' cubic with a = −1/2), interpolating:
//                          h(x) = 3/2|x|³ − 5/2|x|² + 1                          |x| < 1
//                                 −1/2|x|³ + 5/2|x|² − 4|x| + 2                  1 ≤ |x| < 2
//   bspln3  radius 2, C2:  uniform cubic B-spline, approximating (not interpolating):
//                          h(x) = (4 − 6x² + 3|x|³)/6                            |x| < 1
//                                 (2 − |x|)³/6                                   1 ≤ |x| < 2
//
// Taps. For an index-space position x = n + f with n = ⌊x⌋ and f ∈ [0, 1), a kernel of radius R touches
// the 2R samples n + j, j = 1 − R … R; tap t = j + R − 1 (0 … 2R − 1) has weight w_t(f) = h(f − j).
// Its derivative weights are d/dx h(x − n − j) = h′(f − j) = dw_t/df, and likewise for the second.
// They are written below as the exact cubic (quadratic, linear) polynomials in f of each tap, so one
// evaluation costs a few fused multiply-adds per tap and no branches.
//
// Reproduction (what the tests check): every kernel sums to 1 for all f (partition of unity), so its
// derivative weights sum to 0. tent reproduces linear functions; ctmr reproduces quadratics exactly
// (value, gradient and Hessian); bspln3 reproduces linear functions exactly and a quadratic up to a
// constant: Σ_j h(f − j)(n + j)² = x² + 1/3 (the kernel's variance is 1/3), so a quadratic pᵀQp + … in
// index space comes back offset by trace(Q)/3 while its gradient and Hessian are exact.
//
// Derivative orders. tent's second derivative is zero everywhere (a Dirac comb at the knots, which the
// weights cannot express), so in 3-D a tent field's pure second partials are zero while its mixed ones
// (products of first-derivative weights) are the piecewise-constant ones of the trilinear interpolant:
// not a usable Hessian. A Hessian — and so curvature — needs ctmr or bspln3. ctmr is C1, so its
// second derivative is piecewise linear and jumps at integer positions; bspln3 is C2 (continuous
// Hessian, the usual choice for curvature, Kindlmann 2003).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "base/common.h"
#include "base/errors.h"

namespace mv {

enum class KernelKind { Tent, Ctmr, Bspln3 };

/// Support radius R in index units: the kernel is zero for |x| ≥ R and touches 2R samples per axis.
MV_HD constexpr int kernel_radius(KernelKind k) { return k == KernelKind::Tent ? 1 : 2; }
/// Largest support radius of any kernel (size of fixed tap arrays: 2·kMaxKernelRadius).
inline constexpr int kMaxKernelRadius = 2;
/// Highest derivative order the kernel represents (tent: 1, since its second derivative is zero).
MV_HD constexpr int kernel_max_derivative(KernelKind k) { return k == KernelKind::Tent ? 1 : 2; }

/// Per-kernel tap weights. `weights<D>(f, w)` fills the 2·kRadius weights of derivative order D
/// (0, 1 or 2) for the fractional position f ∈ [0, 1); tap t sits at sample ⌊x⌋ + t − kRadius + 1.
template <KernelKind K>
struct KernelTaps;

template <>
struct KernelTaps<KernelKind::Tent> {
  static constexpr int kRadius = 1;
  template <int D>
  MV_HD static void weights(float f, float* w) {
    if (D == 0) {
      w[0] = 1.f - f;
      w[1] = f;
    } else if (D == 1) {
      w[0] = -1.f;
      w[1] = 1.f;
    } else {
      w[0] = 0.f;
      w[1] = 0.f;
    }
  }
};

template <>
struct KernelTaps<KernelKind::Ctmr> {
  static constexpr int kRadius = 2;
  template <int D>
  MV_HD static void weights(float f, float* w) {
    if (D == 0) {  // h(f+1), h(f), h(f−1), h(f−2)
      w[0] = 0.5f * f * (f * (2.f - f) - 1.f);             // (−f³ + 2f² − f)/2
      w[1] = 0.5f * (f * f * (3.f * f - 5.f) + 2.f);       // (3f³ − 5f² + 2)/2
      w[2] = 0.5f * f * (f * (4.f - 3.f * f) + 1.f);       // (−3f³ + 4f² + f)/2
      w[3] = 0.5f * f * f * (f - 1.f);                     // (f³ − f²)/2
    } else if (D == 1) {
      w[0] = 0.5f * (f * (4.f - 3.f * f) - 1.f);           // (−3f² + 4f − 1)/2
      w[1] = 0.5f * f * (9.f * f - 10.f);                  // (9f² − 10f)/2
      w[2] = 0.5f * (f * (8.f - 9.f * f) + 1.f);           // (−9f² + 8f + 1)/2
      w[3] = 0.5f * f * (3.f * f - 2.f);                   // (3f² − 2f)/2
    } else {
      w[0] = 2.f - 3.f * f;
      w[1] = 9.f * f - 5.f;
      w[2] = 4.f - 9.f * f;
      w[3] = 3.f * f - 1.f;
    }
  }
};

template <>
struct KernelTaps<KernelKind::Bspln3> {
  static constexpr int kRadius = 2;
  template <int D>
  MV_HD static void weights(float f, float* w) {
    const float g = 1.f - f;
    if (D == 0) {
      w[0] = g * g * g * (1.f / 6.f);                              // (1 − f)³/6
      w[1] = (f * f * (3.f * f - 6.f) + 4.f) * (1.f / 6.f);        // (3f³ − 6f² + 4)/6
      w[2] = (f * (f * (3.f - 3.f * f) + 3.f) + 1.f) * (1.f / 6.f);  // (−3f³ + 3f² + 3f + 1)/6
      w[3] = f * f * f * (1.f / 6.f);                              // f³/6
    } else if (D == 1) {
      w[0] = -0.5f * g * g;                                        // −(1 − f)²/2
      w[1] = f * (1.5f * f - 2.f);                                 // (3f² − 4f)/2
      w[2] = 0.5f + f * (1.f - 1.5f * f);                          // (−3f² + 2f + 1)/2
      w[3] = 0.5f * f * f;                                         // f²/2
    } else {
      w[0] = g;
      w[1] = 3.f * f - 2.f;
      w[2] = 1.f - 3.f * f;
      w[3] = f;
    }
  }
};

/// Runtime dispatch of KernelTaps: fills kernel_radius(k)·2 weights of derivative order `deriv` (0…2).
MV_HD inline void kernel_weights(KernelKind k, int deriv, float f, float* w) {
  switch (k) {
    case KernelKind::Tent:
      deriv == 0 ? KernelTaps<KernelKind::Tent>::weights<0>(f, w)
                 : (deriv == 1 ? KernelTaps<KernelKind::Tent>::weights<1>(f, w)
                               : KernelTaps<KernelKind::Tent>::weights<2>(f, w));
      break;
    case KernelKind::Ctmr:
      deriv == 0 ? KernelTaps<KernelKind::Ctmr>::weights<0>(f, w)
                 : (deriv == 1 ? KernelTaps<KernelKind::Ctmr>::weights<1>(f, w)
                               : KernelTaps<KernelKind::Ctmr>::weights<2>(f, w));
      break;
    case KernelKind::Bspln3:
      deriv == 0 ? KernelTaps<KernelKind::Bspln3>::weights<0>(f, w)
                 : (deriv == 1 ? KernelTaps<KernelKind::Bspln3>::weights<1>(f, w)
                               : KernelTaps<KernelKind::Bspln3>::weights<2>(f, w));
      break;
  }
}

/// The kernel itself, h^(deriv)(x) for deriv 0…2, written piecewise from the definitions above
/// (independently of the tap polynomials, which the tests compare against it). Right-continuous: at a
/// knot (x ∈ {0, ±1, ±2} where a derivative jumps) the piece to the right of x is used, which is the
/// choice the taps make at f = 0 (tent's h′(0) = −1 and h′(−1) = +1; ctmr's h″(−2) = −1, h″(2) = 0).
MV_HD inline float kernel_eval(KernelKind k, float x, int deriv) {
  const float a = fabsf(x);
  const bool neg = x < 0.f;
  const float s = neg ? -1.f : 1.f;  // d|x|/dx (odd derivatives change sign with x)
  // "a lies left of knot b on the |x| axis, or on it": for x < 0 the piece right of x is the inner one.
  const bool in1 = neg ? a <= 1.f : a < 1.f;
  const bool in2 = neg ? a <= 2.f : a < 2.f;
  switch (k) {
    case KernelKind::Tent:
      if (!in1) return 0.f;
      return deriv == 0 ? 1.f - a : (deriv == 1 ? -s : 0.f);
    case KernelKind::Ctmr:
      if (in1) {
        if (deriv == 0) return 1.5f * a * a * a - 2.5f * a * a + 1.f;
        if (deriv == 1) return s * (4.5f * a * a - 5.f * a);
        return 9.f * a - 5.f;
      }
      if (in2) {
        if (deriv == 0) return -0.5f * a * a * a + 2.5f * a * a - 4.f * a + 2.f;
        if (deriv == 1) return s * (-1.5f * a * a + 5.f * a - 4.f);
        return -3.f * a + 5.f;
      }
      return 0.f;
    case KernelKind::Bspln3:
      if (in1) {
        if (deriv == 0) return (4.f - 6.f * a * a + 3.f * a * a * a) / 6.f;
        if (deriv == 1) return s * (1.5f * a * a - 2.f * a);
        return 3.f * a - 2.f;
      }
      if (in2) {
        const float b = 2.f - a;
        if (deriv == 0) return b * b * b / 6.f;
        if (deriv == 1) return -s * 0.5f * b * b;
        return b;
      }
      return 0.f;
  }
  return 0.f;
}

// ---- names for the GUI and the CLI (host only) ----

/// Diderot's names of the kernels, in KernelKind order (also the GUI's).
inline constexpr EnumNames<KernelKind, 3> kKernelNames{{"tent", "ctmr", "bspln3"}};

/// Diderot's name of the kernel: "tent", "ctmr", "bspln3".
inline const char* kernel_name(KernelKind k) { return kKernelNames(k); }

/// Every kernel, in GUI order.
inline std::vector<KernelKind> all_kernels() { return kKernelNames.values(); }

/// The kernel named `name` (exact, lower case); throws InputError("", field, "unknown kernel 'x'
/// (allowed: tent, ctmr, bspln3)") otherwise.
inline KernelKind parse_kernel(const std::string& name, const std::string& field = "kernel") {
  return kKernelNames.parse(name, field, "kernel");
}

}  // namespace mv
