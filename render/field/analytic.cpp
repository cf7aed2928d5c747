// Analytic functions and sampled volumes of render/field/analytic.h.
#include "render/field/analytic.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "base/errors.h"

namespace mv {
namespace {

struct D3 {
  double x = 0, y = 0, z = 0;
};
D3 d3(Vec3 v) { return {v.x, v.y, v.z}; }
D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
D3 operator*(D3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
double dotd(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
D3 crossd(D3 a, D3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double lend(D3 a) { return std::sqrt(dotd(a, a)); }
Vec3 to_f(D3 a) { return {static_cast<float>(a.x), static_cast<float>(a.y), static_cast<float>(a.z)}; }
double comp(D3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }

/// Σ_t w_t v_t v_tᵀ plus `iso`·I, as a float Sym3.
Sym3 sym(double iso, double w1, D3 v1, double w2 = 0, D3 v2 = {}) {
  double m[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      m[i][j] = (i == j ? iso : 0.0) + w1 * comp(v1, i) * comp(v1, j) + w2 * comp(v2, i) * comp(v2, j);
  Sym3 s;
  s.xx = static_cast<float>(m[0][0]);
  s.xy = static_cast<float>(m[0][1]);
  s.xz = static_cast<float>(m[0][2]);
  s.yy = static_cast<float>(m[1][1]);
  s.yz = static_cast<float>(m[1][2]);
  s.zz = static_cast<float>(m[2][2]);
  return s;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0, double e = 0, double g = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d, e, g);
  return buf;
}

/// Torus geometry at x: distance s to the core circle, u = (x − γ)/s, radial unit e_ρ, tangent e_φ,
/// distance ρ_a from the axis. False on the axis or the core circle.
struct TorusFrame {
  double s = 0, rho = 0;
  D3 u, e_rho, e_phi;
};
bool torus_frame(const TorusDistance& t, D3 x, TorusFrame& fr) {
  D3 a = d3(t.axis);
  const double al = lend(a);
  a = al > 0 ? a * (1.0 / al) : D3{0, 0, 1};
  const D3 q = x - d3(t.centre);
  const double h = dotd(q, a);
  const D3 radial = q - a * h;
  fr.rho = lend(radial);
  const double dr = fr.rho - t.major;
  fr.s = std::sqrt(dr * dr + h * h);
  if (!(fr.rho > 0) || !(fr.s > 0)) return false;
  fr.e_rho = radial * (1.0 / fr.rho);
  fr.e_phi = crossd(a, fr.e_rho);
  const D3 v = {fr.e_rho.x * dr + a.x * h, fr.e_rho.y * dr + a.y * h, fr.e_rho.z * dr + a.z * h};
  fr.u = v * (1.0 / fr.s);
  return true;
}

}  // namespace

// ---- sphere ----

double SphereDistance::value(double x, double y, double z) const {
  return lend(D3{x, y, z} - d3(centre)) - radius;
}

FieldSample SphereDistance::eval(Vec3 world) const {
  const D3 q = d3(world) - d3(centre);
  const double rho = lend(q);
  FieldSample s;
  s.value = static_cast<float>(rho - radius);
  if (!(rho > 0)) return s;
  const D3 n = q * (1.0 / rho);
  s.gradient = to_f(n);
  s.hessian = sym(1.0 / rho, -1.0 / rho, n);
  return s;
}

std::string SphereDistance::describe() const {
  return fmt("sphere distance |x - (%g, %g, %g)| - %g", centre.x, centre.y, centre.z, radius);
}

// ---- torus ----

double TorusDistance::value(double x, double y, double z) const {
  D3 a = d3(axis);
  const double al = lend(a);
  a = al > 0 ? a * (1.0 / al) : D3{0, 0, 1};
  const D3 q = D3{x, y, z} - d3(centre);
  const double h = dotd(q, a);
  const double dr = lend(q - a * h) - major;
  return std::sqrt(dr * dr + h * h) - minor;
}

FieldSample TorusDistance::eval(Vec3 world) const {
  FieldSample s;
  s.value = static_cast<float>(value(world.x, world.y, world.z));
  TorusFrame fr;
  if (!torus_frame(*this, d3(world), fr)) return s;
  s.gradient = to_f(fr.u);
  // (I − u uᵀ − e_φ e_φᵀ)/s + k_par e_φ e_φᵀ
  const double k_par = dotd(fr.u, fr.e_rho) / fr.rho;
  s.hessian = sym(1.0 / fr.s, -1.0 / fr.s, fr.u, k_par - 1.0 / fr.s, fr.e_phi);
  return s;
}

std::string TorusDistance::describe() const {
  return fmt("torus distance, centre (%g, %g, %g), R %g, r %g", centre.x, centre.y, centre.z, major, minor) +
         fmt(", axis (%g, %g, %g)", axis.x, axis.y, axis.z);
}

// ---- quadratic ----

double Quadratic::value(double x, double y, double z) const {
  const double qx = Q.xx * x + Q.xy * y + Q.xz * z;
  const double qy = Q.xy * x + Q.yy * y + Q.yz * z;
  const double qz = Q.xz * x + Q.yz * y + Q.zz * z;
  return x * qx + y * qy + z * qz + b.x * x + b.y * y + b.z * z + c;
}

FieldSample Quadratic::eval(Vec3 world) const {
  const double x = world.x, y = world.y, z = world.z;
  FieldSample s;
  s.value = static_cast<float>(value(x, y, z));
  s.gradient = {static_cast<float>(2.0 * (Q.xx * x + Q.xy * y + Q.xz * z) + b.x),
                static_cast<float>(2.0 * (Q.xy * x + Q.yy * y + Q.yz * z) + b.y),
                static_cast<float>(2.0 * (Q.xz * x + Q.yz * y + Q.zz * z) + b.z)};
  s.hessian.xx = 2.f * Q.xx;
  s.hessian.xy = 2.f * Q.xy;
  s.hessian.xz = 2.f * Q.xz;
  s.hessian.yy = 2.f * Q.yy;
  s.hessian.yz = 2.f * Q.yz;
  s.hessian.zz = 2.f * Q.zz;
  return s;
}

std::string Quadratic::describe() const {
  return fmt("quadratic Q = [%g %g %g; . %g %g; . . ", Q.xx, Q.xy, Q.xz, Q.yy, Q.yz) +
         fmt("%g], b = (%g, %g, %g), c = %g", Q.zz, b.x, b.y, b.z, c);
}

// ---- grids ----

Affine3 grid_transform(Vec3 spacing, Vec3 origin, Vec3 axis, float angle_rad) {
  // Rodrigues: R = cos θ I + sin θ [k]× + (1 − cos θ) k kᵀ.
  D3 k = d3(axis);
  const double kl = lend(k);
  k = kl > 0 ? k * (1.0 / kl) : D3{0, 0, 1};
  const double c = std::cos(static_cast<double>(angle_rad)), s = std::sin(static_cast<double>(angle_rad));
  const double K[3] = {k.x, k.y, k.z};
  const double cross[3][3] = {{0, -k.z, k.y}, {k.z, 0, -k.x}, {-k.y, k.x, 0}};
  const double sp[3] = {spacing.x, spacing.y, spacing.z};
  Affine3 a;
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) {
      const double R = (r == col ? c : 0.0) + s * cross[r][col] + (1.0 - c) * K[r] * K[col];
      a.m[3 * r + col] = static_cast<float>(R * sp[col]);
    }
  a.origin = origin;
  return a;
}

Affine3 centred_grid(int nx, int ny, int nz, Vec3 spacing, Vec3 centre, Vec3 axis, float angle_rad) {
  Affine3 a = grid_transform(spacing, Vec3{0.f}, axis, angle_rad);
  const Vec3 mid = a.linear({0.5f * (nx - 1), 0.5f * (ny - 1), 0.5f * (nz - 1)});
  a.origin = centre - mid;
  return a;
}

template <class F>
Volume sample_volume(const F& f, int nx, int ny, int nz, const Affine3& index_to_world) {
  if (nx <= 0 || ny <= 0 || nz <= 0)
    throw InputError("analytic", "dimensions",
                     "non-positive size " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz));
  Volume v;
  v.source = f.describe() + " on a " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " grid";
  v.nx = nx;
  v.ny = ny;
  v.nz = nz;
  v.index_to_world = index_to_world;
  v.data.resize(static_cast<size_t>(nx) * ny * nz);
  const float* m = index_to_world.m;
  const Vec3 o = index_to_world.origin;
  size_t at = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double wx = double(m[0]) * i + double(m[1]) * j + double(m[2]) * k + o.x;
        const double wy = double(m[3]) * i + double(m[4]) * j + double(m[5]) * k + o.y;
        const double wz = double(m[6]) * i + double(m[7]) * j + double(m[8]) * k + o.z;
        v.data[at++] = static_cast<float>(f.value(wx, wy, wz));
      }
  return v;
}

template Volume sample_volume<SphereDistance>(const SphereDistance&, int, int, int, const Affine3&);
template Volume sample_volume<TorusDistance>(const TorusDistance&, int, int, int, const Affine3&);
template Volume sample_volume<Quadratic>(const Quadratic&, int, int, int, const Affine3&);

}  // namespace mv
