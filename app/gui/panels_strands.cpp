// The control window's workload picker and the Strands section (strand mode). Like the
// other sections it only edits GuiState: the frame loop (Viewer::strand_frame) validates the settings,
// starts the runs and fills in the rows.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/session/lattice_run.h"
#include "app/session/strand_workloads.h"
#include "app/gui/panel_sections.h"
#include "app/gui/param_widgets.h"

namespace mv::gui {

namespace {

void changed(StrandState& ss) {
  if (ss.auto_run) ss.run_requested = true;
}

void strand_strategy_combo(StrandState& ss) {
  const std::string name = strategy_picker("strategy", ss.strategy, WorkloadKind::Strands, ss.gpu, ss.no_gpu_reason);
  if (!name.empty()) {
    ss.strategy = name;
    changed(ss);
  }
}

void settings_fields(const StrategyInfo& info, StrandState& ss) {
  ImGui::BeginDisabled(!info.uses_grid);
  if (ImGui::Checkbox("auto grid", &ss.grid_auto)) changed(ss);
  help_marker("Auto: each GPU strategy picks n blocks of b threads with the CUDA occupancy API (one full wave). "
              "Otherwise n in [1, 67107840], b a multiple of 32 in [32, 1024] (Lehmann 2023 Appendix A). CPU "
              "strategies ignore the grid.");
  ImGui::BeginDisabled(ss.grid_auto);
  const ImGuiInputTextFlags enter = ImGuiInputTextFlags_EnterReturnsTrue;
  if (ImGui::InputScalar("blocks n", ImGuiDataType_U32, &ss.grid_n, nullptr, nullptr, "%u", enter)) changed(ss);
  if (ImGui::InputScalar("threads b", ImGuiDataType_U32, &ss.grid_b, nullptr, nullptr, "%u", enter)) changed(ss);
  ImGui::EndDisabled();
  ImGui::EndDisabled();

  // The knobs this strategy reads, generated from strand_params() (sched/strand_strategy.h).
  BoundParams<StrandRunSettings> knobs(strand_params(), ss.knobs);
  edit_params(knobs, [&ss] { changed(ss); }, [&info](const ParamSpec& spec) { return info.reads(spec.name); });

  ImGui::SliderFloat("fill-in replay s", &ss.fill_in_seconds, 0.f, 10.f, "%.1f");
  tip("after each run, replay its strands in the order they finished over this many seconds (a GPU run lasts "
      "milliseconds; the order is what differs between strategies). 0: show the finished image at once. The "
      "order is recorded with one atomic per warp step, noted in the run's timing. Applies from the next run.");

  ImGui::PushItemWidth(ImGui::GetContentRegionAvail().x * 0.3f);
  bool size_done = ImGui::InputInt("##sw", &ss.width, 0, 0, enter);
  ImGui::SameLine();
  ImGui::TextUnformatted("x");
  ImGui::SameLine();
  size_done |= ImGui::InputInt("##sh", &ss.height, 0, 0, enter);
  ImGui::PopItemWidth();
  ImGui::SameLine();
  ImGui::TextUnformatted("strands");
  if (size_done) changed(ss);
}

/// The view the mouse edits (orbit / pan / zoom on the image), its fields as widgets generated from
/// strand_view_knobs() (ctrl+click a slider to type a value), and "Reset view".
void view_fields(const StrandWorkloadEntry& w, StrandState& ss) {
  if (w.view_kind == StrandViewKind::Fixed) {
    ImGui::TextUnformatted("view: fixed (the scene's camera)");
    help_marker("This workload has no view of its own: its strands are the path tracer's patch tasks seen "
                "through the scene file's camera. Drag and wheel do nothing here; the path tracer mode has "
                "its camera controls.");
    return;  // nothing to edit or reset
  }
  ImGui::TextUnformatted("view");
  help_marker(w.view_kind == StrandViewKind::Orbit
                  ? "Drag on the image to orbit the volume (elevation within +-89 degrees), the wheel to move the "
                    "eye closer (distance x 0.9 per step) or away. The run restarts when the drag ends and after "
                    "each wheel step, or when a field below changes."
                  : "Drag on the image to pan the complex plane, the wheel to zoom around the cursor (half-height "
                    "x 0.9 per step). The run restarts when the drag ends and after each wheel step, or when a "
                    "field below changes.");
  const std::vector<std::string> names = strand_view_knob_names(w.view_kind);
  BoundParams<StrandViewParams> view(strand_view_knobs(), ss.view);
  edit_params(
      view, [&ss] { ss.run_requested = true; },
      [&names](const ParamSpec& spec) { return std::find(names.begin(), names.end(), spec.name) != names.end(); });
  ImGui::BeginDisabled(ss.view == StrandViewParams{});
  if (ImGui::Button("Reset view")) {
    ss.view = StrandViewParams{};
    ss.run_requested = true;
  }
  ImGui::EndDisabled();
  tip("back to the workload's default view (the bench's)");
}

/// The cells strategy, grid, ms (or "failed" with the error as tooltip) and launches of a run's row.
void run_cells(const StrandRunRow& r, bool mark_wall_clock) {
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(r.strategy.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(r.grid.c_str());
  ImGui::TableNextColumn();
  if (r.error.empty()) {
    ImGui::Text("%.3f%s", r.ms, mark_wall_clock && !r.cuda_events ? " (wall)" : "");
  } else {
    ImGui::TextColored(ImVec4(1.f, 0.4f, 0.4f, 1.f), "failed");
    tip(r.error.c_str());
  }
  ImGui::TableNextColumn();
  if (r.launches > 0)
    ImGui::Text("%u", r.launches);
  else
    ImGui::TextUnformatted("-");
}

void timing_line(const char* label, const StrandRunRow& r) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(label);
  run_cells(r, true);
}

void runs_tables(StrandState& ss) {
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ss.last && ImGui::BeginTable("##runs", 5, flags)) {
    for (const char* h : {"run", "strategy", "grid", "ms", "launches"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    timing_line("now", *ss.last);
    if (ss.previous) timing_line("before", *ss.previous);
    ImGui::EndTable();
  }
  if (ss.last && ss.last->error.empty()) {
    const StepStatistics& s = ss.last->steps;
    ImGui::Text("steps: %llu strands, mu %.2f, sigma %.2f, CV %.3f", static_cast<unsigned long long>(s.count), s.mean,
                s.sigma, s.cv);
    ImGui::Text("       min %u, max %u, %llu updates", s.min, s.max, static_cast<unsigned long long>(s.total));
    help_marker("Updates per strand until it is stable (Lehmann 2023 Fig 3.2): a high CV means the strands' work "
                "differs a lot, which the static BSP strategies handle worst.");
    const std::vector<float>& c = ss.last->active_curve;
    if (c.size() > 1) {
      const std::string label = "active strands by super-step (0 .. " + std::to_string(s.max) + ")";
      ImGui::PlotLines("##active", c.data(), static_cast<int>(c.size()), 0, label.c_str(), 0.f, c.front(),
                       ImVec2(ImGui::GetContentRegionAvail().x, 60.f));
      tip("strands still active after each super-step (those needing more updates): the BSP strategies launch "
          "all threads for every super-step while only these strands work; the long flat tail is what the "
          "global queue and the task strategies fill with other work");
    }
  }
  if (ImGui::RadioButton("image", !ss.heat_map)) ss.heat_map = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("steps heat map", ss.heat_map)) ss.heat_map = true;
  tip("steps per strand through the heat ramp, top colour = the run's largest step count");

  if (ss.per_strategy.empty() || !ImGui::TreeNodeEx("Last run per strategy", ImGuiTreeNodeFlags_DefaultOpen)) return;
  double seq_ms = 0.0;
  for (const StrandRunRow& r : ss.per_strategy)
    if (r.strategy == "sequential" && r.error.empty()) seq_ms = r.ms;
  if (ImGui::BeginTable("##per-strategy", 5, flags)) {
    for (const char* h : {"strategy", "grid", "ms", "launches", "vs seq"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const StrandRunRow& r : ss.per_strategy) {
      ImGui::TableNextRow();
      run_cells(r, false);
      ImGui::TableNextColumn();
      if (seq_ms > 0.0 && r.ms > 0.0 && r.error.empty())
        ImGui::Text("%.2fx", seq_ms / r.ms);
      else
        ImGui::TextUnformatted("-");
    }
    ImGui::EndTable();
  }
  ImGui::TreePop();
}

}  // namespace

void workload_picker(GuiState& st) {
  StrandState& ss = st.strands;
  const LatticeState& ls = st.lattice;
  const char* current = ss.active() ? ss.workload.c_str() : ls.active() ? ls.workload.c_str() : kPathTracerMode;
  if (ImGui::BeginCombo("workload", current)) {
    if (ImGui::Selectable(kPathTracerMode, st.film_mode()) && !st.film_mode()) ss.mode_request = kPathTracerMode;
    for (const StrandWorkloadEntry& w : strand_workloads()) {
      const bool selected = w.name == ss.workload;
      if (ImGui::Selectable(w.name.c_str(), selected) && !selected) ss.mode_request = w.name;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", w.description.c_str());
    }
    if (!lattice_workloads().empty()) ImGui::Separator();
    for (const LatticeWorkloadEntry& w : lattice_workloads()) {
      const bool selected = w.name == ls.workload;
      if (ImGui::Selectable(w.name.c_str(), selected) && !selected) ss.mode_request = w.name;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", w.description.c_str());
    }
    ImGui::EndCombo();
  }
  help_marker("path tracer (progressive): the progressive renderer with its scheduling strategies. A strand "
              "workload (Lehmann 2023): one run of a strand program per setting, with its strand strategies; "
              "path-tracer is the path tracer's patch tasks run that way, once, to a fixed spp. A lattice "
              "workload (below the line): a chain or an iteration on a 2D lattice that runs live, its kernel's "
              "grid configuration switching while it runs.");
  ImGui::Separator();
}

/// The workload's own knobs (StrandWorkloadEntry::knobs), generated like the strategies'.
void workload_fields(const StrandWorkloadEntry& w, StrandState& ss) {
  if (w.knobs.empty()) return;
  ImGui::Separator();
  ImGui::TextDisabled("%s", (w.name + "'s own knobs").c_str());
  TextParams knobs(w.knobs, ss.workload_knobs);
  edit_params(knobs, [&ss] { changed(ss); });
}

void strands_section(GuiState& st) {
  StrandState& ss = st.strands;
  if (!ImGui::CollapsingHeader("Strands", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const StrandWorkloadEntry& w = find_strand_workload(ss.workload);
  strand_strategy_combo(ss);
  const StrategyInfo* info = &w.strategies.front();
  for (const StrategyInfo& i : w.strategies)
    if (i.name == ss.strategy) info = &i;
  settings_fields(*info, ss);
  workload_fields(w, ss);
  view_fields(w, ss);
  if (ImGui::Button("Run")) ss.run_requested = true;
  ImGui::SameLine();
  ImGui::Checkbox("auto-run on change", &ss.auto_run);
  if (!ss.running.empty())
    ImGui::Text("running %s ... %.1f s", ss.running.c_str(), ImGui::GetTime() - ss.running_since_s);
  else
    ImGui::TextDisabled("idle");
  runs_tables(ss);
}

}  // namespace mv::gui
