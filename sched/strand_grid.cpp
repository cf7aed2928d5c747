#include "sched/strand_grid.h"

#include <vector>

#include "base/errors.h"

namespace mv {

namespace {

std::string s(std::string_view v) { return std::string(v); }

const char* kForm = "expected \"auto\" or \"n,b[,c]\" (n blocks, b threads per block, c strands per work unit)";

}  // namespace

std::string GridConfig::str() const {
  if (automatic) return "auto";
  return std::to_string(blocks) + "," + std::to_string(threads) + "," + std::to_string(work_unit);
}

void validate_grid(const GridConfig& g, std::string_view field) {
  if (g.automatic) {
    if (g.work_unit < 1 || g.work_unit > kMaxWorkUnit)
      throw InputError("", s(field),
                       "work unit c = " + std::to_string(g.work_unit) + " is out of range [1, " +
                           std::to_string(kMaxWorkUnit) + "]");
    return;
  }
  if (g.blocks < 1 || g.blocks > kMaxGridBlocks)
    throw InputError("", s(field),
                     "blocks n = " + std::to_string(g.blocks) + " is out of range [1, " +
                         std::to_string(kMaxGridBlocks) + "]");
  if (g.threads < kMinGridThreads || g.threads > kMaxGridThreads || g.threads % 32 != 0)
    throw InputError("", s(field),
                     "threads per block b = " + std::to_string(g.threads) +
                         " must be a multiple of 32 in [32, 1024]");
  if (g.work_unit < 1 || g.work_unit > kMaxWorkUnit)
    throw InputError("", s(field),
                     "work unit c = " + std::to_string(g.work_unit) + " is out of range [1, " +
                         std::to_string(kMaxWorkUnit) + "]");
}

GridConfig make_grid(uint32_t blocks, uint32_t threads, uint32_t work_unit, std::string_view field) {
  GridConfig g;
  g.automatic = false;
  g.blocks = blocks;
  g.threads = threads;
  g.work_unit = work_unit;
  validate_grid(g, field);
  return g;
}

GridConfig parse_grid(std::string_view text, std::string_view field) {
  if (text == "auto") return GridConfig{};
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (parts.size() < 2 || parts.size() > 3)
    throw InputError("", s(field), std::string(kForm) + ", got \"" + s(text) + "\"");
  static const char* const names[3] = {"blocks n", "threads per block b", "work unit c"};
  uint64_t v[3] = {0, 0, 1};
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string_view t = parts[i];
    if (t.empty() || t.find_first_not_of("0123456789") != std::string_view::npos)
      throw InputError("", s(field),
                       std::string(names[i]) + " \"" + s(t) + "\" is not a non-negative integer; " + kForm +
                           ", got \"" + s(text) + "\"");
    uint64_t x = 0;
    for (char ch : t) {
      x = x * 10 + static_cast<uint64_t>(ch - '0');
      if (x > 0xffffffffull) break;  // too large for any field; reported against its range below
    }
    if (x > 0xffffffffull) {
      const std::string range = i == 0   ? "[1, " + std::to_string(kMaxGridBlocks) + "]"
                                : i == 1 ? "a multiple of 32 in [32, 1024]"
                                         : "[1, " + std::to_string(kMaxWorkUnit) + "]";
      throw InputError("", s(field), std::string(names[i]) + " = " + s(t) + " is out of range " + range);
    }
    v[i] = x;
  }
  return make_grid(static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]), static_cast<uint32_t>(v[2]), field);
}

}  // namespace mv
