// Scene, Scheduling (with the megakernel's settings) and Tone mapping sections of the control window.
#include <imgui.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "app/gui/panel_sections.h"
#include "app/gui/param_widgets.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "render/pathtracer/scene_io.h"

namespace mv::gui {

namespace {

constexpr uint32_t kMaxWaveSize = 1u << 24;

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

void check_resolution(int width, int height) {
  for (const auto& [name, v] : {std::pair{"width", width}, std::pair{"height", height}})
    if (v < kMinResolution || v > kMaxResolution)
      throw InputError("", "resolution", std::string(name) + " must be in [" + std::to_string(kMinResolution) +
                                             ", " + std::to_string(kMaxResolution) + "], got " + std::to_string(v));
}

void scene_picker(const Session& s, GuiState& st) {
  const std::string current = s.scene().source_path.empty() ? s.scene().name : stem_of(s.scene().source_path);
  if (!ImGui::BeginCombo("scene", current.c_str())) return;
  const std::string dir = default_scene_dir();
  for (const std::string& path : list_scene_files(dir)) {
    const bool selected = same_file(path, s.scene().source_path);
    if (ImGui::Selectable(stem_of(path).c_str(), selected) && !selected) {
      st.queue_rebuild(
          "Load scene " + stem_of(path), [path] { load_scene(path); },
          [path, &st](Session& session) {
            session.load_scene(path);
            st.file_camera = session.scene().camera;
          });
    }
    if (selected) ImGui::SetItemDefaultFocus();
  }
  ImGui::EndCombo();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("scene files in %s", dir.c_str());
}

void resolution_fields(GuiState& st) {
  // Both fields, the "x" and Apply share the item width the other rows use, so the label lines up
  // with theirs instead of running past the panel's edge.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float apply = ImGui::CalcTextSize("Apply").x + 2.f * style.FramePadding.x;
  const float fields = ImGui::CalcItemWidth() - apply - ImGui::CalcTextSize("x").x - 3.f * style.ItemSpacing.x;
  ImGui::PushItemWidth(std::max(0.5f * fields, ImGui::GetFontSize() * 2.f));
  ImGui::InputInt("##width", &st.edit_width, 0);
  ImGui::SameLine();
  ImGui::TextUnformatted("x");
  ImGui::SameLine();
  ImGui::InputInt("##height", &st.edit_height, 0);
  ImGui::PopItemWidth();
  ImGui::SameLine();
  if (ImGui::Button("Apply")) {
    const int w = st.edit_width, h = st.edit_height;
    st.queue_rebuild(
        "Apply resolution " + std::to_string(w) + "x" + std::to_string(h), [w, h] { check_resolution(w, h); },
        [w, h](Session& session) { session.set_resolution(w, h); });
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("resolution");
}

void sampling_fields(const Session& s, GuiState& st) {
  const SessionOptions& o = s.options();
  uint32_t target = o.task.target_spp;
  const uint32_t hundred = 100;
  if (ImGui::InputScalar("target spp", ImGuiDataType_U32, &target, &hundred, &hundred, "%u",
                         ImGuiInputTextFlags_EnterReturnsTrue)) {
    st.queue("Set target spp", [target](Session& session) {
      if (target < 1 || target > static_cast<uint32_t>(kMaxTargetSpp))
        throw InputError("", "target spp", "must be in [1, " + std::to_string(kMaxTargetSpp) + "], got " +
                                               std::to_string(target));
      session.set_target_spp(target);
    });
  }
  int ppp = static_cast<int>(o.task.paths_per_pixel);
  if (ImGui::SliderInt("paths/pixel/task", &ppp, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp))
    st.queue("Set paths per pixel", [ppp](Session& session) { session.set_paths_per_pixel(static_cast<uint32_t>(ppp)); });
  help_marker("Samples each pixel of a 4x4 patch gets per task execution (1..64).");

  uint64_t per_frame = o.paths_per_frame;
  const uint64_t step = 10000, step_fast = 1000000;
  if (ImGui::InputScalar("paths/frame", ImGuiDataType_U64, &per_frame, &step, &step_fast, "%llu",
                         ImGuiInputTextFlags_EnterReturnsTrue))
    st.queue("Set paths per frame", [per_frame](Session& session) { session.set_paths_per_frame(per_frame); });
  help_marker("Sample budget of one frame. 0 = auto: about the frame budget below of rendering work.");
  ImGui::BeginDisabled(o.paths_per_frame > 0);
  float budget = static_cast<float>(o.frame_budget_ms);
  if (ImGui::SliderFloat("frame budget", &budget, 1.f, 100.f, "%.1f ms", ImGuiSliderFlags_AlwaysClamp))
    st.queue("Set frame budget", [budget](Session& session) { session.set_frame_budget_ms(budget); });
  ImGui::EndDisabled();

  uint32_t seed = o.task.seed;
  if (ImGui::InputScalar("seed", ImGuiDataType_U32, &seed, nullptr, nullptr, "%u",
                         ImGuiInputTextFlags_EnterReturnsTrue))
    st.queue("Set seed", [seed](Session& session) { session.set_seed(seed); }, true);
}

}  // namespace

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

void tip(const char* text) {
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", text);
}

void hint(const char* fmt, ...) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::PushTextWrapPos(0.f);
  va_list args;
  va_start(args, fmt);
  ImGui::TextV(fmt, args);
  va_end(args);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

void scene_section(const Session& s, GuiState& st) {
  if (!ImGui::CollapsingHeader("Scene", ImGuiTreeNodeFlags_DefaultOpen)) return;
  scene_picker(s, st);
  resolution_fields(st);
  sampling_fields(s, st);
  if (ImGui::Button(st.paused ? "Resume" : "Pause")) st.paused = !st.paused;
  ImGui::SameLine();
  if (ImGui::Button("Reset")) st.queue("Reset", [](Session& session) { session.reset(); }, true);
  ImGui::SameLine();
  if (ImGui::Button("Reset camera")) {
    const Camera cam = st.file_camera;
    st.queue("Reset camera", [cam](Session& session) { session.set_camera(cam); }, true);
  }
  hint("drag: orbit, right/shift-drag: pan, wheel: zoom");
}

std::string strategy_picker(const char* label, const std::string& current, WorkloadKind kind, bool gpu,
                            const std::string& no_gpu_reason, const std::string& lattice,
                            const std::vector<std::string>* available) {
  std::string picked;
  if (!ImGui::BeginCombo(label, current.c_str())) return picked;
  for (const CatalogueEntry& e : strategy_catalogue()) {
    const StrategyInfo& info = e.info;
    const std::string why_not = e.why_not(kind, lattice);
    const bool no_gpu = available ? std::find(available->begin(), available->end(), info.name) == available->end()
                                  : info.needs_gpu() && !gpu;
    const bool selected = info.name == current;
    const std::string text = info.name + (info.needs_gpu() ? "  [GPU]" : "  [CPU]");
    ImGui::BeginDisabled(!why_not.empty() || no_gpu);
    if (ImGui::Selectable(text.c_str(), selected) && !selected) picked = info.name;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      const std::string about = info.description + " (" + info.section + ")";
      const std::string tooltip = !why_not.empty() ? about + "\nnot here: " + why_not
                                  : no_gpu         ? about + "\nneeds a CUDA device: " + no_gpu_reason
                                                   : about;
      ImGui::SetTooltip("%s", tooltip.c_str());
    }
    if (selected) ImGui::SetItemDefaultFocus();
  }
  ImGui::EndCombo();
  return picked;
}

void strategy_combo(const Session& s, GuiState& st, Target target, const char* label) {
  const std::string name = strategy_picker(label, s.strategy().name, WorkloadKind::Film, s.gpu_in_use(), s.cpu_reason());
  if (!name.empty())
    st.queue_on(target, std::string(target == Target::Right ? "Set right strategy " : "Set strategy ") + name,
                [name](Session& session) { session.set_strategy(name); });
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s.strategy().description.c_str());
}

