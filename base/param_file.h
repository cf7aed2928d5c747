// Knob descriptions kept as data: a JSON file (assets/knobs-*.json, embedded in the binary at build time by
// tools/embed_files.py) holds each knob's name, kind, range, doc, source, condition and flags, and the code binds
// them by name to the fields of its settings struct (ParamTable::add, base/params.h). The long tables read as a
// list of knobs instead of a list of constructor calls, and the text a user sees (tooltips, --help, the range
// errors) is edited in one place without touching code.
//
// The file:
//   { "knobs_of": "the settings struct (its header)",
//     "knobs": [ { "name": "segment-size", "kind": "bool|int|real|choice|text", "min": 32, "max": 512,
//                  "doc": "...", "source": "Kerbl 2012 §3.2", "when": "queue=kerbl",
//                  "flags": ["advanced", "zero-is-off", "power-of-two"], "choices": ["a", "b"] }, ... ] }
// "min" and "max" are required for int and real knobs and refused for the others; "source", "when", "flags"
// and "choices" are optional. A choice knob takes its names either from the file or from the code (an enum's
// name table), not both.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/params.h"

namespace mv {

/// The knob specs of one embedded JSON file, looked up by name. A malformed file is a build defect, not a user
/// input: the constructor and spec() throw std::logic_error naming the file, the knob and the field.
class ParamFile {
 public:
  /// `file`: the file's name (for errors); `text`: its contents (null: the file was not embedded).
  ParamFile(std::string file, const char* text) : file_(std::move(file)) {
    if (!text) fail("", "the file is not embedded in the binary (CMakeLists.txt, mv_embed_files)");
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("knobs") || !j["knobs"].is_array())
      fail("", "not a JSON object with a \"knobs\" array");
    for (const nlohmann::json& k : j["knobs"]) specs_.push_back(parse(k));
  }

  /// The spec of the knob `name`; `choices` (a choice knob whose names the code owns, e.g. an enum's) fills
  /// ParamSpec::choices. Throws std::logic_error if the file has no such knob, if a choice knob ends up with
  /// no names or with names from both places, or if the knob is asked for twice.
  ParamSpec spec(std::string_view name, std::vector<std::string> choices = {}) {
    for (ParamSpec& s : specs_) {
      if (s.name != name) continue;
      if (!used_.insert(s.name).second) fail(s.name, "bound twice");
      ParamSpec p = s;
      if (!choices.empty()) {
        if (!p.choices.empty()) fail(p.name, "\"choices\" are given by the code; the file must not list them");
        p.choices = std::move(choices);
      }
      if (p.kind == ParamKind::Choice && p.choices.empty()) fail(p.name, "a choice knob without choices");
      return p;
    }
    fail(std::string(name), "no such knob in the file");
  }

  /// Throws std::logic_error naming the first knob of the file that spec() never returned: every knob the file
  /// describes must be bound (call it after the table is built).
  void expect_all_bound() const {
    for (const ParamSpec& s : specs_)
      if (!used_.count(s.name)) fail(s.name, "described in the file but bound to no field");
  }

  size_t size() const { return specs_.size(); }

 private:
  [[noreturn]] void fail(const std::string& knob, const std::string& what) const {
    throw std::logic_error(file_ + (knob.empty() ? "" : ": knob \"" + knob + "\"") + ": " + what);
  }

  ParamSpec parse(const nlohmann::json& k) const {
    if (!k.is_object() || !k.contains("name") || !k["name"].is_string()) fail("", "a knob without a \"name\" string");
    ParamSpec p;
    p.name = k["name"].get<std::string>();
    auto text = [&](const char* field, bool required) {
      if (!k.contains(field)) {
        if (required) fail(p.name, std::string("no \"") + field + "\"");
        return std::string();
      }
      if (!k[field].is_string()) fail(p.name, std::string("\"") + field + "\" must be a string");
      return k[field].get<std::string>();
    };
    const std::string kind = text("kind", true);
    const std::pair<const char*, ParamKind> kinds[] = {{"bool", ParamKind::Bool},
                                                        {"int", ParamKind::Int},
                                                        {"real", ParamKind::Real},
                                                        {"choice", ParamKind::Choice},
                                                        {"text", ParamKind::Text}};
    bool known = false;
    for (const auto& [n, v] : kinds)
      if (kind == n) p.kind = v, known = true;
    if (!known) fail(p.name, "\"kind\" must be bool, int, real, choice or text, not \"" + kind + "\"");
    const bool ranged = p.kind == ParamKind::Int || p.kind == ParamKind::Real;
    for (const char* field : {"min", "max"}) {
      if (k.contains(field) != ranged)
        fail(p.name, std::string("\"") + field + (ranged ? "\" is required" : "\" is only for int and real knobs"));
      if (ranged && !k[field].is_number()) fail(p.name, std::string("\"") + field + "\" must be a number");
    }
    if (ranged) {
      p.min = k["min"].get<double>();
      p.max = k["max"].get<double>();
      if (!(p.min <= p.max)) fail(p.name, "\"min\" exceeds \"max\"");
    }
    p.doc = text("doc", true);
    p.source = text("source", false);
    p.when = text("when", false);
    if (k.contains("flags")) {
      if (!k["flags"].is_array()) fail(p.name, "\"flags\" must be an array");
      for (const nlohmann::json& f : k["flags"]) {
        const std::string flag = f.is_string() ? f.get<std::string>() : "";
        if (flag == "advanced") p.advanced = true;
        else if (flag == "zero-is-off") p.zero_is_off = true;
        else if (flag == "power-of-two") p.power_of_two = true;
        else fail(p.name, "unknown flag " + f.dump() + " (advanced, zero-is-off, power-of-two)");
      }
    }
    if (k.contains("choices")) {
      if (p.kind != ParamKind::Choice || !k["choices"].is_array()) fail(p.name, "\"choices\" is an array, for choice knobs");
      for (const nlohmann::json& c : k["choices"]) {
        if (!c.is_string()) fail(p.name, "every choice must be a string");
        p.choices.push_back(c.get<std::string>());
      }
    }
    for (const ParamSpec& s : specs_)
      if (s.name == p.name) fail(p.name, "described twice");
    return p;
  }

  std::string file_;
  std::vector<ParamSpec> specs_;
  std::set<std::string> used_;
};

}  // namespace mv
