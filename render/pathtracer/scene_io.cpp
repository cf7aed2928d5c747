// Scene file loader and validator (render/pathtracer/scene_io.h; schema in scenes/README.md).
//
// Structure: the text is parsed with nlohmann::ordered_json (so materials keep the file's order) through
// a callback that rejects duplicate keys; then `SceneReader` walks the document with the JSON path of the
// value at hand, so that every check can name the file and the field in its message.
#include "render/pathtracer/scene_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_file.h"

#ifndef MV_SOURCE_DIR
#define MV_SOURCE_DIR "."
#endif

namespace mv {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------------
// Small formatting helpers

/// "a.b", "a[3]": the JSON-pointer-like field paths used in messages.
std::string key_path(const std::string& parent, const std::string& key) {
  // Keys that are not plain identifiers (material names may be anything) are quoted: materials["a b"].
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  if (!plain) return parent + "[" + Json(key).dump() + "]";
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, size_t i) { return parent + "[" + std::to_string(i) + "]"; }

/// A number as a person would write it: 4, 0.001, 1e+05.
std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

/// "string \"abc\"", "number 3", "object", ...: what a value is, for "expected X, got Y" messages.
std::string describe(const Json& v) {
  std::string d = v.type_name();
  if (v.is_primitive() && !v.is_null()) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    d += " " + text;
  }
  return d;
}

/// Edit distance counting insertions, deletions, substitutions and swaps of neighbours ("optimal string
/// alignment"), for "did you mean" hints on misspelt keys and names.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// " (did you mean \"x\"?)" when one candidate is close to `word`, else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = &c;
  }
  if (best && best_d > 0 && best_d <= (best->size() <= 4 ? 1u : 2u))
    return " (did you mean \"" + *best + "\"?)";
  return "";
}

// ---------------------------------------------------------------------------------------------------
// Parsing: ordered JSON, comments allowed, duplicate keys rejected, errors with line and column

/// A SAX pass over the text that tracks where it is (for the path of a duplicate key) and rejects duplicate
/// keys, which nlohmann::json would otherwise resolve silently (the last one wins). A separate pass rather
/// than a parser callback: nlohmann 3.11's callback parser takes time quadratic in the length of an array
/// of objects (its end_object scans the parent for discarded values): 8 s for 200,000 spheres.
class DuplicateKeyCheck : public nlohmann::json_sax<Json> {
 public:
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    enter_child();
    stack_.push_back(Frame{true, {}, {}, 0});
    return true;
  }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override {
    enter_child();
    stack_.push_back(Frame{false, {}, {}, 0});
    return true;
  }
  bool end_array() override { return leave(); }
  bool key(string_t& k) override {
    Frame& top = stack_.back();
    top.key = k;
    if (!top.keys.insert(top.key).second)
      throw InputError(file_, current_path(), "duplicate key (each key may appear only once per object)");
    return true;
  }
  /// A syntax error: stop; the plain parse that follows reports it with its line and column.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    bool is_object;
    std::set<std::string> keys;
    std::string key;  // objects: the key whose value is being parsed
    size_t count;     // arrays: elements started so far (the current one is count - 1)
  };

  bool value() {
    enter_child();
    return true;
  }
  bool leave() {
    if (!stack_.empty()) stack_.pop_back();
    return true;
  }
  void enter_child() {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().count;
  }

  std::string current_path() const {
    std::string p;
    for (const Frame& f : stack_) p = f.is_object ? key_path(p, f.key) : index_path(p, f.count ? f.count - 1 : 0);
    return p;
  }

  std::string file_;
  std::vector<Frame> stack_;
};

