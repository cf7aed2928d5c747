#include "app/session/split.h"

#include <algorithm>
#include <cmath>

#include "app/session/session.h"
#include "base/errors.h"

namespace mv {

SplitSpec parse_split_spec(const std::string& text) {
  SplitSpec s;
  const size_t colon = text.find(':');
  s.strategy = text.substr(0, colon);
  if (colon != std::string::npos) s.priority = text.substr(colon + 1);
  const auto bad = [&](const std::string& why) {
    return InputError("--split", text, why + "; expected STRATEGY[:PRIORITY], e.g. megakernel:variance");
  };
  if (s.strategy.empty()) throw bad("no strategy");
  if (colon != std::string::npos && s.priority.empty()) throw bad("empty priority after ':'");
  try {
    patch_strategies().find(s.strategy);
    if (!s.priority.empty()) parse_priority(s.priority.c_str());
  } catch (const InputError& e) {
    throw bad(e.what());
  }
  return s;
}

PriorityFunction default_right_priority(PriorityFunction left) {
  return left == PriorityFunction::None ? PriorityFunction::Variance : PriorityFunction::None;
}

uint64_t split_follower_budget(uint64_t left_total_paths, uint64_t right_total_paths) {
  return left_total_paths > right_total_paths ? left_total_paths - right_total_paths : 0;
}

int split_column(float divider, int width) {
  if (width <= 0) return 0;
  const float d = std::isnan(divider) ? 0.5f : std::clamp(divider, 0.f, 1.f);
  return std::clamp(static_cast<int>(std::lround(d * static_cast<float>(width))), 0, width);
}

std::vector<MegakernelPanelSide> megakernel_panel_sides(const std::string& left_scheduling,
                                                        const MegakernelControl* left, bool split,
                                                        const std::string& right_scheduling,
                                                        const MegakernelControl* right) {
  if (!split) {
    if (!left) return {};
    return {MegakernelPanelSide{false, "", left}};
  }
  if (!left && !right) return {};
  return {MegakernelPanelSide{false, "left " + left_scheduling, left},
          MegakernelPanelSide{true, "right " + right_scheduling, right}};
}

std::vector<MegakernelPanelSide> megakernel_panel_sides(const Session& left, const Session* right) {
  return megakernel_panel_sides(scheduling_name(left), left.megakernel(), right != nullptr,
                                right ? scheduling_name(*right) : std::string(), right ? right->megakernel() : nullptr);
}

std::string scheduling_name(const Session& s) {
  return s.strategy().name + "/" + priority_name(s.options().task.priority);
}

}  // namespace mv
