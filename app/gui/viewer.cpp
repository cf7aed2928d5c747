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
#include <utility>
#include <vector>

#include "app/core/capture.h"
#include "app/core/image_io.h"
#include "app/core/megakernel_report.h"
#include "app/gui/camera_control.h"
#include "app/gui/panels.h"
#include "render/gpu.h"

namespace mv::gui {

namespace {
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

Viewer::Viewer(Window& window, std::unique_ptr<Session> session, const GuiOptions& options)
    : window_(window), options_(options), session_(std::move(session)), imgui_(window.handle()),
      state_(*session_) {
  window_.set_swap_interval(options_.frames > 0 ? 0 : 1);
  window_.watch_key(GLFW_KEY_F12);
  state_.force_host_copy = options_.force_host_copy;
  start_ = last_frame_ = std::chrono::steady_clock::now();
}

int Viewer::run() {
  for (int n = 1; !window_.should_close(); ++n) {
    frame_index_ = n;
    frame();
    if (options_.frames > 0 && n >= options_.frames) {
      const DisplayStats& d = display_.stats();
      spdlog::info("smoke test: {} frames, {:.1f} spp, display {} ({} updates, mean {:.3f} ms CPU, {:.3f} ms GPU)",
                   n, mean_spp(*session_), d.label, d.updates, d.mean_update_ms(), d.mean_device_ms());
      return options_.window_shot.empty() ? 0 : save_window_shot();
    }
    window_.swap_buffers();
  }
  return 0;
}

bool Viewer::idle() const {
  return options_.frames == 0 && (state_.paused || session_->done()) && state_.commands.empty() &&
         shown_epoch_ == film_epoch_ && shown_paths_ == session_->last().total_paths;
}

void Viewer::frame() {
  if (idle())
    window_.wait_events(0.1);  // nothing renders: wake on input, or 10 times a second for the panels
  else
    window_.poll_events();
  const auto now = std::chrono::steady_clock::now();
  state_.frame_ms.add(ms_between(last_frame_, now));
  last_frame_ = now;

  imgui_.begin_frame();
  const float panel_right = draw_control_window(*session_, state_, display_);
  const float status_height = draw_status_bar(*session_, state_, display_.stats());
  draw_error_window(state_, panel_right);
  const PixelRect area = image_area(panel_right, status_height);
  camera_input(area);
  if (window_.take_key_press(GLFW_KEY_F12) && !ImGui::GetIO().WantTextInput) state_.capture_requested = true;

  const bool scripted_switch = queue_smoke_actions();
  const uint64_t paths_before = session_->last().total_paths;
  apply_commands();
  if (scripted_switch) {
    spdlog::info("smoke: frame {}: now {}/{}, film {} ({} paths before the switch, {} after)", frame_index_,
                 session_->strategy().name, priority_name(session_->options().task.priority),
                 session_->last().total_paths == paths_before ? "kept" : "reset", paths_before,
                 session_->last().total_paths);
  }
  if (!state_.paused) render_step();
  update_mse();
  if (state_.capture_requested) take_capture();
  update_display();

  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  display_.draw(fb_width, fb_height, area);
  imgui_.end_frame();
}

bool Viewer::queue_smoke_actions() {
  bool switched = false;
  for (const SmokeAction& a : options_.smoke_actions) {
    if (a.frame != frame_index_) continue;
    if (a.action == "capture") {
      spdlog::info("smoke: frame {}: capture", frame_index_);
      state_.capture_requested = true;  // what F12 and the Screenshot button do
    } else if (a.action == "priority") {
      const std::string name = a.value;
      state_.queue("Set priority " + name, [name](Session& session) { session.set_priority(parse_priority(name.c_str())); });
      switched = true;
    } else if (a.action == "strategy") {
      const std::string name = a.value;
      state_.queue("Set strategy " + name, [name](Session& session) { session.set_strategy(name); });
      switched = true;
    } else {  // a megakernel setting (parse_smoke_action admits no other action)
      const std::string name = a.action, value = a.value;
      state_.queue_megakernel("Set megakernel " + name + "=" + value,
                              [name, value](MegakernelSettings& m) { set_megakernel_setting(m, name, value); });
      switched = true;
    }
  }
  return switched;
}

PixelRect Viewer::image_area(float panel_right, float status_height) const {
  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  PixelRect r;
  r.x = std::clamp(static_cast<int>(std::lround(panel_right * scale.x)), 0, fb_width);
  r.y = std::clamp(static_cast<int>(std::lround(status_height * scale.y)), 0, fb_height);
  r.width = fb_width - r.x;
  r.height = fb_height - r.y;
  if (r.width < fb_width / 4) r = PixelRect{0, r.y, fb_width, r.height};  // panel too wide: draw under it
  return r;
}

void Viewer::camera_input(const PixelRect& area) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureMouse || area.width <= 0 || area.height <= 0) return;
  // Height of the letterboxed image in screen units: drags scale with what the user sees.
  const float aspect = static_cast<float>(session_->width()) / static_cast<float>(session_->height());
  const float shown_height = std::min(static_cast<float>(area.height), static_cast<float>(area.width) / aspect);
  PointerInput in;
  in.dx = io.MouseDelta.x;
  in.dy = io.MouseDelta.y;
  in.wheel = io.MouseWheel;
  in.pan = io.MouseDown[1] || (io.MouseDown[0] && io.KeyShift);
  in.orbit = io.MouseDown[0] && !io.KeyShift;
  in.view_height = shown_height / std::max(io.DisplayFramebufferScale.y, 1e-3f);
  if (io.MouseDelta.x == -FLT_MAX) in.dx = in.dy = 0.f;  // no previous cursor position
  Camera cam = session_->scene().camera;
  if (apply_pointer(cam, in)) state_.queue("Move camera", [cam](Session& s) { s.set_camera(cam); }, true);
}

