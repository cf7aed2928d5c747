// Progress, MSE and Capture sections of the control window.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>

#include "app/gui/panel_sections.h"

namespace mv::gui {

namespace {

/// "12.3 M" style: value with an SI prefix, 3 significant digits.
std::string si(double v) {
  const char* prefixes[] = {"", " k", " M", " G", " T"};
  int i = 0;
  while (v >= 1000.0 && i < 4) {
    v /= 1000.0;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, prefixes[i]);
  return buf;
}

}  // namespace

void progress_section(const Session& s, const GuiState& st, const DisplayStats& d) {
  if (!ImGui::CollapsingHeader("Progress", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const FrameStats& fs = s.last();
  const uint32_t target = s.options().task.target_spp;
  const double spp = mean_spp(s);
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "%.1f / %u spp", spp, target);
  ImGui::ProgressBar(static_cast<float>(std::min(1.0, spp / std::max(1u, target))), ImVec2(-1.f, 0.f), overlay);
  ImGui::Text("patches done  %u / %u%s", fs.finished_tasks, fs.num_tasks, fs.done ? "  (converged)" : "");
  ImGui::Text("samples/s     %s", st.paths_per_second.valid() ? si(st.paths_per_second.value()).c_str() : "-");
  ImGui::Text("render        %.2f ms/frame, %s paths", fs.frame_ms, si(static_cast<double>(fs.step.paths)).c_str());
  ImGui::Text("frame         %.2f ms, %.1f fps", st.frame_ms.value(), st.fps());
  ImGui::Text("busy          %.0f ms", fs.total_busy_ms);
  if (d.path == DisplayPath::Cpu)
    ImGui::Text("display       %.2f ms + draw %.2f ms", d.update_ms, d.draw_ms);
  else
    ImGui::Text("display       %.2f ms (GPU %.3f) + draw %.2f", d.update_ms, d.device_ms, d.draw_ms);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Last film update: tone map + copy into the texture (CPU wall clock; GPU part by CUDA events).\n"
                      "Mean over %llu updates: %.2f ms CPU, %.3f ms GPU.",
                      static_cast<unsigned long long>(d.updates), d.mean_update_ms(), d.mean_device_ms());
}

void mse_section(const Session& s, const GuiState& st) {
  if (!ImGui::CollapsingHeader("MSE", s.has_reference() ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return;
  if (!s.has_reference()) {
    ImGui::TextDisabled("no reference image for this scene at %ux%u", s.width(), s.height());
    return;
  }
  ImGui::TextDisabled("reference: %s", s.reference_path().c_str());
  if (!st.mse.has_value()) {
    ImGui::TextUnformatted("MSE  -");
    return;
  }
  ImGui::Text("MSE  %.4e", st.mse.current());
  const auto& h = st.mse.log10_history();
  char overlay[48];
  std::snprintf(overlay, sizeof overlay, "log10 MSE, last %zu samples", h.size());
  ImGui::SetNextItemWidth(-FLT_MIN);  // full width (PlotLines takes only 0 = item width, not -1)
  ImGui::PlotLines("##mse", h.data(), static_cast<int>(h.size()), 0, overlay, FLT_MAX, FLT_MAX, ImVec2(0.f, 90.f));
}

void capture_section(GuiState& st) {
  if (!ImGui::CollapsingHeader("Capture", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (ImGui::Button("Screenshot (F12)")) st.capture_requested = true;
  if (st.capture_message.empty()) return;
  if (st.capture_failed)
    ImGui::TextColored(ImVec4(1.f, 0.4f, 0.4f, 1.f), "%s", st.capture_message.c_str());
  else
    ImGui::TextWrapped("saved %s", st.capture_message.c_str());
}

}  // namespace mv::gui
