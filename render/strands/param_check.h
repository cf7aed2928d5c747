// Range checks shared by the strand workloads' Params::validate (host only). Each throws
// InputError(context, field, "<value> is out of range <range>") naming the field and its range.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "base/errors.h"
#include "render/math.h"

namespace mv::param_check {

inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// lo ≤ v ≤ hi, or lo < v ≤ hi with open_low.
inline void range(const std::string& context, const std::string& field, double v, double lo, double hi,
                  bool open_low = false) {
  const bool ok = (open_low ? v > lo : v >= lo) && v <= hi;
  if (!ok)
    throw InputError(context, field,
                     num(v) + " is out of range " + (open_low ? "(" : "[") + num(lo) + ", " + num(hi) + "]");
}

/// Each channel in [0, 1].
inline void color(const std::string& context, const std::string& field, Vec3 c) {
  range(context, field + ".r", c.x, 0.0, 1.0);
  range(context, field + ".g", c.y, 0.0, 1.0);
  range(context, field + ".b", c.z, 0.0, 1.0);
}

/// The headlight terms the ray casters shade with: ambient `ka` and diffuse `kd` weights in [0, 4], and the
/// gradient magnitude `min_gradient` in [0, 3e38] below which a sample has no normal.
inline void headlight(const std::string& context, float ka, float kd, float min_gradient) {
  range(context, "ka", ka, 0.0, 4.0);
  range(context, "kd", kd, 0.0, 4.0);
  range(context, "min_gradient", min_gradient, 0.0, 3e38);
}

}  // namespace mv::param_check
