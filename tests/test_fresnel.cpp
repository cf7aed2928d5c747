// The dielectric Fresnel reflectance (render/pathtracer/integrator.h, fresnel_dielectric) against the Fresnel
// equations evaluated in double precision, and its physical identities.
#include <gtest/gtest.h>

#include <cmath>

#include "render/pathtracer/integrator.h"

namespace mv {
namespace {

constexpr double kPiD = 3.14159265358979323846;

/// s- and p-polarised reflectances R_s = r_s², R_p = r_p² in double precision, for an incidence angle
/// theta_i (radians) from medium n1 into n2; total internal reflection gives (1, 1).
struct Rsp {
  double s, p;
};
Rsp fresnel_sp_double(double theta_i, double n1, double n2) {
  const double ci = std::cos(theta_i), si = std::sin(theta_i);
  const double st = n1 / n2 * si;
  if (st >= 1.0) return {1.0, 1.0};
  const double ct = std::sqrt(1.0 - st * st);
  const double rs = (n1 * ci - n2 * ct) / (n1 * ci + n2 * ct);
  const double rp = (n2 * ci - n1 * ct) / (n2 * ci + n1 * ct);
  return {rs * rs, rp * rp};
}
double fresnel_double(double theta_i, double n1, double n2) {
  const Rsp r = fresnel_sp_double(theta_i, n1, n2);
  return 0.5 * (r.s + r.p);
}

TEST(Fresnel, NormalIncidenceIsTheSquaredIndexContrast) {
  for (const auto& [n1, n2] : {std::pair{1.0, 1.5}, std::pair{1.5, 1.0}, std::pair{1.0, 2.4}, std::pair{1.33, 1.5}}) {
    const double r0 = (n1 - n2) / (n1 + n2);
    EXPECT_NEAR(fresnel_dielectric(1.f, static_cast<float>(n1), static_cast<float>(n2)), r0 * r0, 1e-7)
        << n1 << " -> " << n2;
  }
  EXPECT_FLOAT_EQ(fresnel_dielectric(1.f, 1.f, 1.5f), 0.04f);
  // Index matched: no reflection at any angle.
  EXPECT_NEAR(fresnel_dielectric(0.3f, 1.5f, 1.5f), 0.f, 1e-12f);
}

TEST(Fresnel, IsReciprocalBetweenTheTwoSidesOfTheInterface) {
  // F(θi, n1 → n2) = F(θt, n2 → n1) with n1 sin θi = n2 sin θt.
  const float n1 = 1.f, n2 = 1.5f;
  for (double deg = 0.0; deg < 90.0; deg += 7.5) {
    const double ti = deg * kPiD / 180.0;
    const double tt = std::asin(n1 / n2 * std::sin(ti));
    const float in = fresnel_dielectric(static_cast<float>(std::cos(ti)), n1, n2);
    const float out = fresnel_dielectric(static_cast<float>(std::cos(tt)), n2, n1);
    EXPECT_NEAR(in, out, 2e-6f + 2e-5f * in) << deg << " degrees";
  }
}

TEST(Fresnel, TotalInternalReflectionBeyondTheCriticalAngle) {
  const float n1 = 1.5f, n2 = 1.f;
  const double critical = std::asin(double{n2} / n1);
  for (double t = critical + 1e-3; t < kPiD / 2; t += 0.05)
    EXPECT_EQ(fresnel_dielectric(static_cast<float>(std::cos(t)), n1, n2), 1.f) << t;
  EXPECT_EQ(fresnel_dielectric(0.f, n1, n2), 1.f);  // grazing from inside
  // 0.01 rad below the critical angle (41.2°) the reflectance is 0.44, not 1: the regime where
  // Schlick's approximation evaluated with cos θi (0.041 there) under-reflects tenfold.
  const float below = fresnel_dielectric(static_cast<float>(std::cos(critical - 0.01)), n1, n2);
  EXPECT_GT(below, 0.4f);
  EXPECT_LT(below, 1.f);
  EXPECT_NEAR(below, fresnel_double(critical - 0.01, n1, n2), 1e-4);
}

TEST(Fresnel, BrewsterAngleLeavesOnlyTheSPolarisedTerm) {
  for (const auto& [n1, n2] : {std::pair{1.0, 1.5}, std::pair{1.5, 1.0}, std::pair{1.0, 2.0}}) {
    const double brewster = std::atan(n2 / n1);
    const Rsp r = fresnel_sp_double(brewster, n1, n2);
    ASSERT_LT(r.p, 1e-20);  // the closed form: r_p = 0 at tan θB = n2 / n1
    ASSERT_GT(r.s, 0.01);
    EXPECT_NEAR(fresnel_dielectric(static_cast<float>(std::cos(brewster)), static_cast<float>(n1),
                                   static_cast<float>(n2)),
                0.5 * r.s, 1e-6)
        << n1 << " -> " << n2;
  }
}

TEST(Fresnel, MatchesTheClosedFormInDoublePrecision) {
  for (const auto& [n1, n2] : {std::pair{1.0, 1.5}, std::pair{1.5, 1.0}, std::pair{1.0, 1.33}, std::pair{2.4, 1.0}}) {
    for (const double deg : {0.0, 10.0, 30.0, 41.0, 45.0, 60.0, 75.0, 85.0, 89.0}) {
      const double t = deg * kPiD / 180.0;
      const double want = fresnel_double(t, n1, n2);
      const float got = fresnel_dielectric(static_cast<float>(std::cos(t)), static_cast<float>(n1),
                                           static_cast<float>(n2));
      EXPECT_NEAR(got, want, 1e-5 + 1e-4 * want) << n1 << " -> " << n2 << " at " << deg << " degrees";
      EXPECT_GE(got, 0.f);
      EXPECT_LE(got, 1.f);
    }
  }
}

}  // namespace
}  // namespace mv