Json parse_json(const std::string& text, const std::string& file) {
  try {
    DuplicateKeyCheck keys(file);
    Json::sax_parse(text, &keys, nlohmann::detail::input_format_t::json, /*strict=*/true, /*ignore_comments=*/true);
    return Json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while ...".
    std::string msg = e.what();
    if (const size_t p = msg.find("] "); p != std::string::npos && msg.compare(0, 1, "[") == 0) msg = msg.substr(p + 2);
    if (msg.compare(0, 15, "parse error at ") == 0) msg = msg.substr(15);
    else if (msg.compare(0, 13, "parse error: ") == 0) msg = msg.substr(13);
    throw InputError(file, "", "malformed JSON at " + msg);
  } catch (const Json::exception& e) {
    // E.g. out_of_range.406 "number overflow parsing '1e999'".
    std::string msg = e.what();
    if (const size_t p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(file, "", "malformed JSON: " + msg);
  }
}

// ---------------------------------------------------------------------------------------------------
// The reader: typed accessors that know the file and the field path

const char* const kMaterialTypes[] = {"diffuse", "mirror", "glossy", "glass", "emissive"};

class SceneReader {
 public:
  SceneReader(std::string file, fs::path base_dir) : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  Scene read(const Json& root) {
    Scene s;
    if (!root.is_object()) fail("", "a scene file must contain a JSON object, got " + describe(root));
    check_keys(root, "",
               {"name", "description", "resolution", "target_spp", "max_depth", "epsilon", "background",
                "reference", "camera", "materials", "spheres", "boxes", "quads"});

    // Name: defaults to the file's stem ("scenes/room.json" -> "room").
    s.name = fs::path(file_).stem().string();
    if (const Json* v = find(root, "name")) s.name = non_empty_string(*v, "name");
    if (const Json* v = find(root, "description")) expect_string(*v, "description");

    if (const Json* res = find(root, "resolution")) {
      expect_object(*res, "resolution");
      check_keys(*res, "resolution", {"width", "height"});
      s.width = int_in(require(*res, "width", "resolution"), "resolution.width", kMinResolution, kMaxResolution);
      s.height = int_in(require(*res, "height", "resolution"), "resolution.height", kMinResolution, kMaxResolution);
    }
    if (const Json* v = find(root, "target_spp")) s.target_spp = int_in(*v, "target_spp", 1, kMaxTargetSpp);
    if (const Json* v = find(root, "max_depth")) s.max_depth = static_cast<uint32_t>(int_in(*v, "max_depth", 1, 1024));
    if (const Json* v = find(root, "epsilon")) {
      const double e = number(*v, "epsilon");
      if (!(e > 0.0 && e <= 1.0)) out_of_range("epsilon", *v, "(0, 1]");
      s.epsilon = static_cast<float>(e);
    }
    if (const Json* v = find(root, "background")) s.background = radiance(*v, "background");
    if (const Json* v = find(root, "reference")) s.reference_path = resolve_relative(non_empty_string(*v, "reference"));

    s.camera = read_camera(require(root, "camera", ""));
    read_materials(require(root, "materials", ""));

    if (const Json* arr = find(root, "spheres")) {
      for_each_object(*arr, "spheres", {"center", "radius", "material"}, [&](const Json& o, const std::string& p) {
        Sphere sp;
        sp.center = vec3(require(o, "center", p), key_path(p, "center"));
        const Json& r = require(o, "radius", p);
        const double radius = number(r, key_path(p, "radius"));
        if (!(radius > 0.0)) fail(key_path(p, "radius"), r.dump() + " must be > 0");
        sp.radius = static_cast<float>(radius);
        sp.material = material_ref(require(o, "material", p), key_path(p, "material"));
        s.spheres.push_back(sp);
      });
    }
    if (const Json* arr = find(root, "boxes")) {
      for_each_object(*arr, "boxes", {"min", "max", "material"}, [&](const Json& o, const std::string& p) {
        Box b;
        b.lo = vec3(require(o, "min", p), key_path(p, "min"));
        b.hi = vec3(require(o, "max", p), key_path(p, "max"));
        static const char* const axis[] = {"x", "y", "z"};
        for (int a = 0; a < 3; ++a)
          if (!(b.lo[a] < b.hi[a]))
            fail(key_path(p, "max"), std::string("max must exceed min on every axis, but on ") + axis[a] + " max " +
                                         fmt(b.hi[a]) + " <= min " + fmt(b.lo[a]));
        b.material = material_ref(require(o, "material", p), key_path(p, "material"));
        s.boxes.push_back(b);
      });
    }
    if (const Json* arr = find(root, "quads")) {
      for_each_object(*arr, "quads", {"corner", "edge_u", "edge_v", "material"}, [&](const Json& o, const std::string& p) {
        Quad q;
        q.corner = vec3(require(o, "corner", p), key_path(p, "corner"));
        q.edge_u = vec3(require(o, "edge_u", p), key_path(p, "edge_u"));
        q.edge_v = vec3(require(o, "edge_v", p), key_path(p, "edge_v"));
        // Coordinates beyond ±1e6 overflow the float products below (and the tracer's epsilons).
        for (const auto& [field, v] : {std::make_pair("corner", q.corner), std::make_pair("edge_u", q.edge_u),
                                       std::make_pair("edge_v", q.edge_v)})
          if (!(std::fabs(v.x) <= 1e6 && std::fabs(v.y) <= 1e6 && std::fabs(v.z) <= 1e6))
            fail(key_path(p, field), "every coordinate must be in [-1e6, 1e6] scene units, got [" + fmt(v.x) + ", " +
                                         fmt(v.y) + ", " + fmt(v.z) + "]");
        // |u x v| = |u| |v| sin(angle): degenerate when an edge is zero or the edges are (nearly) parallel.
        const double lu = length(q.edge_u), lv = length(q.edge_v), area = length(cross(q.edge_u, q.edge_v));
        if (!(lu > 0.0)) fail(key_path(p, "edge_u"), "must not be the zero vector");
        if (!(lv > 0.0)) fail(key_path(p, "edge_v"), "must not be the zero vector");
        if (!(area > 1e-6 * lu * lv))
          fail(key_path(p, "edge_v"), "edge_u and edge_v are parallel: the quad has no area");
        q.material = material_ref(require(o, "material", p), key_path(p, "material"));
        s.quads.push_back(q);
      });
    }
    if (s.spheres.empty() && s.boxes.empty() && s.quads.empty())
      fail("", "the scene has no primitives: add at least one entry to \"spheres\", \"boxes\" or \"quads\"");

    s.materials = std::move(materials_);
    s.material_names = std::move(material_names_);
    s.finalize();
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(file_, field, message);
  }

  [[noreturn]] void out_of_range(const std::string& field, const Json& v, const std::string& range) const {
    fail(field, v.dump() + " is out of range " + range);
  }

  static const Json* find(const Json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  /// obj[key], which must exist; `parent` is obj's path.
  const Json& require(const Json& obj, const char* key, const std::string& parent) const {
    const Json* v = find(obj, key);
    if (!v) fail(key_path(parent, key), "missing required field");
    return *v;
  }

  /// Rejects keys of `obj` not in `allowed` (most often a typo), naming the key and the allowed ones.
  void check_keys(const Json& obj, const std::string& path, std::initializer_list<const char*> allowed,
                  const std::string& context = "") const {
    std::vector<std::string> names(allowed.begin(), allowed.end());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(names.begin(), names.end(), it.key()) != names.end()) continue;
      fail(key_path(path, it.key()), "unknown field" + context + suggestion(it.key(), names) + " (allowed: " +
                                         join(names) + ")");
    }
  }

  void expect_object(const Json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "expected an object, got " + describe(v));
  }

  void expect_string(const Json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string, got " + describe(v));
  }

  std::string non_empty_string(const Json& v, const std::string& path) const {
    expect_string(v, path);
    std::string s = v.get<std::string>();
    if (s.empty()) fail(path, "must not be empty");
    return s;
  }

  double number(const Json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number, got " + describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, "must be a finite number");
    return d;
  }

  /// An integer in [lo, hi]. Integral floats such as 800.0 are rejected: the schema says integer.
  int int_in(const Json& v, const std::string& path, int lo, int hi) const {
    if (!v.is_number_integer()) fail(path, "expected an integer, got " + describe(v));
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi))
      out_of_range(path, v, range);
    const long long x = v.get<long long>();
    if (x < lo || x > hi) out_of_range(path, v, range);
    return static_cast<int>(x);
  }

  Vec3 vec3(const Json& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected an array of 3 numbers, got " + describe(v));
    if (v.size() != 3) fail(path, "expected an array of 3 numbers, got " + std::to_string(v.size()) + " element" +
                                      (v.size() == 1 ? "" : "s"));
    Vec3 r;
    for (int i = 0; i < 3; ++i) {
      const double d = number(v[i], index_path(path, i));
      if (std::fabs(d) > 1e30) fail(index_path(path, i), v[i].dump() + " is too large for single precision");
      r[i] = static_cast<float>(d);
    }
    return r;
  }

  /// A reflectance: three channels in [0, 1].
  Vec3 albedo(const Json& v, const std::string& path) const {
    const Vec3 c = vec3(v, path);
    for (int i = 0; i < 3; ++i)
      if (!(c[i] >= 0.f && c[i] <= 1.f)) out_of_range(index_path(path, i), v[i], "[0, 1]");
    return c;
  }

  /// A radiance: three finite channels >= 0.
  Vec3 radiance(const Json& v, const std::string& path) const {
    const Vec3 c = vec3(v, path);
    for (int i = 0; i < 3; ++i)
      if (!(c[i] >= 0.f)) fail(index_path(path, i), v[i].dump() + " must be >= 0");
    return c;
  }

  double number_in(const Json& v, const std::string& path, double lo, double hi) const {
    const double d = number(v, path);
    if (!(d >= lo && d <= hi)) out_of_range(path, v, "[" + fmt(lo) + ", " + fmt(hi) + "]");
    return d;
  }

  std::string resolve_relative(const std::string& p) const {
    fs::path path(p);
    if (path.is_relative()) path = base_dir_ / path;
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    if (ec) abs = path;
    return abs.lexically_normal().string();
  }

  Camera read_camera(const Json& c) const {
    expect_object(c, "camera");
    check_keys(c, "camera", {"position", "look_at", "up", "vfov"});
    Camera cam;
    cam.position = vec3(require(c, "position", "camera"), "camera.position");
    cam.look_at = vec3(require(c, "look_at", "camera"), "camera.look_at");
    if (const Json* v = find(c, "up")) cam.up = vec3(*v, "camera.up");
    if (const Json* v = find(c, "vfov")) {
      const double f = number(*v, "camera.vfov");
      if (!(f > 0.0 && f < 180.0)) out_of_range("camera.vfov", *v, "(0, 180) degrees");
      cam.vfov_deg = static_cast<float>(f);
    }
    const Vec3 dir = cam.look_at - cam.position;
    const float ld = length(dir), lu = length(cam.up);
    if (!(ld > 0.f)) fail("camera.look_at", "must differ from camera.position (the view direction is undefined)");
    if (!(lu > 0.f)) fail("camera.up", "must not be the zero vector");
    if (!(length(cross(dir, cam.up)) > 1e-4f * ld * lu))
      fail("camera.up", "is parallel to the view direction (look_at - position); choose an up vector across it");
    return cam;
  }

  void read_materials(const Json& m) {
    expect_object(m, "materials");
    if (m.empty()) fail("materials", "must define at least one material");
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string& name = it.key();
      const std::string p = key_path("materials", name);
      if (name.empty()) fail(p, "a material name must not be empty");
      const Json& o = it.value();
      expect_object(o, p);

      const Json& t = require(o, "type", p);
      expect_string(t, key_path(p, "type"));
      const std::string type = t.get<std::string>();
      std::vector<std::string> types(std::begin(kMaterialTypes), std::end(kMaterialTypes));
      const auto ti = std::find(types.begin(), types.end(), type);
      if (ti == types.end())
        fail(key_path(p, "type"), "unknown material type " + t.dump() + suggestion(type, types) + " (allowed: " +
                                      join(types) + ")");

      Material mat;
      mat.type = static_cast<MaterialType>(ti - types.begin());
      const std::string ctx = " for a " + t.dump() + " material";
      switch (mat.type) {
        case MaterialType::Diffuse:
        case MaterialType::Mirror: check_keys(o, p, {"type", "albedo", "emission"}, ctx); break;
        case MaterialType::Glossy: check_keys(o, p, {"type", "albedo", "exponent", "emission"}, ctx); break;
        case MaterialType::Glass: check_keys(o, p, {"type", "albedo", "ior", "emission"}, ctx); break;
        case MaterialType::Emissive: check_keys(o, p, {"type", "emission"}, ctx); break;
      }

      // Defaults (scenes/README.md): albedo 0.8 grey, clear glass 1.0; emissive surfaces absorb everything.
      mat.albedo = Vec3(mat.type == MaterialType::Glass ? 1.f : mat.type == MaterialType::Emissive ? 0.f : 0.8f);
      mat.emission = Vec3(0.f);
      if (const Json* v = find(o, "albedo")) mat.albedo = albedo(*v, key_path(p, "albedo"));
      if (mat.type == MaterialType::Emissive) {
        const Json& e = require(o, "emission", p);
        mat.emission = radiance(e, key_path(p, "emission"));
        if (!(max_component(mat.emission) > 0.f))
          fail(key_path(p, "emission"), "an \"emissive\" material must emit: at least one channel must be > 0");
      } else if (const Json* v = find(o, "emission")) {
        mat.emission = radiance(*v, key_path(p, "emission"));
      }
      if (const Json* v = find(o, "ior")) mat.ior = static_cast<float>(number_in(*v, key_path(p, "ior"), 1.0, 3.0));
      if (const Json* v = find(o, "exponent"))
        mat.exponent = static_cast<float>(number_in(*v, key_path(p, "exponent"), 1.0, 1e5));

      material_index_[name] = static_cast<uint32_t>(materials_.size());
      materials_.push_back(mat);
      material_names_.push_back(name);
    }
  }

  uint32_t material_ref(const Json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a material name (a string), got " + describe(v));
    const std::string name = v.get<std::string>();
    const auto it = material_index_.find(name);
    if (it == material_index_.end())
      fail(path, "unknown material " + v.dump() + suggestion(name, material_names_) + " (defined: " +
                     join(material_names_) + ")");
    return it->second;
  }

  template <class F>
  void for_each_object(const Json& arr, const char* name, std::initializer_list<const char*> keys, F&& f) const {
    if (!arr.is_array()) fail(name, "expected an array of objects, got " + describe(arr));
    for (size_t i = 0; i < arr.size(); ++i) {
      const std::string p = index_path(name, i);
      expect_object(arr[i], p);
      check_keys(arr[i], p, keys);
      f(arr[i], p);
    }
  }

  std::string file_;
  fs::path base_dir_;
  std::vector<Material> materials_;
  std::vector<std::string> material_names_;
  std::map<std::string, uint32_t> material_index_;
};

