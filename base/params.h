// Generic settings: a strategy describes each of its knobs once (name, type, range, default, doc, source),
// and the command line, the GUI panel, the capture sidecar and the bench CSV are generated from that
// description (docs/architecture.md, "Generic settings"). The pattern is tiny-cuda-nn's hyperparameters:
// one table per implementation, read and written by name.
//
// A ParamTable<S> binds the specs to the fields of a plain settings struct S (the strategy keeps its typed
// settings; nothing parses strings on the hot path). Params is the type-erased, live view of one strategy's
// settings that generic code edits; every write is checked against the spec first, so a refused value
// never reaches the strategy.
//
// Values travel as doubles (Bool: 0 or 1; Choice: the index) and as text (Bool: true/false; Choice: the
// name; numbers in shortest round-trip form), which is what the CLI reads and the sidecar writes. A Text
// knob (a file path) has text only: its double is 0, Params::get_text/set_text carry it, and the strategy
// checks it where it reads it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <type_traits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/errors.h"

namespace mv {

enum class ParamKind : uint8_t { Bool, Int, Real, Choice, Text };

/// One knob of a strategy.
struct ParamSpec {
  std::string name;      ///< kebab-case; the CLI option is --name, the sidecar key and CSV column are name
  ParamKind kind = ParamKind::Int;
  double min = 0.0;      ///< Int, Real: smallest allowed value (inclusive)
  double max = 0.0;      ///< Int, Real: largest allowed value (inclusive)
  bool zero_is_off = false;   ///< Int: 0 is allowed too, meaning "off" (outside [min, max])
  bool power_of_two = false;  ///< Int: only powers of two
  std::vector<std::string> choices;  ///< Choice: the names, index = value
  std::string doc;       ///< one line: GUI tooltip and --help
  std::string source;    ///< paper and section the knob comes from ("" when beyond the papers)
  /// "other=choice": the knob is read only while the Choice knob `other` has that value (the GUI greys it
  /// out otherwise). Empty: always read.
  std::string when;
  bool advanced = false; ///< shown folded in the GUI (measurement and debugging knobs)
};

/// Flags of make_param.
enum ParamFlags : unsigned { kParamAdvanced = 1u, kParamZeroIsOff = 2u, kParamPowerOfTwo = 4u };

/// A spec in one expression (the knob tables list one per line): `flags` is a set of ParamFlags.
inline ParamSpec make_param(std::string name, ParamKind kind, double min, double max, std::string doc,
                            std::string source, std::string when = "", unsigned flags = 0,
                            std::vector<std::string> choices = {}) {
  ParamSpec p;
  p.name = std::move(name);
  p.kind = kind;
  p.min = min;
  p.max = max;
  p.doc = std::move(doc);
  p.source = std::move(source);
  p.when = std::move(when);
  p.advanced = (flags & kParamAdvanced) != 0;
  p.zero_is_off = (flags & kParamZeroIsOff) != 0;
  p.power_of_two = (flags & kParamPowerOfTwo) != 0;
  p.choices = std::move(choices);
  return p;
}

/// "an integer in [32, 512], a power of two" — the allowed values of `s` in words.
inline std::string param_allowed_text(const ParamSpec& s) {
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%.10g", v);
    return std::string(b);
  };
  switch (s.kind) {
    case ParamKind::Bool: return "true or false";
    case ParamKind::Choice: {
      std::string t = "one of ";
      for (size_t i = 0; i < s.choices.size(); ++i) t += (i ? ", " : "") + s.choices[i];
      return t;
    }
    case ParamKind::Int: {
      std::string t = std::string(s.zero_is_off ? "0 (off) or " : "") + "an integer in [" + num(s.min) + ", " +
                      num(s.max) + "]";
      return s.power_of_two ? t + ", a power of two" : t;
    }
    case ParamKind::Real: return "a finite number in [" + num(s.min) + ", " + num(s.max) + "]";
    case ParamKind::Text: return "a text value";
  }
  return "?";
}

/// Whether `v` is an allowed value of `s`.
inline bool param_allows(const ParamSpec& s, double v) {
  if (!std::isfinite(v)) return false;
  switch (s.kind) {
    case ParamKind::Bool: return v == 0.0 || v == 1.0;
    case ParamKind::Choice: return v >= 0.0 && v < static_cast<double>(s.choices.size()) && v == std::floor(v);
    case ParamKind::Int: {
      if (v != std::floor(v)) return false;
      if (s.zero_is_off && v == 0.0) return true;
      if (v < s.min || v > s.max) return false;
      if (s.power_of_two) {
        const auto u = static_cast<uint64_t>(v);
        return u != 0 && (u & (u - 1)) == 0;
      }
      return true;
    }
    case ParamKind::Real: return v >= s.min && v <= s.max;
    case ParamKind::Text: return true;
  }
  return false;
}

