#include "app/gui/param_widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace mv::gui {

namespace {

void spec_tooltip(const ParamSpec& s, bool active) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  std::string t = s.doc;
  if (!s.source.empty()) t += "\n(" + s.source + ")";
  t += "\nallowed: " + param_allowed_text(s) + "   CLI: --" + s.name;
  if (!active) t += "\nnot read now: only with " + s.when;
  ImGui::SetTooltip("%s", t.c_str());
}

/// The label shown: the name with spaces for dashes.
std::string label_of(const ParamSpec& s) {
  std::string l = s.name;
  std::replace(l.begin(), l.end(), '-', ' ');
  return l + "###" + s.name;
}

}  // namespace

bool param_widget(const Params& p, size_t i, std::string& text) {
  const ParamSpec& s = p.specs()[i];
  const bool active = p.active(i);
  const std::string label = label_of(s);
  if (s.kind == ParamKind::Text) {  // a field; Enter applies it
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%s", p.text(i).c_str());
    ImGui::BeginDisabled(!active);
    const bool entered = ImGui::InputText(label.c_str(), buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::EndDisabled();
    spec_tooltip(s, active);
    if (!entered || p.text(i) == buf) return false;
    text = buf;
    return true;
  }
  const double v = p.get(i);
  double chosen = v;
  bool changed = false;
  ImGui::BeginDisabled(!active);
  switch (s.kind) {
    case ParamKind::Bool: {
      bool b = v != 0.0;
      changed = ImGui::Checkbox(label.c_str(), &b);
      chosen = b ? 1.0 : 0.0;
      break;
    }
    case ParamKind::Choice: {
      int c = static_cast<int>(v);
      if (ImGui::BeginCombo(label.c_str(), p.text(i).c_str())) {
        for (int k = 0; k < static_cast<int>(s.choices.size()); ++k)
          if (ImGui::Selectable(s.choices[k].c_str(), k == c) && k != c) {
            chosen = k;
            changed = true;
          }
        ImGui::EndCombo();
      }
      break;
    }
    case ParamKind::Int: {
      if (s.power_of_two) {
        std::vector<std::string> names;
        int current = 0;
        for (double x = std::max(1.0, s.min); x <= s.max; x *= 2) {
          if (x == v) current = static_cast<int>(names.size());
          names.push_back(param_text(s, x));
        }
        if (ImGui::BeginCombo(label.c_str(), p.text(i).c_str())) {
          for (int k = 0; k < static_cast<int>(names.size()); ++k)
            if (ImGui::Selectable(names[k].c_str(), k == current) && k != current) {
              chosen = std::ldexp(std::max(1.0, s.min), k);
              changed = true;
            }
          ImGui::EndCombo();
        }
      } else if (s.max - s.min <= 65536) {
        int x = static_cast<int>(v);
        const int lo = s.zero_is_off ? 0 : static_cast<int>(s.min);
        const bool log = s.max >= 64 * std::max(1.0, s.min);
        changed = ImGui::SliderInt(label.c_str(), &x, lo, static_cast<int>(s.max),
                                   s.zero_is_off && x == 0 ? "off" : "%d",
                                   ImGuiSliderFlags_AlwaysClamp | (log ? ImGuiSliderFlags_Logarithmic : 0));
        // Values between "off" and the range's start snap to the start.
        chosen = (s.zero_is_off && x > 0 && x < s.min) ? s.min : x;
      } else {
        double x = v;
        changed = ImGui::InputDouble(label.c_str(), &x, 0.0, 0.0, "%.0f", ImGuiInputTextFlags_EnterReturnsTrue);
        chosen = std::floor(std::clamp(x, s.zero_is_off ? 0.0 : s.min, s.max));
        if (s.zero_is_off && chosen > 0 && chosen < s.min) chosen = s.min;
      }
      break;
    }
    case ParamKind::Real: {
      float x = static_cast<float>(v);
      const bool log = s.min > 0 && s.max >= 100 * s.min;
      changed = ImGui::SliderFloat(label.c_str(), &x, static_cast<float>(s.min), static_cast<float>(s.max), "%.3g",
                                   ImGuiSliderFlags_AlwaysClamp | (log ? ImGuiSliderFlags_Logarithmic : 0));
      chosen = std::clamp(static_cast<double>(x), s.min, s.max);
      break;
    }
    case ParamKind::Text: break;
  }
  ImGui::EndDisabled();
  spec_tooltip(s, active);
  if (!changed || chosen == v || !param_allows(s, chosen)) return false;
  text = param_text(s, chosen);
  return true;
}

bool begin_advanced_params() { return ImGui::TreeNode("more###advanced-params"); }
void end_advanced_params() { ImGui::TreePop(); }

}  // namespace mv::gui
