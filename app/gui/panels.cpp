#include "app/gui/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "app/gui/panel_sections.h"
#include "app/gui/gui_state.h"
#include "render/gpu.h"

namespace mv::gui {

namespace {
constexpr float kMargin = 8.f;
/// The control window's default width in font sizes (about 420 screen units at ImGui's 13-unit font): the
/// widest row, the resolution fields with Apply and their label, fits.
constexpr float kPanelWidthFonts = 32.f;

/// Height of the status bar with `lines` lines of text.
float status_bar_height(int lines) {
  const ImGuiStyle& style = ImGui::GetStyle();
  return static_cast<float>(lines) * ImGui::GetFrameHeight() + static_cast<float>(lines - 1) * style.ItemSpacing.y +
         2.f * style.WindowPadding.y;
}
}  // namespace

float draw_control_window(const Session& s, const Session* right, GuiState& st, const Display& display) {
  // Docked to the left border from the top down to the status bar, whatever the window's size; the user
  // sets its width (kept in the settings file with ImGui's other window settings) and scrolls its contents.
  const ImVec2 screen = ImGui::GetIO().DisplaySize;
  const float height =
      std::max(screen.y - status_bar_height(right && st.film_mode() ? 2 : 1), ImGui::GetFrameHeight());
  const float min_width = std::min(ImGui::GetFontSize() * 20.f, screen.x);
  const float max_width = std::max(min_width, 0.6f * screen.x);
  ImGui::SetNextWindowPos(ImVec2(0.f, 0.f), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(std::clamp(ImGui::GetFontSize() * kPanelWidthFonts, min_width, max_width), height),
                           ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSizeConstraints(ImVec2(min_width, height), ImVec2(max_width, height));
  float image_left = 0.f;
  if (ImGui::Begin("Render", nullptr, ImGuiWindowFlags_NoMove)) {
    ImGui::PushItemWidth(ImGui::GetFontSize() * -9.f);  // leave room for the labels
    workload_picker(st);
    if (st.strands.active()) {
      strands_section(st);
    } else if (st.lattice.active()) {
      lattice_section(st);
    } else {
      scene_section(s, st);
      scheduling_section(s, right, st);
      tonemap_section(st, display);
      progress_section(s, st, display.stats());
      megakernel_section(s, right, st);
      split_section(s, right, st);
      mse_section(s, right, st);
    }
    capture_section(st);
    ImGui::PopItemWidth();
    image_left = ImGui::GetWindowPos().x + ImGui::GetWindowSize().x;
  }
  ImGui::End();
  return image_left;
}

float draw_status_bar(const Session& s, const Session* right, const GuiState& st, const DisplayStats& d) {
  // A fixed window along the bottom border: one line, two in split view (the right side's on its own).
  const ImVec2 screen = ImGui::GetIO().DisplaySize;
  const float height = status_bar_height(right && st.film_mode() ? 2 : 1);
  ImGui::SetNextWindowPos(ImVec2(0.f, screen.y - height));
  ImGui::SetNextWindowSize(ImVec2(screen.x, height));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (ImGui::Begin("##status", nullptr, flags)) {
    const GpuInfo& gpu = gpu_info();
    const std::string device = gpu.available ? gpu.name : "no GPU";
    ImGui::AlignTextToFramePadding();
    if (const StrandState& ss = st.strands; ss.active()) {
      char run[160] = "-";
      if (!ss.running.empty())
        std::snprintf(run, sizeof run, "running %s", ss.running.c_str());
      else if (ss.last && ss.last->error.empty())
        std::snprintf(run, sizeof run, "%s %.3f ms", ss.last->strategy.c_str(), ss.last->ms);
      ImGui::Text("strands: %s  |  %s  |  %s  |  %s  |  %.0f fps", ss.workload.c_str(), ss.strategy.c_str(),
                  run, device.c_str(), st.fps());
      ImGui::End();
      return height;
    }
    if (const LatticeState& ls = st.lattice; ls.active()) {
      ImGui::Text("lattice: %s  |  %s  |  %s%.0f steps/s  |  %s  |  %.0f fps", ls.workload.c_str(),
                  ls.run ? ls.run->strategy().c_str() : "-", ls.paused ? "PAUSED  |  " : "",
                  ls.steps_per_second.value(), device.c_str(), st.fps());
      ImGui::End();
      return height;
    }
    ImGui::Text("%s%s  |  %s  |  %s/%s  |  %.1f spp  |  %.0f fps  |  display %.2f ms", st.paused ? "PAUSED  |  " : "",
                d.label.empty() ? "-" : d.label.c_str(), device.c_str(), s.strategy().name.c_str(),
                priority_name(s.options().task.priority), mean_spp(s), st.fps(), d.update_ms + d.draw_ms);
    if (!d.interop_failure.empty() && ImGui::IsItemHovered())
      ImGui::SetTooltip("CUDA-GL interop unavailable: %s", d.interop_failure.c_str());
    if (right) {
      ImGui::AlignTextToFramePadding();
      ImGui::Text("split view: left %s/%s %.1f spp  |  right %s/%s %.1f spp", s.strategy().name.c_str(),
                  priority_name(s.options().task.priority), mean_spp(s), right->strategy().name.c_str(),
                  priority_name(right->options().task.priority), mean_spp(*right));
    }
  }
  ImGui::End();
  return height;
}

void draw_error_window(GuiState& st, float image_left) {
  if (st.error.empty()) return;
  const ImVec2 screen = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(0.5f * (image_left + screen.x), 3.f * kMargin), ImGuiCond_Appearing, ImVec2(0.5f, 0.f));
  if (st.error_raise) ImGui::SetNextWindowFocus();
  st.error_raise = false;
  ImGui::SetNextWindowSizeConstraints(ImVec2(320.f, 0.f), ImVec2(screen.x - image_left, screen.y * 0.6f));
  ImGui::PushStyleColor(ImGuiCol_TitleBg, ImVec4(0.55f, 0.08f, 0.08f, 1.f));
  ImGui::PushStyleColor(ImGuiCol_TitleBgActive, ImVec4(0.75f, 0.10f, 0.10f, 1.f));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.22f, 0.05f, 0.05f, 0.95f));
  if (ImGui::Begin("Error", nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + 0.9f * (screen.x - image_left) - 2.f * kMargin);
    ImGui::TextColored(ImVec4(1.f, 0.75f, 0.75f, 1.f), "%s", st.error.c_str());
    ImGui::PopTextWrapPos();
    if (st.error_count > 1) ImGui::TextDisabled("(%d errors; the latest is shown)", st.error_count);
    if (ImGui::Button("Dismiss")) {
      st.error.clear();
      st.error_count = 0;
    }
  }
  ImGui::End();
  ImGui::PopStyleColor(3);
}

}  // namespace mv::gui