/// Scene names available in `dir`: the stems of its *.json files.
std::vector<std::string> scene_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const std::string& f : list_scene_files(dir)) names.push_back(fs::path(f).stem().string());
  return names;
}

}  // namespace

Scene parse_scene(const std::string& json_text, const std::string& origin) {
  const Json root = parse_json(json_text, origin);
  fs::path base = fs::path(origin).parent_path();
  if (base.empty()) base = ".";
  Scene s = SceneReader(origin, base).read(root);
  s.source_path = origin;
  return s;
}

Scene load_scene(const std::string& path) { return parse_scene(read_text_file(path, "scene file"), path); }

std::vector<std::string> list_scene_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->path().extension() == ".json" && it->is_regular_file(fec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return fs::path(a).filename().string() < fs::path(b).filename().string();
  });
  return files;
}

std::string default_scene_dir() {
  if (const char* env = std::getenv("MEGAVIEW_SCENES"); env && *env) return env;
  return MV_SOURCE_DIR "/scenes";
}

std::string resolve_scene_path(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.empty()) throw InputError("", "--scene", "empty scene name");
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;

  const std::string dir = default_scene_dir();
  const fs::path arg(name_or_path);
  const bool bare = !arg.has_parent_path();
  if (bare) {
    const fs::path candidate = arg.extension() == ".json" ? fs::path(dir) / arg : fs::path(dir) / (name_or_path + ".json");
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }

  const std::vector<std::string> names = scene_names(dir);
  std::string msg = fs::exists(name_or_path, ec) ? "is not a regular file" : "no such scene file";
  if (bare) msg += ", and no scene of that name in " + dir;
  if (names.empty()) {
    msg += " (no scenes found in " + dir + "; set MEGAVIEW_SCENES to the scenes folder)";
  } else {
    msg += suggestion(arg.stem().string(), names) + " (available: " + join(names) + ")";
  }
  throw InputError(name_or_path, "", msg);
}

}  // namespace mv
