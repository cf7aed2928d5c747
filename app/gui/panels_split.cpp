// The Split view section of the control window (Kerbl 2012 Fig 8, §6.3).
#include <imgui.h>

#include <cstdio>
#include <string>

#include "app/session/split.h"
#include "app/gui/panel_sections.h"

namespace mv::gui {

namespace {

std::string rate_text(const Ema& e) {
  if (!e.valid()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", e.value());
  return buf;
}

std::string mse_text(bool valid, double v) {
  if (!valid) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4e", v);
  return buf;
}

}  // namespace

void split_section(const Session& left, const Session* right, GuiState& st) {
  if (!ImGui::CollapsingHeader("Split view", st.split.on ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return;
  SplitState& sp = st.split;
  bool on = sp.on;
  if (ImGui::Checkbox("split view", &on)) sp.request = on ? SplitState::Request::On : SplitState::Request::Off;
  tip("Kerbl 2012 Fig 8, live: the left part of the image from this session, the right part from a\n"
      "second session on the same scene, camera, seed and target spp with its own strategy and priority.\n"
      "Turning it on restarts the left film, so both start from zero.\n"
      "Equal budget: each frame the left side renders its frame budget (paths/frame, or about the frame\n"
      "budget in ms), then the right side renders the paths that bring its total up to the left's.");
  if (!sp.on || !right) {
    if (sp.strategy.empty()) sp.strategy = left.strategy().name;
    hint("right side when turned on: %s / %s", sp.strategy.c_str(), priority_name(sp.priority));
    return;
  }
  ImGui::PushID("split-right");
  strategy_combo(*right, st, Target::Right, "right strategy");
  priority_combo(*right, st, Target::Right, "right priority");
  ImGui::PopID();
  hint("wave, block size, megakernel: both sides (Scheduling)");
  tip("For a fair comparison the two sides differ only in strategy and priority: the Scheduling\n"
      "section's wave size, block size and strategy settings apply to both.");
  ImGui::SliderFloat("divider", &sp.divider, 0.f, 1.f, "%.3f", ImGuiSliderFlags_AlwaysClamp);
  tip("Fraction of the film's width shown from the left session; or drag the amber line in the image.");
  hint("equal paths: the right side follows the left's budget");

  if (ImGui::BeginTable("##split", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("left");
    ImGui::TableSetupColumn("right");
    ImGui::TableHeadersRow();
    const auto row = [](const char* name, const std::string& a, const std::string& b) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(name);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(b.c_str());
    };
    char a[32], b[32];
    row("scheduling", scheduling_name(left), scheduling_name(*right));
    std::snprintf(a, sizeof a, "%.2f", mean_spp(left));
    std::snprintf(b, sizeof b, "%.2f", mean_spp(*right));
    row("spp", a, b);
    std::snprintf(a, sizeof a, "%llu", static_cast<unsigned long long>(left.last().total_paths));
    std::snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(right->last().total_paths));
    row("paths", a, b);
    row("samples/s", rate_text(st.paths_per_second), rate_text(sp.paths_per_second));
    row("MSE film", mse_text(st.mse.has_value(), st.mse.current()), mse_text(sp.mse.has_value(), sp.mse.current()));
    row("MSE shown", mse_text(sp.shown_mse_valid, sp.left_shown_mse), mse_text(sp.shown_mse_valid, sp.right_shown_mse));
    ImGui::EndTable();
  }
  if (!left.has_reference()) hint("no reference image: no MSE");
}

}  // namespace mv::gui
