// Small 3-vector math for the path tracer, usable on host and device.
//
// Kept local rather than using GLM inside kernels: the arithmetic is the renderer's own inner loop and we
// want its exact form (fused ops, no hidden conversions) visible in one place. Colours are linear RGB
// radiance in arbitrary units (W·sr⁻¹·m⁻² scaled), positions in scene units.
#pragma once

#include <cmath>

#include "base/common.h"

namespace mv {

struct Vec3 {
  float x = 0.f, y = 0.f, z = 0.f;
  MV_HD constexpr Vec3() = default;
  MV_HD constexpr Vec3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}
  MV_HD constexpr explicit Vec3(float s) : x(s), y(s), z(s) {}
  MV_HD float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  MV_HD float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

MV_HD MV_INLINE Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
MV_HD MV_INLINE Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
MV_HD MV_INLINE Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
MV_HD MV_INLINE Vec3 operator*(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
MV_HD MV_INLINE Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
MV_HD MV_INLINE Vec3 operator*(float s, Vec3 a) { return a * s; }
MV_HD MV_INLINE Vec3 operator/(Vec3 a, float s) { return a * (1.f / s); }
MV_HD MV_INLINE Vec3& operator+=(Vec3& a, Vec3 b) { a = a + b; return a; }
MV_HD MV_INLINE Vec3& operator*=(Vec3& a, Vec3 b) { a = a * b; return a; }
MV_HD MV_INLINE Vec3& operator*=(Vec3& a, float s) { a = a * s; return a; }

MV_HD MV_INLINE float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
MV_HD MV_INLINE Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
MV_HD MV_INLINE float length(Vec3 a) { return sqrtf(dot(a, a)); }
MV_HD MV_INLINE Vec3 normalize(Vec3 a) { return a * (1.f / sqrtf(dot(a, a))); }
MV_HD MV_INLINE Vec3 vmin(Vec3 a, Vec3 b) { return {fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)}; }
MV_HD MV_INLINE Vec3 vmax(Vec3 a, Vec3 b) { return {fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)}; }
MV_HD MV_INLINE float max_component(Vec3 a) { return fmaxf(a.x, fmaxf(a.y, a.z)); }
/// Rec. 709 luminance of a linear RGB colour.
MV_HD MV_INLINE float luminance(Vec3 c) { return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z; }
MV_HD MV_INLINE Vec3 reflect(Vec3 d, Vec3 n) { return d - n * (2.f * dot(d, n)); }

/// Orthonormal basis around unit normal n (Duff et al. 2017, "Building an Orthonormal Basis, Revisited").
MV_HD MV_INLINE void onb(Vec3 n, Vec3& t, Vec3& b) {
  const float sign = copysignf(1.f, n.z);
  const float a = -1.f / (sign + n.z);
  const float bb = n.x * n.y * a;
  t = {1.f + sign * n.x * n.x * a, sign * bb, -sign * n.x};
  b = {bb, sign + n.y * n.y * a, -n.y};
}

inline constexpr float kPi = 3.14159265358979323846f;

}  // namespace mv
