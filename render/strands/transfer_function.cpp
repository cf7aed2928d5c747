// Host side of render/strands/transfer_function.h: validation, sampling, JSON files and the presets.
#include "render/strands/transfer_function.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "assets_embedded.h"

#include "base/errors.h"
#include "base/text_file.h"
#include "render/strands/param_check.h"

namespace mv {

namespace {

using param_check::num;

Vec3 lerp(Vec3 a, Vec3 b, float t) { return a + (b - a) * t; }

/// RGB in [0, 1] to RGB8, R in the low byte (alpha byte 255).
uint32_t pack_rgb8(Vec3 c) {
  const auto q = [](float v) { return static_cast<uint32_t>(fminf(fmaxf(v, 0.f), 1.f) * 255.f + 0.5f); };
  return q(c.x) | (q(c.y) << 8) | (q(c.z) << 16) | (255u << 24);
}

}  // namespace

// ---- 1D ----

void TransferFunction1D::validate(const std::string& context) const {
  if (points.size() < 2 || points.size() > 64)
    throw InputError(context, "tf.points", std::to_string(points.size()) + " control points; give 2 to 64");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string f = "tf.points[" + std::to_string(i) + "]";
    const TfPoint& p = points[i];
    if (!std::isfinite(p.value)) throw InputError(context, f + ".value", num(p.value) + " is not a finite number");
    if (i > 0 && !(p.value > points[i - 1].value))
      throw InputError(context, f + ".value",
                       num(p.value) + " is out of range: values must increase strictly (previous point " +
                           num(points[i - 1].value) + ")");
    param_check::color(context, f + ".color", p.color);
    param_check::range(context, f + ".opacity", p.opacity, 0.0, 1.0);
  }
}

Rgba TransferFunction1D::eval(float value) const {
  const TfPoint* a = &points.front();
  const TfPoint* b = a;
  if (value <= points.front().value) {
    b = a;
  } else if (value >= points.back().value) {
    a = b = &points.back();
  } else {
    for (size_t i = 1; i < points.size(); ++i)
      if (value <= points[i].value) {
        a = &points[i - 1];
        b = &points[i];
        break;
      }
  }
  const float t = b->value > a->value ? (value - a->value) / (b->value - a->value) : 0.f;
  const Vec3 c = lerp(a->color, b->color, t);
  return {c.x, c.y, c.z, a->opacity + (b->opacity - a->opacity) * t};
}

Tf1DTable sample_tf1d(const TransferFunction1D& tf, float step_voxels, const std::string& context) {
  tf.validate(context);
  if (!(step_voxels > 0.f && step_voxels <= 1e3f))
    throw InputError(context, "step_voxels", num(step_voxels) + " is out of range (0, 1000]");
  Tf1DTable t;
  const double lo = tf.points.front().value, hi = tf.points.back().value;
  t.vmin = static_cast<float>(lo);
  t.scale = static_cast<float>((kTf1DEntries - 1) / (hi - lo));
  for (int j = 0; j < kTf1DEntries; ++j) {
    const double v = j == kTf1DEntries - 1 ? hi : lo + (hi - lo) * j / (kTf1DEntries - 1);
    Rgba e = tf.eval(static_cast<float>(v));
    e.a = static_cast<float>(1.0 - std::pow(1.0 - static_cast<double>(e.a), static_cast<double>(step_voxels)));
    t.node[j] = e;
  }
  return t;
}

TransferFunction1D parse_tf1d(const std::string& json_text, const std::string& context) {
  using Json = nlohmann::json;
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    throw InputError(context, "", std::string("not a JSON transfer function: ") + e.what());
  }
  const auto fail = [&](const std::string& field, const std::string& what) { throw InputError(context, field, what); };
  const auto number = [&](const Json& v, const std::string& field) {
    if (!v.is_number()) fail(field, "expected a number, got " + std::string(v.type_name()));
    return v.get<float>();
  };
  if (!root.is_object()) fail("", "expected an object {\"points\": [...]}, got " + std::string(root.type_name()));
  for (const auto& [key, value] : root.items())
    if (key != "points" && key != "about") fail("tf." + key, "unknown field (allowed: points, about)");
  if (!root.contains("points") || !root["points"].is_array()) fail("tf.points", "expected an array of points");
  TransferFunction1D tf;
  const Json& points = root["points"];
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string f = "tf.points[" + std::to_string(i) + "]";
    const Json& p = points[i];
    if (!p.is_object()) fail(f, "expected an object {\"value\", \"color\", \"opacity\"}");
    for (const auto& [key, value] : p.items())
      if (key != "value" && key != "color" && key != "opacity") fail(f + "." + key, "unknown field (allowed: value, color, opacity)");
    for (const char* key : {"value", "color", "opacity"})
      if (!p.contains(key)) fail(f + "." + key, "missing");
    const Json& c = p["color"];
    if (!c.is_array() || c.size() != 3) fail(f + ".color", "expected [r, g, b]");
    TfPoint q;
    q.value = number(p["value"], f + ".value");
    q.color = Vec3{number(c[0], f + ".color[0]"), number(c[1], f + ".color[1]"), number(c[2], f + ".color[2]")};
    q.opacity = number(p["opacity"], f + ".opacity");
    tf.points.push_back(q);
  }
  tf.validate(context);
  return tf;
}

