// Probing a continuous field F = V ⊛ h (a volume convolved with a reconstruction kernel, kernel.h): its
// value, gradient and Hessian at a world position (Lehmann 2023 §2: Diderot's `F(x)`, `∇F(x)`,
// `∇⊗∇F(x)` and `inside(x, F)`). Host and device code; one call per ray step on the GPU, so: no heap, no
// recursion, fixed-size tap arrays and loops (the radius is a template parameter).
//
// World ↔ index. The volume maps index to world by w = M·p + t (VolumeView::index_to_world); probing
// uses p = A·(w − t) with A = M⁻¹ (VolumeView::world_to_index, its linear part). With f(p) the field in
// index space and F(w) = f(A(w − t)), the chain rule gives
//     ∇F(w)   = Aᵀ ∇f(p)          (gradient: a covector, so it transforms with Aᵀ = M⁻ᵀ, not with M)
//     ∇²F(w)  = Aᵀ ∇²f(p) A       (Hessian: a congruence; stays symmetric)
// so an anisotropic or sheared/rotated grid gives world-space derivatives that are right in world units
// (the tests check them against finite differences taken along world axes).
//
// Separable evaluation. With per-axis weights wₐ⁽ᵈ⁾ (derivative order d of axis a), every partial
// derivative is Σ_{k,j,i} wz⁽ᶜ⁾[k] wy⁽ᵇ⁾[j] wx⁽ᵃ⁾[i] V[k,j,i] with a + b + c ≤ 2; the sums are contracted
// one axis at a time (x rows first, the fastest in memory), 2R·2R rows of 2R taps each.
//
// Borders. `inside` is Diderot's test: every tap of every axis lies in the grid. `probe` never reads
// outside the data: tap indices are clamped to the grid (border replication) and non-finite positions
// are clamped too, but values so reconstructed near or beyond the border are not the field's; test
// `inside` first where it matters.
#pragma once

#include <cmath>

#include "render/field/kernel.h"
#include "render/field/volume.h"
#include "render/math.h"

