#include "app/gui/camera_control.h"

#include <algorithm>
#include <cmath>

namespace mv::gui {

namespace {

constexpr float kPoleMargin = kPi / 180.f;  // keep 1° from straight up/down: the frame stays defined
constexpr float kDollyStep = 0.85f;
constexpr float kMinDistance = 1e-3f;

/// A unit vector perpendicular to unit `n`.
Vec3 any_perpendicular(Vec3 n) {
  Vec3 t, b;
  onb(n, t, b);
  return t;
}

void orbit(Camera& cam, float yaw, float pitch) {
  const Vec3 up = normalize(cam.up);
  const Vec3 offset = cam.position - cam.look_at;
  const float r = length(offset);
  const Vec3 dir = offset / r;
  const float polar = std::acos(std::clamp(dot(dir, up), -1.f, 1.f));
  const Vec3 radial = dir - up * dot(dir, up);
  Vec3 h = length(radial) > 1e-6f ? normalize(radial) : any_perpendicular(up);
  h = h * std::cos(yaw) + cross(up, h) * std::sin(yaw);
  const float new_polar = std::clamp(polar + pitch, kPoleMargin, kPi - kPoleMargin);
  cam.position = cam.look_at + (up * std::cos(new_polar) + h * std::sin(new_polar)) * r;
}

void pan(Camera& cam, float dx, float dy, float view_height) {
  const Vec3 w = normalize(cam.position - cam.look_at);
  const Vec3 u = normalize(cross(cam.up, w));
  const Vec3 v = cross(w, u);
  // World units per screen unit at the look-at distance.
  const float scale = 2.f * length(cam.position - cam.look_at) * std::tan(0.5f * cam.vfov_deg * kPi / 180.f) / view_height;
  const Vec3 move = (u * -dx + v * dy) * scale;
  cam.position += move;
  cam.look_at += move;
}

void dolly(Camera& cam, float steps) {
  const Vec3 offset = cam.position - cam.look_at;
  const float r = length(offset);
  const float new_r = std::max(r * std::pow(kDollyStep, steps), kMinDistance);
  cam.position = cam.look_at + offset * (new_r / r);
}

}  // namespace

bool apply_pointer(Camera& cam, const PointerInput& in) {
  if (length(cam.position - cam.look_at) <= 0.f || in.view_height <= 0.f) return false;
  const bool moved = in.dx != 0.f || in.dy != 0.f;
  bool changed = false;
  if (in.pan && moved) {
    pan(cam, in.dx, in.dy, in.view_height);
    changed = true;
  } else if (in.orbit && moved) {
    const float radians_per_unit = kPi / in.view_height;
    orbit(cam, -in.dx * radians_per_unit, -in.dy * radians_per_unit);
    changed = true;
  }
  if (in.wheel != 0.f) {
    dolly(cam, in.wheel);
    changed = true;
  }
  return changed;
}

}  // namespace mv::gui