TransferFunction1D load_tf1d(const std::string& path) {
  return parse_tf1d(read_text_file(path, "the transfer function"), path);
}

namespace {
/// A preset embedded at build time (CMakeLists.txt, tools/embed_files.py), parsed once.
TransferFunction1D embedded_tf1d(const char* name) {
  const char* text = assets::find(name);
  if (!text) throw std::logic_error(std::string("the binary was built without assets/") + name);
  return parse_tf1d(text, std::string("assets/") + name);
}
}  // namespace

TransferFunction1D ch2_vr_lite_tf() {
  static const TransferFunction1D tf = embedded_tf1d("tf-ch2-vr-lite.json");
  return tf;
}

TransferFunction1D ch2_illust_tf() {
  static const TransferFunction1D tf = embedded_tf1d("tf-ch2-illust.json");
  return tf;
}

// ---- 2D ----

const char* curvature_class_name(CurvatureClass c) {
  switch (c) {
    case CurvatureClass::Flat: return "flat";
    case CurvatureClass::EllipticConvex: return "elliptic convex";
    case CurvatureClass::EllipticConcave: return "elliptic concave";
    case CurvatureClass::Hyperbolic: return "hyperbolic";
    case CurvatureClass::CylindricalConvex: return "cylindrical convex";
    case CurvatureClass::CylindricalConcave: return "cylindrical concave";
  }
  return "?";
}

void CurvatureColors::validate(const std::string& context) const {
  if (!(kappa_max > 0.f && kappa_max <= 1e6f))
    throw InputError(context, "curvature.kappa_max", num(kappa_max) + " is out of range (0, 1e6]");
  if (!(saturation > 0.f && saturation <= 1.f))
    throw InputError(context, "curvature.saturation", num(saturation) + " is out of range (0, 1]");
  param_check::color(context, "curvature.concave", concave);
  param_check::color(context, "curvature.valley", valley);
  param_check::color(context, "curvature.saddle", saddle);
  param_check::color(context, "curvature.ridge", ridge);
  param_check::color(context, "curvature.convex", convex);
  param_check::color(context, "curvature.flat", flat);
}

Vec3 CurvatureColors::eval(float k1, float k2) const {
  if (k1 < k2) std::swap(k1, k2);
  const float c = curvedness(k1, k2);
  if (!(c > 0.f)) return flat;
  const float s = shape_index(k1, k2);  // [−1, 1]
  const Vec3 anchors[5] = {concave, valley, saddle, ridge, convex};
  const float x = fminf(fmaxf((s + 1.f) * 2.f, 0.f), 4.f);
  const int i = x < 3.f ? static_cast<int>(x) : 3;
  const Vec3 cls = lerp(anchors[i], anchors[i + 1], x - static_cast<float>(i));
  const float w = fminf(c / (saturation * kappa_max), 1.f);
  return lerp(flat, cls, w);
}

CurvatureTfTable sample_curvature_tf(const CurvatureColors& c, const std::string& context) {
  c.validate(context);
  CurvatureTfTable t;
  constexpr int n = kTfCurvatureSide;
  t.kappa_max = c.kappa_max;
  t.scale = static_cast<float>((n - 1) / (2.0 * c.kappa_max));
  for (int b = 0; b < n; ++b)
    for (int a = 0; a < n; ++a) {
      const double half = (n - 1) / 2.0;
      const float k1 = static_cast<float>(c.kappa_max * (a - half) / half);
      const float k2 = static_cast<float>(c.kappa_max * (b - half) / half);
      t.node[b * n + a] = pack_rgb8(c.eval(k1, k2));
    }
  return t;
}

}  // namespace mv