namespace mv {

/// A symmetric 3×3 matrix (Hessians), upper triangle stored.
struct Sym3 {
  float xx = 0.f, xy = 0.f, xz = 0.f, yy = 0.f, yz = 0.f, zz = 0.f;
  MV_HD float operator()(int r, int c) const {
    if (r > c) { const int t = r; r = c; c = t; }
    if (r == 0) return c == 0 ? xx : (c == 1 ? xy : xz);
    if (r == 1) return c == 1 ? yy : yz;
    return zz;
  }
  MV_HD float trace() const { return xx + yy + zz; }
  MV_HD Vec3 operator*(Vec3 v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
};

/// Value, world-space gradient and world-space Hessian of a field at one point. Entries beyond the
/// requested derivative order are zero.
struct FieldSample {
  float value = 0.f;
  Vec3 gradient{0.f};
  Sym3 hessian;
};

/// Aᵀv for the linear part A of `a`.
MV_HD MV_INLINE Vec3 linear_transpose(const Affine3& a, Vec3 v) {
  const float* m = a.m;
  return {m[0] * v.x + m[3] * v.y + m[6] * v.z, m[1] * v.x + m[4] * v.y + m[7] * v.z,
          m[2] * v.x + m[5] * v.y + m[8] * v.z};
}

/// AᵀHA for the linear part A of `a` (the Hessian's change of variables).
MV_HD MV_INLINE Sym3 congruence(const Affine3& a, const Sym3& h) {
  // Columns of A: c_r = (m[r], m[3+r], m[6+r]); (AᵀHA)_rs = c_rᵀ H c_s.
  const Vec3 c0{a.m[0], a.m[3], a.m[6]}, c1{a.m[1], a.m[4], a.m[7]}, c2{a.m[2], a.m[5], a.m[8]};
  const Vec3 h0 = h * c0, h1 = h * c1, h2 = h * c2;
  Sym3 r;
  r.xx = dot(c0, h0);
  r.xy = dot(c0, h1);
  r.xz = dot(c0, h2);
  r.yy = dot(c1, h1);
  r.yz = dot(c1, h2);
  r.zz = dot(c2, h2);
  return r;
}

/// Diderot's `inside(x, F)` in index space: for a kernel of radius R every axis has
/// R − 1 ≤ p < n − R, i.e. the taps ⌊p⌋ − R + 1 … ⌊p⌋ + R all lie in 0 … n − 1. False for NaN.
MV_HD inline bool inside_index(const VolumeView& v, KernelKind k, Vec3 p) {
  const float lo = static_cast<float>(kernel_radius(k) - 1);
  return p.x >= lo && p.x < static_cast<float>(v.nx - kernel_radius(k)) && p.y >= lo &&
         p.y < static_cast<float>(v.ny - kernel_radius(k)) && p.z >= lo &&
         p.z < static_cast<float>(v.nz - kernel_radius(k));
}

/// Diderot's `inside(x, F)` for a world position.
MV_HD inline bool inside(const VolumeView& v, KernelKind k, Vec3 world) {
  return inside_index(v, k, v.world_to_index.apply(world));
}

namespace field_detail {

/// One axis: clamped tap indices and weights of orders 0…D at index coordinate x on an axis of n
/// samples.
template <KernelKind K, int D>
MV_HD MV_INLINE void axis_taps(float x, int n, int* idx, float (*w)[2 * KernelTaps<K>::kRadius]) {
  constexpr int R = KernelTaps<K>::kRadius;
  // Clamp before floor so that huge or non-finite positions give a defined int (fmaxf(NaN, lo) = lo).
  x = fminf(fmaxf(x, -static_cast<float>(R)), static_cast<float>(n - 1 + R));
  const float fl = floorf(x);
  const int base = static_cast<int>(fl) - R + 1;
  const float f = x - fl;
  for (int t = 0; t < 2 * R; ++t) {
    const int i = base + t;
    idx[t] = i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
  }
  KernelTaps<K>::template weights<0>(f, w[0]);
  if constexpr (D >= 1) KernelTaps<K>::template weights<1>(f, w[1]);
  if constexpr (D >= 2) KernelTaps<K>::template weights<2>(f, w[2]);
}

#if defined(__CUDA_ARCH__)
#define MV_FIELD_UNROLL _Pragma("unroll")
#else
#define MV_FIELD_UNROLL
#endif

/// Value and index-space derivatives up to order D at index position p: the separable filter runs along x,
/// then y, then z, and each pass carries every partial of total order ≤ D to the next. Every loop has a
/// compile-time trip count and is unrolled on the GPU, so the partials stay in registers.
template <KernelKind K, int D>
MV_HD inline FieldSample probe_index(const VolumeView& v, Vec3 p) {
  constexpr int T = 2 * KernelTaps<K>::kRadius;
  int ix[T], iy[T], iz[T];
  float wx[D + 1][T], wy[D + 1][T], wz[D + 1][T];
  axis_taps<K, D>(p.x, v.nx, ix, wx);
  axis_taps<K, D>(p.y, v.ny, iy, wy);
  axis_taps<K, D>(p.z, v.nz, iz, wz);

  // s[a][b][c]: the partial derivative of order a in x, b in y, c in z (a + b + c ≤ D).
  float s[D + 1][D + 1][D + 1] = {};
  MV_FIELD_UNROLL
  for (int k = 0; k < T; ++k) {
    float sxy[D + 1][D + 1] = {};  // the x–y partials of slab k
    MV_FIELD_UNROLL
    for (int j = 0; j < T; ++j) {
      const float* row = v.data + (static_cast<size_t>(iz[k]) * v.ny + iy[j]) * v.nx;
      float sx[D + 1] = {};  // the x partials of row j
      MV_FIELD_UNROLL
      for (int i = 0; i < T; ++i) {
        const float sample = row[ix[i]];
        MV_FIELD_UNROLL
        for (int a = 0; a <= D; ++a) sx[a] += wx[a][i] * sample;
      }
      MV_FIELD_UNROLL
      for (int a = 0; a <= D; ++a) {
        MV_FIELD_UNROLL
        for (int b = 0; a + b <= D; ++b) sxy[a][b] += wy[b][j] * sx[a];
      }
    }
    MV_FIELD_UNROLL
    for (int a = 0; a <= D; ++a) {
      MV_FIELD_UNROLL
      for (int b = 0; a + b <= D; ++b) {
        MV_FIELD_UNROLL
        for (int c = 0; a + b + c <= D; ++c) s[a][b][c] += wz[c][k] * sxy[a][b];
      }
    }
  }
  FieldSample r;
  r.value = s[0][0][0];
  if constexpr (D >= 1) r.gradient = {s[1][0][0], s[0][1][0], s[0][0][1]};
  if constexpr (D >= 2) {
    r.hessian.xx = s[2][0][0];
    r.hessian.xy = s[1][1][0];
    r.hessian.xz = s[1][0][1];
    r.hessian.yy = s[0][2][0];
    r.hessian.yz = s[0][1][1];
    r.hessian.zz = s[0][0][2];
  }
  return r;
}

template <KernelKind K>
MV_HD MV_INLINE FieldSample probe_index_k(const VolumeView& v, Vec3 p, int derivatives) {
  if (derivatives <= 0) return probe_index<K, 0>(v, p);
  if (derivatives == 1) return probe_index<K, 1>(v, p);
  return probe_index<K, 2>(v, p);
}

}  // namespace field_detail

/// The field and its index-space derivatives (∂/∂p, orders ≤ `derivatives`, 0…2) at index position p.
MV_HD inline FieldSample probe_index(const VolumeView& v, KernelKind k, Vec3 p, int derivatives) {
  switch (k) {
    case KernelKind::Tent: return field_detail::probe_index_k<KernelKind::Tent>(v, p, derivatives);
    case KernelKind::Ctmr: return field_detail::probe_index_k<KernelKind::Ctmr>(v, p, derivatives);
    case KernelKind::Bspln3: return field_detail::probe_index_k<KernelKind::Bspln3>(v, p, derivatives);
  }
  return {};
}

/// The field at world position `world`, with its world-space gradient (derivatives ≥ 1) and Hessian
/// (derivatives ≥ 2): g_w = Aᵀ g_i, H_w = Aᵀ H_i A with A = world_to_index's linear part.
/// With KernelKind::Tent the Hessian is not usable: its index-space diagonal is zero and its mixed
/// partials are those of the trilinear interpolant (see kernel.h).
MV_HD inline FieldSample probe(const VolumeView& v, KernelKind k, Vec3 world, int derivatives) {
  FieldSample s = probe_index(v, k, v.world_to_index.apply(world), derivatives);
  if (derivatives >= 1) s.gradient = linear_transpose(v.world_to_index, s.gradient);
  if (derivatives >= 2) s.hessian = congruence(v.world_to_index, s.hessian);
  return s;
}

/// Compile-time-kernel variant of probe() for kernels specialised per kernel (no switch per sample).
template <KernelKind K, int D>
MV_HD inline FieldSample probe(const VolumeView& v, Vec3 world) {
  FieldSample s = field_detail::probe_index<K, D>(v, v.world_to_index.apply(world));
  if constexpr (D >= 1) s.gradient = linear_transpose(v.world_to_index, s.gradient);
  if constexpr (D >= 2) s.hessian = congruence(v.world_to_index, s.hessian);
  return s;
}

}  // namespace mv