/// The text form of `v` (Bool: true/false; Choice: the name; numbers in shortest round-trip form).
inline std::string param_text(const ParamSpec& s, double v) {
  if (s.kind == ParamKind::Bool) return v != 0.0 ? "true" : "false";
  if (s.kind == ParamKind::Text) return "";
  if (s.kind == ParamKind::Choice) {
    const auto i = static_cast<size_t>(v);
    return i < s.choices.size() ? s.choices[i] : "?";
  }
  char b[32];
  std::snprintf(b, sizeof b, s.kind == ParamKind::Int ? "%.0f" : "%.9g", v);
  return b;
}

/// The one-line refusal of `text` for knob `s`: InputError(file, "--name", "must be <allowed>, got \"text\"<why>").
inline InputError param_refusal(const ParamSpec& s, const std::string& text, const std::string& why = "",
                                const std::string& file = "") {
  return InputError(file, "--" + s.name, "must be " + param_allowed_text(s) + ", got \"" + text + "\"" + why);
}

/// The spec called `name` in `specs`, or null.
inline const ParamSpec* find_param(const std::vector<ParamSpec>& specs, std::string_view name) {
  for (const ParamSpec& s : specs)
    if (s.name == name) return &s;
  return nullptr;
}

/// Parses the text form of a value of `s` and checks it. Throws InputError(file, "--name", "must be <allowed>,
/// got \"text\"") — one line naming the option, the allowed values and what was given. `file` names where
/// the text came from ("" for the command line).
inline double parse_param(const ParamSpec& s, std::string_view text, const std::string& file = "") {
  const std::string t(text);
  auto refuse = [&](const char* why = "") -> double { throw param_refusal(s, t, why, file); };
  double v = 0.0;
  if (s.kind == ParamKind::Text) return 0.0;  // any text; the strategy checks it where it reads it
  if (s.kind == ParamKind::Bool) {
    if (t == "true" || t == "on" || t == "1") v = 1.0;
    else if (t == "false" || t == "off" || t == "0") v = 0.0;
    else return refuse();
  } else if (s.kind == ParamKind::Choice) {
    size_t i = 0;
    while (i < s.choices.size() && s.choices[i] != t) ++i;
    if (i == s.choices.size()) return refuse();
    v = static_cast<double>(i);
  } else {
    if (t.empty()) return refuse(" (not a number)");
    char* end = nullptr;
    v = std::strtod(t.c_str(), &end);
    if (end == t.c_str()) return refuse(" (not a number)");
    if (end != t.c_str() + t.size()) return refuse();
  }
  if (!param_allows(s, v)) return refuse();
  return v;
}

/// Name → text of settings given by a user (the CLI, a sidecar), applied to a strategy's Params by name.
using ParamValues = std::map<std::string, std::string>;

/// The live, type-erased settings of one strategy: what the GUI, the CLI, the sidecar and the bench edit
/// and print without knowing the strategy.
class Params {
 public:
  virtual ~Params() = default;
  virtual const std::vector<ParamSpec>& specs() const = 0;
  virtual double get(size_t i) const = 0;
  /// Sets knob i to `v` after checking it; throws InputError("", "--name", …) and changes nothing otherwise.
  virtual void set(size_t i, double v) = 0;
  /// A Text knob's value ("" for other kinds).
  virtual std::string get_text(size_t) const { return {}; }
  /// Sets Text knob i to `text`.
  virtual void set_text(size_t, const std::string&) {}

  /// Index of the knob called `name`, or specs().size().
  size_t find(std::string_view name) const {
    size_t i = 0;
    while (i < specs().size() && specs()[i].name != name) ++i;
    return i;
  }
  bool has(std::string_view name) const { return find(name) < specs().size(); }
  std::string text(size_t i) const {
    return specs()[i].kind == ParamKind::Text ? get_text(i) : param_text(specs()[i], get(i));
  }
  /// Whether knob i is read under the current values (its `when` condition holds).
  bool active(size_t i) const {
    const std::string& w = specs()[i].when;
    const size_t eq = w.find('=');
    if (w.empty() || eq == std::string::npos) return true;
    const size_t other = find(std::string_view(w).substr(0, eq));
    return other >= specs().size() || text(other) == w.substr(eq + 1);
  }
  /// Applies every entry of `values` whose name is a knob here (others are left for other strategies).
  /// Each is parsed and checked first; throws InputError naming the first bad one, and then nothing of
  /// `values` is applied.
  void apply(const ParamValues& values, const std::string& file = "") {
    std::vector<std::pair<size_t, double>> parsed;
    for (const auto& [name, text] : values) {
      const size_t i = find(name);
      if (i < specs().size()) parsed.emplace_back(i, parse_param(specs()[i], text, file));
    }
    for (const auto& [i, v] : parsed) {
      if (specs()[i].kind == ParamKind::Text) set_text(i, values.at(specs()[i].name));
      else set(i, v);
    }
  }
  /// Every knob's text form by name.
  ParamValues values() const {
    ParamValues v;
    for (size_t i = 0; i < specs().size(); ++i) v[specs()[i].name] = text(i);
    return v;
  }
};

