// The viewer's strand mode: a strand workload of the registry (app/session/strand_workloads.h) run by a
// strand strategy on a worker thread, its image (or step heat map) shown, replayed in finishing order and
// captured; the path tracer's Session waits unchanged for the way back (app/gui/viewer.cpp has the frame
// loop and the path tracer's mode).
#include "app/gui/viewer.h"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "app/session/capture.h"
#include "app/session/image_io.h"
#include "app/session/output_file.h"
#include "app/session/split.h"
#include "app/session/strand_view.h"
#include "base/errors.h"
#include "app/gui/camera_control.h"
#include "app/gui/panels.h"
#include "render/gpu.h"

namespace mv::gui {

void Viewer::enter_strand_mode(const std::string& workload, uint32_t width, uint32_t height) {
  StrandState& ss = state_.strands;
  const StrandWorkloadEntry* w = nullptr;
  try {
    w = &find_strand_workload(workload);
  } catch (const std::exception& e) {
    state_.report("Workload " + workload, e);
    return;
  }
  ss.workload = w->name;
  // The workload's own knobs: its defaults, then those of the command line that it has.
  ss.workload_knobs = w->knob_values(options_.strand_knobs);
  ss.width = static_cast<int>(width > 0 ? width : w->default_width);
  ss.height = static_cast<int>(height > 0 ? height : w->default_height);
  const auto runs_here = [&](const std::string& name) {
    for (const StrategyInfo& i : w->strategies)
      if (i.name == name) return !i.needs_gpu() || ss.gpu;
    return false;
  };
  if (!runs_here(ss.strategy)) ss.strategy = ss.gpu ? "cuda" : "cpu-parallel";
  ss.last.reset();
  ss.previous.reset();
  ss.per_strategy.clear();
  strand_shown_.reset();
  strand_dirty_ = true;
  ss.run_requested = true;
  spdlog::info("strands: workload {} ({}x{} strands), strategy {}", ss.workload, ss.width, ss.height, ss.strategy);
}

void Viewer::leave_strand_mode() {
  state_.strands.workload.clear();
  strand_replay_.reset();
  strand_shown_.reset();
  strand_pixels_.clear();
  shown_epoch_ = ~uint64_t{0};  // the film goes back into the texture at the next update
  shown_right_epoch_ = ~uint64_t{0};
  spdlog::info("strands: back to the path tracer");
}

void Viewer::strand_frame() {
  StrandState& ss = state_.strands;
  if (ss.size_request) {
    const std::pair<int, int> size = *std::exchange(ss.size_request, std::nullopt);
    if (ss.active()) {
      ss.width = size.first;
      ss.height = size.second;
      ss.run_requested = true;
    }
  }
  if (ss.active() && ss.run_requested) start_strand_run();
  if (!strand_runner_) return;
  while (std::optional<StrandOutcome> o = strand_runner_->take()) strand_finished(std::move(*o));
  const std::optional<StrandRequest> r = strand_runner_->running();
  if (!r) {
    ss.running.clear();
  } else if (r->id != strand_running_id_ || ss.running.empty()) {
    strand_running_id_ = r->id;
    ss.running = r->strategy + " " + r->settings.grid.str() + " " + std::to_string(r->width) + "x" +
                 std::to_string(r->height);
    ss.running_since_s = ImGui::GetTime();
  }
}

void Viewer::strand_view_input(const PixelRect& area) {
  const ImGuiIO& io = ImGui::GetIO();
  StrandState& ss = state_.strands;
  const StrandWorkloadEntry* w = nullptr;
  try {
    w = &find_strand_workload(ss.workload);
  } catch (const std::exception&) {
    return;
  }
  if (w->view_kind == StrandViewKind::Fixed) {  // no view to edit: the mouse neither drags nor restarts runs
    ss.view_dragging = false;
    return;
  }
  if (ss.view_dragging && !io.MouseDown[0]) {  // the drag ended: one run with where it ended
    ss.view_dragging = false;
    ss.run_requested = true;
    spdlog::info("strands: view drag ended: {}", strand_view_text(w->view_kind, ss.view));
    return;
  }
  if (area.width <= 0 || area.height <= 0 || io.MousePos.x == -FLT_MAX) return;
  // The image as it is shown (letterboxed), in framebuffer pixels with the origin at the bottom left.
  const std::pair<uint32_t, uint32_t> shown =
      strand_shown_ ? strand_shown_size(strand_shown_->result, strand_heat_shown_)
                    : std::pair<uint32_t, uint32_t>(std::max(ss.width, 1), std::max(ss.height, 1));
  const int iw = static_cast<int>(shown.first), ih = static_cast<int>(shown.second);
  const ImageRect r = letterbox(area, iw, ih);
  if (r.height <= 0.f) return;
  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  const float mx = io.MousePos.x * io.DisplayFramebufferScale.x;
  const float my = static_cast<float>(fb_height) - io.MousePos.y * io.DisplayFramebufferScale.y;
  if (ss.view_dragging) {
    if (io.MouseDelta.x == -FLT_MAX) return;  // no previous cursor position
    const float dx = io.MouseDelta.x * io.DisplayFramebufferScale.x, dy = io.MouseDelta.y * io.DisplayFramebufferScale.y;
    if (dx != 0.f || dy != 0.f) ss.view = strand_view_drag(w->view_kind, ss.view, dx, dy, r.height);
    return;
  }
  if (io.WantCaptureMouse) return;
  const bool over = mx >= r.x && mx <= r.x + r.width && my >= r.y && my <= r.y + r.height;
  if (!over) return;
  if (ImGui::IsMouseClicked(0)) ss.view_dragging = true;
  if (io.MouseWheel != 0.f) {
    // Offset of the cursor from the image centre, x right and y down like the drag.
    const float ox = mx - (r.x + 0.5f * r.width), oy = (r.y + 0.5f * r.height) - my;
    ss.view = strand_view_zoom(w->view_kind, ss.view, io.MouseWheel, ox, oy, r.height);
    ss.run_requested = true;  // StrandRunner keeps at most one waiting run: a burst of steps runs the last
  }
}

void Viewer::start_strand_run() {
  StrandState& ss = state_.strands;
  ss.run_requested = false;
  StrandRequest r;
  r.workload = ss.workload;
  r.strategy = ss.strategy;
  try {
    const StrandWorkloadEntry& w = find_strand_workload(ss.workload);
    const StrategyInfo& info = w.strategy(ss.strategy);
    if (info.needs_gpu() && !ss.gpu)
      throw InputError("", "strategy", info.name + " needs a CUDA GPU (" + ss.no_gpu_reason + ")");
    const uint32_t c = ss.knobs.grid.work_unit;
    r.settings = ss.knobs;
    r.settings.grid = ss.grid_auto ? GridConfig{} : make_grid(ss.grid_n, ss.grid_b, c, "grid");
    r.settings.grid.work_unit = c;
    r.settings.record_finish_order = ss.fill_in_seconds > 0.f;
    validate_strand_settings(r.settings);
    const int max_side = static_cast<int>(w.max_side);
    if (ss.width < 1 || ss.height < 1 || ss.width > max_side || ss.height > max_side)
      throw InputError("", "size", std::to_string(ss.width) + "x" + std::to_string(ss.height) +
                                       " is out of range: width and height in [1, " + std::to_string(max_side) + "]");
    w.check_size_multiple(static_cast<uint32_t>(ss.width), static_cast<uint32_t>(ss.height), "size");
    r.width = static_cast<uint32_t>(ss.width);
    r.height = static_cast<uint32_t>(ss.height);
    check_strand_run_fits(r, info.needs_gpu());  // before the worker allocates anything
    ss.view.validate();
    r.view = ss.view;
    w.check_knobs(ss.workload_knobs);
    r.knobs = ss.workload_knobs;
  } catch (const std::exception& e) {
    state_.report("Run " + ss.strategy + " on " + ss.workload, e);
    return;
  }
  if (!strand_runner_) strand_runner_ = std::make_unique<StrandRunner>([] { glfwPostEmptyEvent(); });
  const uint64_t id = strand_runner_->request(r);
  spdlog::info("strands: run {} queued: {} {} grid {} {}x{}", id, r.workload, r.strategy, r.settings.grid.str(),
               r.width, r.height);
  spdlog::info("strands: run {} view: {}", id, strand_view_text(find_strand_workload(r.workload).view_kind, r.view));
}

void Viewer::strand_finished(StrandOutcome o) {
  StrandState& ss = state_.strands;
  const StrandRequest& q = o.request;
  StrandRunRow row;
  row.id = q.id;
  row.strategy = q.strategy;
  row.width = q.width;
  row.height = q.height;
  row.grid = "-";
  if (o.error) {
    try {
      std::rethrow_exception(o.error);
    } catch (const std::exception& e) {
      row.error = e.what();
      state_.report("Run " + q.strategy + " on " + q.workload, e);
    } catch (...) {
      row.error = "unknown error";
      state_.report("Run " + q.strategy + " on " + q.workload, std::runtime_error(row.error));
    }
  } else {
    const StrandTimings& t = o.result.timing;
    try {
      row.grid = strand_grid_text(find_strand_workload(q.workload).strategy(q.strategy), t.grid, q.settings);
    } catch (const std::exception&) {
    }
    row.ms = t.ms;
    row.cuda_events = t.cuda_events;
    row.launches = t.launches;
    row.steps = o.stats;
    row.active_curve = active_strands_curve(o.result.steps);
    spdlog::info("strands: {} {} {} {:.3f} ms, steps mu {:.3f} sigma {:.3f} cv {:.4f}, {} strands {}x{}, {} "
                 "launches, {} (run {}){}",
                 q.workload, q.strategy, row.grid, t.ms, o.stats.mean, o.stats.sigma, o.stats.cv, o.stats.count,
                 q.width, q.height, t.launches, t.cuda_events ? "CUDA events" : "wall clock", q.id,
                 t.notes.empty() ? "" : " (" + t.notes + ")");
  }
  if (q.workload != ss.workload) {
    spdlog::info("strands: run {} finished after the workload changed; not shown", q.id);
    return;
  }
  ss.previous = std::exchange(ss.last, row);
  // The latest run of each strategy, in the registry's order.
  const StrandWorkloadEntry& w = find_strand_workload(q.workload);
  auto& rows = ss.per_strategy;
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const StrandRunRow& r) { return r.strategy == q.strategy; }),
             rows.end());
  rows.push_back(row);
  const auto rank = [&](const std::string& name) {
    for (size_t i = 0; i < w.strategies.size(); ++i)
      if (w.strategies[i].name == name) return i;
    return w.strategies.size();
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const StrandRunRow& a, const StrandRunRow& b) { return rank(a.strategy) < rank(b.strategy); });
  if (!o.error) {
    strand_shown_ = std::move(o);
    strand_dirty_ = true;
  }
}

