// Scene, Scheduling (with the megakernel's settings) and Tone mapping sections of the control window.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "app/gui/panel_sections.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "render/scene_io.h"

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

/// The last item's tooltip, also while it is disabled.
void tip(const char* text) {
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", text);
}

/// A cycle count of the megakernel's settings, edited as a number (applied on Enter); its tooltip is
/// `help` and, with the GPU's clock known, the count in µs.
void cycles_field(const char* label, uint32_t value, GuiState& st, Target target, uint32_t MegakernelSettings::*field,
                  const std::string& help) {
  const uint32_t step = 1000, fast = 100000;
  if (ImGui::InputScalar(label, ImGuiDataType_U32, &value, &step, &fast, "%u", ImGuiInputTextFlags_EnterReturnsTrue))
    st.queue_megakernel(target, std::string("Set ") + label, [value, field](MegakernelSettings& m) { m.*field = value; });
  const int khz = gpu_info().clock_khz;
  char us[64] = "";
  if (khz > 0) std::snprintf(us, sizeof us, "\n%u cycles = %.1f us at the GPU's peak clock.", value, value / (khz * 1e-3));
  tip((help + us).c_str());
}

}  // namespace

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
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
  ImGui::TextDisabled("drag: orbit, right/shift-drag: pan, wheel: zoom");
}

