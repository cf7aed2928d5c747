// Name → factory registries (docs/architecture.md, "Registries"): the patch strategies (sched/strategy.h) and
// the strand strategies (sched/strand_strategy.h) are both kept in one of these, in registration order;
// the GUI combo boxes and the CLI's --strategy options list and look up names here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/errors.h"

namespace mv {

/// Entries of `Info` (which has a `std::string name`) with a factory of `Product`s. `noun` names what is
/// registered in the error of find() ("strategy", "strand strategy").
template <class Info, class Product>
class NamedRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Product>()>;
  struct Entry {
    Info info;
    Factory make;
  };
  /// `stamp` (may be empty) edits every info record as it is added: what all entries of this registry share.
  explicit NamedRegistry(std::string noun, std::function<void(Info&)> stamp = {})
      : noun_(std::move(noun)), stamp_(std::move(stamp)) {}
  void add(Info info, Factory make) {
    if (stamp_) stamp_(info);
    entries_.push_back({std::move(info), std::move(make)});
  }
  const std::vector<Entry>& entries() const { return entries_; }
  /// Throws InputError("", "strategy", …) listing the registered names if `name` is unknown.
  const Entry& find(std::string_view name) const {
    for (const Entry& e : entries_)
      if (e.info.name == name) return e;
    throw InputError("", "strategy",
                     "unknown " + noun_ + " \"" + std::string(name) + "\" (allowed: " + joined_names() + ")");
  }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const Entry& e : entries_) n.push_back(e.info.name);
    return n;
  }
  /// "a, b, c": the names in registration order.
  std::string joined_names() const {
    std::string s;
    for (const Entry& e : entries_) s += (s.empty() ? "" : ", ") + e.info.name;
    return s;
  }

 private:
  std::string noun_;
  std::function<void(Info&)> stamp_;
  std::vector<Entry> entries_;
};

}  // namespace mv