void Viewer::show_strand_image() {
  const StrandState& ss = state_.strands;
  const bool rebuild = strand_dirty_ || ss.heat_map != strand_heat_shown_;
  if (!rebuild && !strand_replay_) return;
  // Before the first run a black background of the requested shape stands in for the image: at most
  // kBackgroundSide on its longer side (letterboxing shows it at any scale), so a size the run refuses
  // never allocates.
  constexpr int kBackgroundSide = 256;
  const int side = std::max({ss.width, ss.height, 1});
  int w = std::clamp(static_cast<int>(static_cast<int64_t>(std::max(ss.width, 1)) * kBackgroundSide / side), 1,
                     kBackgroundSide);
  int h = std::clamp(static_cast<int>(static_cast<int64_t>(std::max(ss.height, 1)) * kBackgroundSide / side), 1,
                     kBackgroundSide);
  if (side <= kBackgroundSide) w = std::max(ss.width, 1), h = std::max(ss.height, 1);
  if (strand_shown_) {
    const auto [sw, sh] = strand_shown_size(strand_shown_->result, ss.heat_map);
    w = static_cast<int>(sw);
    h = static_cast<int>(sh);
  }
  if (rebuild) {
    strand_dirty_ = false;
    strand_heat_shown_ = ss.heat_map;
    strand_replay_.reset();
    if (strand_shown_) {
      const StrandResult& r = strand_shown_->result;
      strand_pixels_ = ss.heat_map ? strand_heat_rgba8(r) : strand_image_rgba8(r);
      // The fill-in replay (StrandReplay): the run's finish order over fill_in_seconds.
      // (A workload's own picture, ridge3d's splats, has no pixel per strand to replay: it shows at once.)
      const bool per_strand = ss.heat_map || r.view_rgba.empty();
      if (per_strand && ss.fill_in_seconds > 0.f && r.finish_order.size() == strand_pixels_.size() &&
          !strand_pixels_.empty()) {
        strand_replay_ = std::make_unique<StrandReplay>(strand_pixels_, r.finish_order, r.pixel);
        strand_replay_start_ = glfwGetTime();
        strand_pixels_ = strand_replay_->image();
      }
    } else {  // before the first run: the black background at the run's size
      strand_pixels_.assign(static_cast<size_t>(w) * h, 0xff000000u);
    }
  } else {  // a replay frame
    const double f = (glfwGetTime() - strand_replay_start_) / std::max(ss.fill_in_seconds, 1e-3f);
    if (!strand_replay_->advance(f)) return;
    strand_pixels_ = strand_replay_->image();
    if (strand_replay_->done()) {
      spdlog::info("strands: fill-in replay of run {} done ({} strands over {:.2f} s)",
                   strand_shown_ ? strand_shown_->request.id : 0, strand_replay_->shown(), ss.fill_in_seconds);
      strand_replay_.reset();
    }
  }
  upload_strand_pixels(w, h);
}

void Viewer::upload_strand_pixels(int width, int height) {
  try {
    display_.show_image(strand_pixels_.data(), width, height,
                        std::string("host upload \xC2\xB7 strand ") + (strand_heat_shown_ ? "steps heat map" : "image"));
  } catch (const std::exception& e) {
    state_.report("Display", e);
  }
}

void Viewer::take_strand_capture() {
  if (strand_replay_) {  // a capture holds the whole run: finish the replay first
    strand_replay_->advance(1.0);
    strand_pixels_ = strand_replay_->image();
    strand_replay_.reset();
    const auto [sw, sh] = strand_shown_size(strand_shown_->result, strand_heat_shown_);
    upload_strand_pixels(static_cast<int>(sw), static_cast<int>(sh));
  }
  record_capture([this](const nlohmann::json& extra) {
    if (!strand_shown_) throw InputError("", "capture", "no strand run has finished yet");
    const auto [png, json] =
        capture_strands(*strand_shown_, strand_pixels_, strand_heat_shown_, options_.capture_dir, extra);
    spdlog::info("capture: {} ({})", png, json);
    return png;
  });
}

}  // namespace mv::gui