/// The specs of a settings struct S, each bound to its field: written once per strategy.
template <class S>
class ParamTable {
 public:
  struct Entry {
    ParamSpec spec;
    std::function<double(const S&)> get;
    std::function<void(S&, double)> set;
    std::function<std::string(const S&)> get_text;  ///< Text knobs only
    std::function<void(S&, const std::string&)> set_text;
  };
  /// Adds a knob bound to `field` (bool, an integer type, float/double, or an enum for Choice).
  template <class T>
  ParamTable& add(ParamSpec spec, T S::*field) {
    specs_.push_back(spec);
    if constexpr (std::is_enum_v<T>) {
      using U = std::underlying_type_t<T>;
      entries_.push_back({std::move(spec), [field](const S& s) { return static_cast<double>(static_cast<U>(s.*field)); },
                          [field](S& s, double v) { s.*field = static_cast<T>(static_cast<U>(v)); }, {}, {}});
    } else {
      entries_.push_back({std::move(spec), [field](const S& s) { return static_cast<double>(s.*field); },
                          [field](S& s, double v) { s.*field = static_cast<T>(v); }, {}, {}});
    }
    return *this;
  }
  /// Adds a Text knob (spec.kind Text) bound to a string field.
  ParamTable& add(ParamSpec spec, std::string S::*field) {
    specs_.push_back(spec);
    entries_.push_back({std::move(spec), [](const S&) { return 0.0; }, [](S&, double) {},
                        [field](const S& s) { return s.*field; },
                        [field](S& s, const std::string& t) { s.*field = t; }});
    return *this;
  }
  /// Adds a knob read and written through `get` and `set` (a nested field, or a unit conversion).
  ParamTable& add(ParamSpec spec, std::function<double(const S&)> get, std::function<void(S&, double)> set) {
    specs_.push_back(spec);
    entries_.push_back({std::move(spec), std::move(get), std::move(set), {}, {}});
    return *this;
  }
  const std::vector<ParamSpec>& specs() const { return specs_; }
  const std::vector<Entry>& entries() const { return entries_; }
  /// Throws InputError(file, "--name", …) for the first field of `s` that its spec does not allow.
  void check(const S& s, const std::string& file = "") const {
    for (const Entry& e : entries_) {
      const double v = e.get(s);
      if (!param_allows(e.spec, v)) throw param_refusal(e.spec, param_text(e.spec, v), "", file);
    }
  }

 private:
  std::vector<ParamSpec> specs_;
  std::vector<Entry> entries_;
};

/// Params over a settings struct that the strategy owns.
template <class S>
class BoundParams : public Params {
 public:
  BoundParams(const ParamTable<S>& table, S& settings) : table_(table), settings_(settings) {}
  const std::vector<ParamSpec>& specs() const override { return table_.specs(); }
  double get(size_t i) const override { return table_.entries()[i].get(settings_); }
  void set(size_t i, double v) override {
    const ParamSpec& s = table_.specs()[i];
    if (!param_allows(s, v)) throw param_refusal(s, param_text(s, v));
    table_.entries()[i].set(settings_, v);
  }
  std::string get_text(size_t i) const override {
    const auto& e = table_.entries()[i];
    return e.get_text ? e.get_text(settings_) : std::string();
  }
  void set_text(size_t i, const std::string& t) override {
    if (const auto& e = table_.entries()[i]; e.set_text) e.set_text(settings_, t);
  }

 private:
  const ParamTable<S>& table_;
  S& settings_;
};

/// Params over values kept as text by name (a workload's own knobs, whose typed settings struct lives
/// where the workload is made): get() parses the stored text, set() checks and stores the text form.
/// A knob missing from `values` reads as its text in `values` after set, so callers fill `values` with
/// the defaults first.
class TextParams : public Params {
 public:
  TextParams(const std::vector<ParamSpec>& specs, ParamValues& values) : specs_(specs), values_(values) {}
  const std::vector<ParamSpec>& specs() const override { return specs_; }
  double get(size_t i) const override {
    const auto it = values_.find(specs_[i].name);
    return it == values_.end() ? 0.0 : parse_param(specs_[i], it->second);
  }
  void set(size_t i, double v) override {
    const ParamSpec& s = specs_[i];
    if (!param_allows(s, v)) throw param_refusal(s, param_text(s, v));
    values_[s.name] = param_text(s, v);
  }
  std::string get_text(size_t i) const override {
    const auto it = values_.find(specs_[i].name);
    return it == values_.end() ? std::string() : it->second;
  }
  void set_text(size_t i, const std::string& t) override { values_[specs_[i].name] = t; }

 private:
  const std::vector<ParamSpec>& specs_;
  ParamValues& values_;
};

}  // namespace mv
