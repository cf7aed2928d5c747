// Generic settings (base/params.h) as JSON and CSV: what the capture sidecar, the bench tables and the
// experiment metadata write for any strategy's knobs, without knowing the strategy.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "base/params.h"

namespace mv {

/// The JSON key of a knob: its name with '-' turned into '_' ("segment-size" → "segment_size").
inline std::string param_key(const ParamSpec& s) {
  std::string k = s.name;
  for (char& ch : k)
    if (ch == '-') ch = '_';
  return k;
}

/// Knob i of `p` as JSON: a boolean, an integer, a number, or the choice's name.
inline nlohmann::json param_json(const Params& p, size_t i) {
  const ParamSpec& s = p.specs()[i];
  const double v = p.get(i);
  switch (s.kind) {
    case ParamKind::Bool: return v != 0.0;
    case ParamKind::Int: return static_cast<long long>(v);
    case ParamKind::Real: return v;
    case ParamKind::Choice:
    case ParamKind::Text: return p.text(i);
  }
  return nullptr;
}

/// Every knob of `p` under param_key.
inline nlohmann::json params_json(const Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < p.specs().size(); ++i) j[param_key(p.specs()[i])] = param_json(p, i);
  return j;
}

/// "name=value;name=value": the knobs of `p` that `shown(spec)` accepts (all by default), in table order (a
/// CSV cell: no commas); "" for none.
template <class Shown>
std::string params_text(const Params* p, Shown shown) {
  std::string t;
  if (!p) return t;
  for (size_t i = 0; i < p->specs().size(); ++i)
    if (shown(p->specs()[i])) t += (t.empty() ? "" : ";") + p->specs()[i].name + "=" + p->text(i);
  return t;
}
inline std::string params_text(const Params* p) {
  return params_text(p, [](const ParamSpec&) { return true; });
}

}  // namespace mv