void priority_combo(const Session& s, GuiState& st, Target target, const char* label) {
  const PriorityFunction current = s.options().task.priority;
  if (ImGui::BeginCombo(label, priority_name(current))) {
    for (int i = 0; i < kNumPriorityFunctions; ++i) {
      const auto f = static_cast<PriorityFunction>(i);
      if (ImGui::Selectable(priority_name(f), f == current) && f != current)
        st.queue_on(target, std::string(target == Target::Right ? "Set right priority " : "Set priority ") + priority_name(f),
                    [f](Session& session) { session.set_priority(f); });
    }
    ImGui::EndCombo();
  }
}

/// The knobs of `session`'s strategy (its ParamTable, base/params.h: the megakernel's, Kerbl 2012 §3–§5;
/// cuda-global-queue's work unit) as a tree node, live: every change is queued for `target` through
/// Session::set_knob and read by the next step; the film is kept (a new queue design, segment size or
/// blocks per SM rebuilds the megakernel's queue from it). Tooltips give each knob's doc, source section
/// and range. Nothing when the strategy has no knobs.
void strategy_knobs(const Session& session, GuiState& st, Target target, const std::string& title) {
  const Params* knobs = session.strategy_params();
  if (!knobs) return;
  const std::string node = title + "###knobs-" + session.strategy().name;  // the ID stays when the title changes
  if (!ImGui::TreeNodeEx(node.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  param_widgets(*knobs, [&st, target](const std::string& name, const std::string& text) {
    st.queue_on(target, "Set " + name + " " + text, [name, text](Session& s) { s.set_knob(name, text); });
  });
  ImGui::TreePop();
}

void scheduling_section(const Session& s, const Session* right, GuiState& st) {
  if (!ImGui::CollapsingHeader("Scheduling", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const char* const both_tip =
      "Split view: the right side's strategy and priority are in the Split view section; wave size,\n"
      "block size and the strategies' settings apply to both sides, so the two differ only in strategy\n"
      "and priority (a fair comparison).";
  if (right) {
    hint("split view: strategy and priority of the left side");
    tip(both_tip);
  }
  strategy_combo(s, st, Target::Left, right ? "left strategy" : "strategy");
  priority_combo(s, st, Target::Left, right ? "left priority" : "priority");
  if (right) {
    hint("split view: the settings below apply to both sides");
    tip(both_tip);
  }

  const ScheduleSettings& sched = s.options().schedule;
  uint32_t wave = sched.wave_size;
  const uint32_t wave_step = 1024, wave_fast = 65536;
  if (ImGui::InputScalar("wave size K", ImGuiDataType_U32, &wave, &wave_step, &wave_fast, "%u",
                         ImGuiInputTextFlags_EnterReturnsTrue)) {
    const uint32_t k = std::min(std::max(wave, 1u), kMaxWaveSize);
    st.queue_on(Target::Both, "Set wave size", [k](Session& session) { session.schedule().wave_size = k; });
  }
  help_marker("Tasks per priority wave (sorted-waves and the CPU strategies' priority order), 1..2^24.");
  int block = static_cast<int>(sched.block_size);
  if (ImGui::InputInt("block size", &block, 32, 128, ImGuiInputTextFlags_EnterReturnsTrue)) {
    const uint32_t b = static_cast<uint32_t>(std::min(std::max((block + 16) / 32 * 32, 32), 1024));
    st.queue_on(Target::Both, "Set block size", [b](Session& session) { session.schedule().block_size = b; });
  }
  help_marker("GPU threads per block of the task kernels (the megakernel's blocks, controllers included: Kerbl 6.1): "
              "a multiple of 32 in 32..1024.");
  // The strategies' knobs, generated from their tables: both sides hold the same knobs (Session::set_knob
  // keeps a knob for a strategy that runs later), so the two sides differ only in strategy and priority.
  const char* const both = right ? ", both sides" : "";
  strategy_knobs(s, st, Target::Both, s.strategy().name + " settings" + both);
  if (right && right->strategy().name != s.strategy().name)
    strategy_knobs(*right, st, Target::Both, right->strategy().name + " settings" + both);
}

void tonemap_section(GuiState& st, const Display& display) {
  // Closed at first, so that the MSE section below fits the default window; one click opens it.
  if (!ImGui::CollapsingHeader("Tone mapping")) return;
  ToneMapSettings& tm = st.tonemap;
  int mode = static_cast<int>(tm.mode);
  if (ImGui::Combo("mode", &mode, "exposure\0max-to-white\0")) tm.mode = static_cast<ToneMapMode>(mode);
  ImGui::BeginDisabled(tm.mode != ToneMapMode::Exposure);
  ImGui::SliderFloat("exposure", &tm.exposure_ev, -20.f, 20.f, "%+.2f EV", ImGuiSliderFlags_AlwaysClamp);
  ImGui::EndDisabled();
  ImGui::SliderFloat("gamma", &tm.gamma, 0.1f, 10.f, "%.2f", ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic);
  ImGui::Checkbox("heat map", &tm.heat_map);
  help_marker("Colours each 4x4 patch by its samples per pixel / target (dark blue: none, yellow: done).");
  ImGui::BeginDisabled(!tm.heat_map);
  ImGui::SliderFloat("opacity", &tm.heat_opacity, 0.f, 1.f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
  ImGui::EndDisabled();
  ImGui::BeginDisabled(!display.interop_active());
  ImGui::Checkbox("copy through host", &st.force_host_copy);
  ImGui::EndDisabled();
  tip("Display through a host download + glTexSubImage2D instead of CUDA-GL interop\n"
      "(to compare the two paths; needs working interop).");
}

}  // namespace mv::gui
