// The Lattice section (lattice mode): the run's kernel, its generated knobs, the view and the run's
// numbers. Like the other sections it only reads the run and queues its changes (LatticeState::queue);
// the frame loop applies them (Viewer::lattice_frame).
#include <imgui.h>

#include <string>
#include <vector>

#include "app/gui/panel_sections.h"
#include "app/gui/param_widgets.h"

namespace mv::gui {

namespace {

/// One report entry as text: numbers with four significant digits, strings as they are.
std::string report_text(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v.get<double>());
    return b;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return {};
}

void report_table(const nlohmann::json& report) {
  if (!report.is_object()) return;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##lattice-report", 2, flags)) return;
  for (const auto& [key, value] : report.items()) {
    if (key == "workload" || key == "strategy" || key == "knobs") continue;  // shown above as widgets
    const std::string text = report_text(value);
    if (text.empty()) continue;  // arrays and objects (the histogram) are drawn below
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(key.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(text.c_str());
  }
  ImGui::EndTable();
}

/// A numeric array "histogram" of the report as bars (counts of x = 0, 1, …).
void histogram(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("histogram") || !report["histogram"].is_array()) return;
  std::vector<float> bars;
  for (const nlohmann::json& v : report["histogram"])
    if (v.is_number()) bars.push_back(v.get<float>());
  if (bars.empty()) return;
  float top = 0.f;
  for (float b : bars) top = std::max(top, b);
  const std::string label = "histogram (0 .. " + std::to_string(bars.size() - 1) + ")";
  ImGui::PlotHistogram("##lattice-histogram", bars.data(), static_cast<int>(bars.size()), 0, label.c_str(), 0.f, top,
                       ImVec2(ImGui::GetContentRegionAvail().x, 60.f));
  tip("sites per value of the current sample, x = 0 at the left");
}

}  // namespace

void lattice_section(GuiState& st) {
  LatticeState& ls = st.lattice;
  if (!ImGui::CollapsingHeader("Lattice", ImGuiTreeNodeFlags_DefaultOpen) || !ls.run) return;
  LatticeRun& run = *ls.run;

  // The one strategy picker (app/session/strategy_catalogue.h): this workload's kernels that this run has.
  const std::vector<std::string> available = run.strategies();
  const std::string name = strategy_picker("kernel", run.strategy(), WorkloadKind::Lattice, st.strands.gpu,
                                           "this run has " + available.front() + " only (" +
                                               st.strands.no_gpu_reason + ")",
                                           run.workload(), &available);
  if (!name.empty()) ls.queue("Set strategy " + name, [name](LatticeRun& r) { r.set_strategy(name); });
  tip("the kernel (strategy) that runs the super-steps; switching keeps the lattice's state");

  const Params& knobs = run.params();
  param_widgets(knobs, [&](const std::string& name, const std::string& text) {
    ls.queue("Set " + name + " " + text, lattice_knob_change(name, text));
  });
  hint("model settings restart the run; grid settings keep its state");

  const std::vector<std::string> views = run.views();
  for (size_t i = 0; i < views.size(); ++i) {
    if (i > 0) ImGui::SameLine();
    if (ImGui::RadioButton(views[i].c_str(), ls.view == i)) ls.view = i;
  }
  ImGui::Checkbox("pause", &ls.paused);
  ImGui::SameLine();
  if (ImGui::Button("Restart")) ls.queue("Restart", [](LatticeRun& r) { r.restart(); });
  ImGui::SliderFloat("ms per frame", &ls.budget_ms, 1.f, 100.f, "%.0f");
  tip("device time each frame gives the run's super-steps (advance); the rest of the frame draws the view");

  ImGui::Text("step %llu, %.0f steps/s (%llu this frame)", static_cast<unsigned long long>(run.steps()),
              ls.steps_per_second.value(), static_cast<unsigned long long>(ls.last_steps));
  report_table(ls.report);
  histogram(ls.report);
}

}  // namespace mv::gui
