// Names of an enum's values for the GUI, the CLI and the sidecars: one table per enum instead of a switch
// for the name and a loop for the parser.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "base/errors.h"

namespace mv {

/// The names of the values 0 … N−1 of enum E, in value order.
template <class E, size_t N>
struct EnumNames {
  std::array<const char*, N> names;

  /// The name of `e`; "?" for a value outside 0 … N−1.
  const char* operator()(E e) const {
    const auto i = static_cast<size_t>(e);
    return i < N ? names[i] : "?";
  }
  /// "a, b, c".
  std::string joined() const {
    std::string s;
    for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
  }
  /// Every value, in order.
  std::vector<E> values() const {
    std::vector<E> v;
    for (size_t i = 0; i < N; ++i) v.push_back(static_cast<E>(i));
    return v;
  }
  /// The value named `name` (exact); throws InputError("", field, "unknown <what> \"name\" (allowed: a, b, c)").
  E parse(const std::string& name, const std::string& field, const std::string& what) const {
    for (size_t i = 0; i < N; ++i)
      if (name == names[i]) return static_cast<E>(i);
    throw InputError("", field, "unknown " + what + " '" + name + "' (allowed: " + joined() + ")");
  }
};

}  // namespace mv