void strategy_combo(const Session& s, GuiState& st, Target target, const char* label) {
  if (ImGui::BeginCombo(label, s.strategy().name.c_str())) {
    for (const auto& entry : patch_strategies().entries()) {
      const StrategyInfo& info = entry.info;
      const bool unavailable = info.side == Side::Device && !s.gpu_in_use();
      const bool selected = info.name == s.strategy().name;
      const std::string label_text = info.name + (info.side == Side::Device ? "  [GPU]" : "  [CPU]");
      if (ImGui::Selectable(label_text.c_str(), selected, unavailable ? ImGuiSelectableFlags_Disabled : 0) && !selected) {
        const std::string name = info.name;
        st.queue_on(target, std::string(target == Target::Right ? "Set right strategy " : "Set strategy ") + name,
                    [name](Session& session) { session.set_strategy(name); });
      }
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        if (unavailable)
          ImGui::SetTooltip("%s\nneeds a CUDA device: %s", info.description.c_str(), s.cpu_reason().c_str());
        else
          ImGui::SetTooltip("%s", info.description.c_str());
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
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

/// The megakernel's settings (sched/megakernel_settings.h), live while a side runs it: every change is
/// queued (GuiState::queue_megakernel) and read by the next slice; a new segment size or blocks per SM
/// rebuilds its queue from the film, which is kept. Tooltips cite Kerbl et al. 2012.
void megakernel_settings(const MegakernelSettings& m, GuiState& st, Target target, const char* title) {
  const std::string node = std::string(title) + "###megakernel-settings";  // the ID stays when the title changes
  if (!ImGui::TreeNodeEx(node.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;

  static const char* const kQueues[] = {"kerbl", "buckets", "quanta"};
  int queue = static_cast<int>(m.queue);
  if (ImGui::Combo("queue", &queue, kQueues, IM_ARRAYSIZE(kQueues))) {
    const QueueDesign d = static_cast<QueueDesign>(queue);
    st.queue_megakernel(target, std::string("Queue ") + queue_design_name(d), [d](MegakernelSettings& x) { x.queue = d; });
  }
  tip("How the workers order the patch tasks (the film is kept; the queue is rebuilt from it):\n"
      "kerbl: Kerbl 2012 exactly, one ring sorted by controller blocks (3-5). Every task still runs\n"
      "  once per turn-over of the ring, so on a large GPU the allocation stays uniform.\n"
      "buckets (default): K FIFO rings, a calendar queue over priority bands; workers serve the most\n"
      "  urgent non-empty band, so urgent patches run again before the others' next turn.\n"
      "quanta: one FIFO ring; a task draws priority-proportional sample batches per visit\n"
      "  (Q at the top, 1 at the median, 1/Q at the bottom, through a per-task credit).");
  if (m.queue == QueueDesign::Buckets) {
    int rings = static_cast<int>(m.buckets);
    if (ImGui::SliderInt("buckets K", &rings, 3, 32, "%d", ImGuiSliderFlags_AlwaysClamp)) {
      const uint32_t k = static_cast<uint32_t>(rings);
      st.queue_megakernel(target, "Set buckets " + std::to_string(k), [k](MegakernelSettings& x) { x.buckets = k; });
    }
    tip("Rings: urgent, a calendar window of K - 2 priority bands (four an octave) and the tasks below it\n"
        "(sched/priority_table.h). Rebuilds the queue.");
    int age = static_cast<int>(m.age_period);
    if (ImGui::SliderInt("age period", &age, 0, 1024, age == 0 ? "off" : "%d",
                         ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic)) {
      const uint32_t a = age == 1 ? 2u : static_cast<uint32_t>(age);
      st.queue_megakernel(target, "Set age period " + std::to_string(a), [a](MegakernelSettings& x) { x.age_period = a; });
    }
    tip("Every n-th claim of a worker warp serves the ring with the most waiting tasks instead of the most urgent,\n"
        "so no patch waits for ever whatever the priority (0: off).");
  }
  if (m.queue == QueueDesign::Quanta) {
    int q = static_cast<int>(m.quantum_max);
    if (ImGui::SliderInt("largest quantum Q", &q, 2, 64, "%d", ImGuiSliderFlags_AlwaysClamp)) {
      const uint32_t v = static_cast<uint32_t>(q);
      st.queue_megakernel(target, "Set largest quantum " + std::to_string(v), [v](MegakernelSettings& x) { x.quantum_max = v; });
    }
    tip("Sample batches one visit may run: the mean quantum goes from Q (most urgent) through 1\n"
        "(median) to 1/Q (least urgent: the task yields most visits).");
  }
  const bool kerbl = m.queue == QueueDesign::Kerbl;
  if (!kerbl) {
    ImGui::TextDisabled("Kerbl's controller settings apply to queue kerbl:");
  }
  ImGui::BeginDisabled(!kerbl);

  static const char* const kSegmentSizes[] = {"32", "64", "128", "256", "512"};
  int seg = 0;
  while (seg < 4 && (32u << seg) < m.segment_size) ++seg;
  if (ImGui::Combo("segment size S", &seg, kSegmentSizes, IM_ARRAYSIZE(kSegmentSizes))) {
    const uint32_t v = 32u << seg;
    st.queue_megakernel(target, "Set segment size " + std::to_string(v), [v](MegakernelSettings& x) { x.segment_size = v; });
  }
  tip("Kerbl 3.2: entries per queue segment. The controller sorts pairs of adjacent full segments\n"
      "(2S keys a pass, 4.3); workers dequeue from the front one entry at a time.\n"
      "Changing it rebuilds the queue from the film (kept), in priority order.");

  bool controller = m.controller;
  if (ImGui::Checkbox("controller", &controller))
    st.queue_megakernel(target, controller ? "Controller on" : "Controller off",
                        [controller](MegakernelSettings& x) { x.controller = controller; });
  tip("Kerbl 3.1, 4: a controller block merges adjacent segments with the bitonic sort, walking from\n"
      "the back of the queue towards the front and restarting at the back when a segment is busy (Fig 2).\n"
      "Off: the queue runs FIFO, the fair comparison of 6.2.");

  ImGui::BeginDisabled(!m.controller);
  int controllers = static_cast<int>(m.controllers);
  if (ImGui::SliderInt("controllers P", &controllers, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp)) {
    const uint32_t p = static_cast<uint32_t>(controllers);
    st.queue_megakernel(target, "Set controllers " + std::to_string(p), [p](MegakernelSettings& x) { x.controllers = p; });
  }
  tip("Beyond Kerbl (4 uses one controller block): P controller blocks walk staggered over P ranges of\n"
      "the queue and meet only through the segments' try-locks (3.3). An H100's 132 SMs drain segments\n"
      "faster than one block merges them. At least one block of the grid must remain a worker.");

  bool time_management = m.time_management;
  if (ImGui::Checkbox("time management", &time_management))
    st.queue_megakernel(target, time_management ? "Time management on" : "Time management off",
                        [time_management](MegakernelSettings& x) { x.time_management = time_management; });
  tip("Kerbl 5.2: lock a pair only when the buffer segments between the executing front and the pair\n"
      "take the workers at least as long as the longest sort measured for its method (5.3.2), so that\n"
      "workers rarely meet a locked segment. Off: lock whatever is free.");

  ImGui::BeginDisabled(!m.time_management);
  float multiplier = m.buffer_multiplier;
  if (ImGui::SliderFloat("buffer multiplier", &multiplier, 0.1f, 10.f, "%.2f",
                         ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic))
    st.queue_megakernel(target, "Set buffer multiplier", [multiplier](MegakernelSettings& x) { x.buffer_multiplier = multiplier; });
  tip("Kerbl 5.4: global multiplier on the estimated buffer time. > 1: optimistic, sorts closer to the\n"
      "front and collides more; < 1: cautious, sorts less.");

  bool wave_aware = m.wave_aware_buffer;
  if (ImGui::Checkbox("wave-aware buffer", &wave_aware))
    st.queue_megakernel(target, "Set wave-aware buffer", [wave_aware](MegakernelSettings& x) { x.wave_aware_buffer = wave_aware; });
  tip("Beyond Kerbl 5.3: buffer = floor(R / W) x the shortest task ahead (R entries ahead of the pair,\n"
      "W worker warps) instead of the sum of each buffer segment's shortest task; right when the workers\n"
      "outnumber a segment's entries, as on an H100 (sched/queue_model.h).");

  bool pull = m.pull_forward;
  if (ImGui::Checkbox("pull forward", &pull))
    st.queue_megakernel(target, "Set pull forward", [pull](MegakernelSettings& x) { x.pull_forward = pull; });
  tip("Beyond Kerbl: merge each segment of the walk with a target segment just ahead of the head instead\n"
      "of its neighbour, so the best entries travel the whole queue in one merge (sched/megakernel_settings.h).");
  int pull_distance = static_cast<int>(m.pull_distance);
  ImGui::BeginDisabled(!m.pull_forward);
  if (ImGui::SliderInt("pull distance", &pull_distance, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp))
    st.queue_megakernel(target, "Set pull distance",
                        [pull_distance](MegakernelSettings& x) { x.pull_distance = static_cast<uint32_t>(pull_distance); });
  tip("Segments between the one in execution and the pull target (grows by itself after time-check refusals).");
  ImGui::EndDisabled();

  bool metadata = m.collect_metadata;
  if (ImGui::Checkbox("collect metadata", &metadata))
    st.queue_megakernel(target, metadata ? "Metadata collection on" : "Metadata collection off",
                        [metadata](MegakernelSettings& x) { x.collect_metadata = metadata; });
  tip("Kerbl 5.3: measure every task's shortest duration (clock64, 5.3.1) and keep per-segment minima\n"
      "for the buffer estimate. Off (5.4): every buffer segment counts the constant segment cycles.");
  ImGui::BeginDisabled(!m.collect_metadata);
  cycles_field("task cycles", m.static_task_cycles, st, target, &MegakernelSettings::static_task_cycles,
               "Kerbl 5.4: > 0 assumes every task takes this many cycles instead of measuring it\n"
               "(no per-task metadata writes). 0: measure. Applied on Enter.");
  ImGui::EndDisabled();
  ImGui::BeginDisabled(m.collect_metadata);
  cycles_field("segment cycles", m.constant_segment_cycles, st, target, &MegakernelSettings::constant_segment_cycles,
               "Kerbl 5.4 (\"a constant global variable\"): buffer time of one segment while metadata\n"
               "collection is off, in cycles. Applied on Enter.");
  ImGui::EndDisabled();
  ImGui::EndDisabled();  // time management
  ImGui::EndDisabled();  // controller
  ImGui::EndDisabled();  // kerbl

  int per_sm = static_cast<int>(m.blocks_per_sm);
  if (ImGui::InputInt("blocks per SM", &per_sm, 1, 4, ImGuiInputTextFlags_EnterReturnsTrue)) {
    const uint32_t b = static_cast<uint32_t>(std::clamp(per_sm, 0, 64));
    st.queue_megakernel(target, "Set blocks per SM " + std::to_string(b), [b](MegakernelSettings& x) { x.blocks_per_sm = b; });
  }
  tip("Kerbl 3.1: the persistent grid holds only co-resident blocks. Resident blocks per SM, 0..64;\n"
      "0: as many as the occupancy calculator allows. Changing it rebuilds the queue (film kept).");

  bool record = m.record_order;
  if (ImGui::Checkbox("record order", &record))
    st.queue_megakernel(target, record ? "Record order on" : "Record order off",
                        [record](MegakernelSettings& x) { x.record_order = record; });
  tip("Kerbl 6.2: record each slice's dequeue order and show its sort accuracy S(n) in the Megakernel\n"
      "section (1: dequeued in exact priority order). Costs a download of the keys each frame.");
  ImGui::TreePop();
}

void scheduling_section(const Session& s, const Session* right, GuiState& st) {
  if (!ImGui::CollapsingHeader("Scheduling", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const char* const both_tip =
      "Split view: the right side's strategy and priority are in the Split view section; wave size,\n"
      "block size and the megakernel's settings apply to both sides, so the two differ only in strategy\n"
      "and priority (a fair comparison).";
  if (right) {
    ImGui::TextDisabled("split view: strategy and priority of the left side");
    tip(both_tip);
  }
  strategy_combo(s, st, Target::Left, right ? "left strategy" : "strategy");
  priority_combo(s, st, Target::Left, right ? "left priority" : "priority");
  if (right) {
    ImGui::TextDisabled("split view: the settings below apply to both sides");
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
  // Shown while either side runs the megakernel; both sides hold the same settings (GuiState::queue_megakernel).
  if (s.megakernel() || (right && right->megakernel()))
    megakernel_settings(s.options().megakernel, st, Target::Both,
                        right ? "megakernel (Kerbl 2012), both sides" : "megakernel (Kerbl 2012)");
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
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Display through a host download + glTexSubImage2D instead of CUDA-GL interop\n"
                      "(to compare the two paths; needs working interop).");
}

}  // namespace mv::gui
