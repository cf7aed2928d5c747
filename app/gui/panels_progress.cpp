// Progress, Megakernel, MSE and Capture sections of the control window.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>

#include "app/gui/panel_sections.h"
#include "render/gpu.h"
#include "sched/bitonic.h"

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

void megakernel_section(const Session& s, const GuiState& st) {
  const MegakernelControl* mk = s.megakernel();
  if (!mk || !ImGui::CollapsingHeader("Megakernel", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const MegakernelStats& k = mk->stats();
  if (k.slices == 0) {
    ImGui::TextDisabled("no slice since the queue was (re)built");
    return;
  }
  const MegakernelRates& r = st.megakernel_rates.rates();
  const auto rate = [&r](double v) { return r.valid ? si(v) + "/s" : std::string("-"); };
  const int khz = gpu_info().clock_khz;
  const uint32_t worker_blocks = k.grid_blocks > k.controllers ? k.grid_blocks - k.controllers : 0;
  const uint32_t threads = worker_blocks > 0 ? k.worker_warps / worker_blocks * 32 : 0;

  ImGui::Text("grid          %u blocks x %u threads (%u/SM)", k.grid_blocks, threads, k.blocks_per_sm);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Kerbl 3.1: a persistent grid of co-resident blocks; %u registers per thread.", k.registers);
  ImGui::Text("workers       %u warps, %u controller block%s", k.worker_warps, k.controllers,
              k.controllers == 1 ? "" : "s");
  ImGui::Text("queue         %llu entries (ring of %u)", static_cast<unsigned long long>(k.queue_length), k.capacity);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Kerbl 3.2: unfinished patch tasks waiting after the last slice; each re-enqueues\n"
                      "itself at the back with its new priority until it reaches the target (6.3).");
  ImGui::Text("tasks/s       %s", r.valid ? si(r.tasks_per_second).c_str() : si(k.tasks_per_second).c_str());
  if (r.valid)
    ImGui::Text("sort passes/s %s u-u, %s u-s, %s s-s", si(r.sort_passes_per_second[0]).c_str(),
                si(r.sort_passes_per_second[1]).c_str(), si(r.sort_passes_per_second[2]).c_str());
  else
    ImGui::TextUnformatted("sort passes/s -");
  if (ImGui::IsItemHovered()) {
    std::string t = "Kerbl 4.3: controller passes per second of kernel time, per method:\n"
                    "u-u both segments unsorted, u-s one sorted, s-s both sorted\n";
    for (int m = 0; m < 3; ++m) {
      char line[160];
      const int n = std::snprintf(line, sizeof line, "\n%-18s %llu passes, longest %llu cycles",
                                  sort_method_name(static_cast<SortMethod>(m)),
                                  static_cast<unsigned long long>(k.sort_passes[m]),
                                  static_cast<unsigned long long>(k.sort_cycles_max[m]));
      if (khz > 0 && n > 0 && static_cast<size_t>(n) < sizeof line)
        std::snprintf(line + n, sizeof line - n, " = %.1f us", static_cast<double>(k.sort_cycles_max[m]) / (khz * 1e-3));
      t += line;
    }
    t += "\n(counts since the queue was built; longest: 5.3.2's time of a sort)";
    ImGui::SetTooltip("%s", t.c_str());
  }
  ImGui::Text("collisions    %s (%llu in all)", rate(r.lock_collisions_per_second).c_str(),
              static_cast<unsigned long long>(k.lock_collisions));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Kerbl 5.2: worker accesses that met a segment locked by a controller and had to wait.");
  if (r.valid && r.wait_share >= 0.0)
    ImGui::Text("worker wait   %.3f %% of worker time", 100.0 * r.wait_share);
  else
    ImGui::Text("worker wait   %llu cycles", static_cast<unsigned long long>(k.wait_cycles));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Cycles worker warps spent waiting on locked segments, as a share of all worker-warp\n"
                      "time of the last ~%.0f ms of kernel time (clock %d MHz).\nSince the queue was built: %.3f ms "
                      "summed over warps.",
                      r.window_ms, khz / 1000, khz > 0 ? static_cast<double>(k.wait_cycles) / khz : 0.0);
  ImGui::Text("controller    refused %s, restarts %s", rate(r.time_refusals_per_second).c_str(),
              rate(r.restarts_per_second).c_str());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("refused: pairs not locked because the buffer ahead was shorter than the sort (5.2)\n"
                      "restarts: walks restarted at the back of the queue (Fig 2)\n"
                      "since the queue was built: %llu refused, %llu restarts, %llu try-locks on busy\n"
                      "segments, %llu pairs found not full",
                      static_cast<unsigned long long>(k.ctrl_time_refusals),
                      static_cast<unsigned long long>(k.ctrl_restarts),
                      static_cast<unsigned long long>(k.ctrl_lock_failures),
                      static_cast<unsigned long long>(k.ctrl_not_full));
  if (k.order_score >= 0.0)
    ImGui::Text("sort accuracy S(n) %.4f over %llu dequeues", k.order_score, static_cast<unsigned long long>(k.recorded));
  else
    ImGui::TextDisabled("sort accuracy: turn on \"record order\" (Scheduling)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Kerbl 6.2: the score S(n) of the last slice's dequeue order; 1 = exact priority order.");
  ImGui::Text("slices        %llu since the queue was built%s", static_cast<unsigned long long>(k.slices),
              k.stopped_by_host ? ", last stopped by the host" : "");
  if (k.empty_executions > 0)
    ImGui::TextColored(ImVec4(1.f, 0.4f, 0.4f, 1.f), "empty executions %llu: duplicated queue entries",
                       static_cast<unsigned long long>(k.empty_executions));
}

void mse_section(const Session& s, const Session* right, const GuiState& st) {
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