void Viewer::apply_commands() {
  std::vector<SessionCommand> commands = std::exchange(state_.commands, {});
  for (SessionCommand& c : commands) {
    try {
      if (c.check) c.check();
    } catch (const std::exception& e) {
      state_.report(c.action, e);
      continue;
    }
    try {
      c.run(*session_);
      if (c.resets_film) film_was_reset();
    } catch (const std::exception& e) {
      state_.report(c.action, e);
      // The Session restored its previous scene and size, on a new (empty) film.
      if (c.rebuilds_film) film_was_reset();
    }
  }
}

void Viewer::film_was_reset() {
  ++film_epoch_;
  mse_failed_ = false;
  state_.on_film_reset(*session_);
}

void Viewer::render_step() {
  try {
    const FrameStats fs = session_->advance();
    if (fs.step.paths > 0) state_.paths_per_second.add(fs.paths_per_second);
    if (const MegakernelControl* m = session_->megakernel(); m && fs.step.tasks > 0)
      state_.megakernel_rates.add(m->stats(), fs.step.busy_ms, gpu_info().clock_khz);
  } catch (const std::exception& e) {
    state_.report("Render", e);
    state_.paused = true;
  }
}

void Viewer::update_mse() {
  if (mse_failed_) return;
  try {
    state_.mse.update(*session_, ms_between(start_, std::chrono::steady_clock::now()));
  } catch (const std::exception& e) {
    state_.report("MSE", e);
    mse_failed_ = true;
  }
}

void Viewer::take_capture() {
  state_.capture_requested = false;
  try {
    const nlohmann::json extra = {{"display_path", display_.stats().label}, {"fps", state_.fps()}};
    const CaptureResult r = capture(*session_, state_.tonemap, options_.capture_dir, extra);
    state_.capture_message = r.png;
    state_.capture_failed = false;
    spdlog::info("capture: {}", r.png);
  } catch (const std::exception& e) {
    state_.capture_message = e.what();
    state_.capture_failed = true;
    state_.report("Screenshot", e);
  }
}

void Viewer::update_display() {
  state_.tonemap.target_spp = session_->options().task.target_spp;
  display_.set_force_host_copy(state_.force_host_copy);
  const uint64_t paths = session_->last().total_paths;
  const bool film_changed = paths != shown_paths_ || film_epoch_ != shown_epoch_;
  try {
    display_.update(*session_, state_.tonemap, film_changed);
  } catch (const std::exception& e) {
    state_.report("Display", e);
    state_.paused = true;
  }
  // Also after a failure: retry only when something changes, not every frame.
  shown_paths_ = paths;
  shown_epoch_ = film_epoch_;
}

int Viewer::save_window_shot() {
  int width = 0, height = 0;
  const std::vector<uint32_t> rgba = window_.read_back_buffer(width, height);
  try {
    write_png(options_.window_shot, rgba.data(), width, height);
  } catch (const std::exception& e) {
    spdlog::error("window shot: {}", e.what());
    return 1;
  }
  spdlog::info("window shot: {} ({}x{})", options_.window_shot, width, height);
  return 0;
}

}  // namespace mv::gui
