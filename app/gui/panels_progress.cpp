// Progress, Megakernel, MSE and Capture sections of the control window.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>
#include <vector>

#include "app/session/megakernel_report.h"
#include "app/session/split.h"
#include "app/gui/panel_sections.h"
#include "render/gpu.h"

namespace mv::gui {

void progress_section(const Session& s, const GuiState& st, const DisplayStats& d) {
  if (!ImGui::CollapsingHeader("Progress", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const FrameStats& fs = s.last();
  const uint32_t target = s.options().task.target_spp;
  const double spp = mean_spp(s);
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "%.1f / %u spp", spp, target);
  ImGui::ProgressBar(static_cast<float>(std::min(1.0, spp / std::max(1u, target))), ImVec2(-1.f, 0.f), overlay);
  ImGui::Text("patches done  %u / %u%s", fs.finished_tasks, fs.num_tasks, fs.done ? "  (converged)" : "");
  ImGui::Text("samples/s     %s", st.paths_per_second.valid() ? si_text(st.paths_per_second.value()).c_str() : "-");
  ImGui::Text("render        %.2f ms/frame, %s paths", fs.frame_ms, si_text(static_cast<double>(fs.step.work)).c_str());
  ImGui::Text("frame         %.2f ms, %.1f fps", st.frame_ms.value(), st.fps());
  if (st.render_budget_ms > 0.0 && st.render_budget_ms > s.options().frame_budget_ms) {
    ImGui::Text("budget        %.1f ms (display etc. %.1f ms)", st.render_budget_ms, st.frame_overhead_ms.value());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("On the CPU the render budget grows with the rest of the frame (display, panels), so that\n"
                        "rendering gets about %.0f %% of each frame, up to %.0f ms; the frame budget setting is the least.",
                        100.0 * kCpuRenderShare, kMaxCpuRenderBudgetMs);
  }
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

void megakernel_section(const Session& s, const Session* right, const GuiState& st) {
  const std::vector<MegakernelPanelSide> sides = megakernel_panel_sides(s, right);
  if (sides.empty() || !ImGui::CollapsingHeader("Megakernel", ImGuiTreeNodeFlags_DefaultOpen)) return;
  // One column per side: its rows (megakernel_stat_lines: the same rows for every megakernel, so the
  // columns line up), or the one line that says why it has none.
  struct Column {
    std::vector<MegakernelStatLine> lines;
    std::string note;
  };
  std::vector<Column> columns;
  int with_rows = -1;  // a column that has rows: the row names are its labels
  for (const MegakernelPanelSide& side : sides) {
    Column c;
    if (!side.megakernel) {
      c.note = "not running the megakernel";
    } else if (side.megakernel->stats().slices == 0) {
      c.note = "no slice since the queue was (re)built";
    } else {
      const MegakernelRates& r = side.right ? st.split.megakernel_rates.rates() : st.megakernel_rates.rates();
      c.lines = megakernel_stat_lines(side.megakernel->stats(), r, gpu_info().clock_khz);
    }
    if (with_rows < 0 && !c.lines.empty()) with_rows = static_cast<int>(columns.size());
    columns.push_back(std::move(c));
  }
  if (with_rows < 0) {  // no side has numbers yet: one line per side
    for (size_t i = 0; i < sides.size(); ++i)
      hint("%s%s%s", sides[i].title.c_str(), sides[i].title.empty() ? "" : ": ", columns[i].note.c_str());
    return;
  }
  const bool split = right != nullptr;
  const int ncol = 1 + static_cast<int>(columns.size());
  if (!ImGui::BeginTable("##megakernel", ncol, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
  for (const MegakernelPanelSide& side : sides) ImGui::TableSetupColumn(side.title.c_str());
  if (split) ImGui::TableHeadersRow();  // "left <strategy>/<priority>", "right …"
  const ImVec4 red(1.f, 0.4f, 0.4f, 1.f);
  const std::vector<MegakernelStatLine>& labels = columns[static_cast<size_t>(with_rows)].lines;
  for (size_t row = 0; row < labels.size(); ++row) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const MegakernelStatLine& name = labels[row];
    ImGui::TextUnformatted(name.label.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.help.c_str());
    for (size_t c = 0; c < columns.size(); ++c) {
      ImGui::TableNextColumn();
      const Column& col = columns[c];
      if (col.lines.empty()) {  // a side without numbers: its note in the first row
        if (row == 0) hint("%s", col.note.c_str());
        continue;
      }
      const MegakernelStatLine& l = col.lines[row];
      if (l.alert)
        ImGui::TextColored(red, "%s", l.value.c_str());
      else if (l.dim)
        ImGui::TextDisabled("%s", l.value.c_str());
      else
        ImGui::TextUnformatted(l.value.c_str());
      if (ImGui::IsItemHovered()) {
        const std::string who = sides[c].title.empty() ? std::string() : sides[c].title + ": ";
        ImGui::SetTooltip("%s\n%s%s", l.help.c_str(), who.c_str(), l.detail.empty() ? l.value.c_str() : l.detail.c_str());
      }
    }
  }
  ImGui::EndTable();
}

void mse_section(const Session& s, const Session* right, const GuiState& st) {
  if (!ImGui::CollapsingHeader("MSE", s.has_reference() ? ImGuiTreeNodeFlags_DefaultOpen : 0)) return;
  if (!s.has_reference()) {
    hint("no reference image for this scene at %ux%u", s.width(), s.height());
    return;
  }
  hint("reference: %s", s.reference_path().c_str());
  if (!st.mse.has_value()) {
    ImGui::TextUnformatted("MSE  -");
    return;
  }
  const bool split = right && st.split.mse.has_value();
  if (split)
    ImGui::Text("MSE  left %.4e, right %.4e", st.mse.current(), st.split.mse.current());
  else
    ImGui::Text("MSE  %.4e", st.mse.current());
  const auto& h = st.mse.log10_history();
  // One scale for both curves; the right side's is drawn over the left's in another colour.
  float lo = FLT_MAX, hi = FLT_MAX;
  if (split) {
    lo = FLT_MAX;
    hi = -FLT_MAX;
    for (const auto* curve : {&h, &st.split.mse.log10_history()})
      for (float v : *curve) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  }
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, split ? "log10 MSE: left white, right amber" : "log10 MSE, last %zu samples",
                h.size());
  const ImVec2 size(0.f, 90.f);
  const ImVec2 origin = ImGui::GetCursorPos();
  ImGui::SetNextItemWidth(-FLT_MIN);  // full width (PlotLines takes only 0 = item width, not -1)
  ImGui::PlotLines("##mse", h.data(), static_cast<int>(h.size()), 0, overlay, lo, hi, size);
  if (split) {
    const auto& r = st.split.mse.log10_history();
    const ImVec2 after = ImGui::GetCursorPos();
    ImGui::SetCursorPos(origin);
    ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0.f, 0.f, 0.f, 0.f));
    ImGui::PushStyleColor(ImGuiCol_PlotLines, ImVec4(1.f, 0.78f, 0.f, 1.f));
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::PlotLines("##mse-right", r.data(), static_cast<int>(r.size()), 0, nullptr, lo, hi, size);
    ImGui::PopStyleColor(2);
    ImGui::SetCursorPos(after);
  }
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
