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
#include "app/core/split.h"
#include "app/gui/camera_control.h"
#include "app/gui/panels.h"
#include "render/gpu.h"

namespace mv::gui {

namespace {
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

std::unique_ptr<Session> make_right_session(const Session& left, const std::string& strategy,
                                            PriorityFunction priority) {
  SessionOptions o = left.options();
  o.strategy = strategy;
  o.task.priority = priority;
  o.reference = left.has_reference() ? left.reference_path() : std::string();
  auto right = std::make_unique<Session>(o);
  right->set_camera(left.scene().camera);  // the left one may have been orbited since its scene loaded
  return right;
}

Viewer::Viewer(Window& window, std::unique_ptr<Session> session, const GuiOptions& options,
               std::unique_ptr<Session> right)
    : window_(window), options_(options), session_(std::move(session)), right_(std::move(right)),
      imgui_(window.handle()), state_(*session_) {
  window_.set_swap_interval(options_.frames > 0 ? 0 : 1);
  window_.watch_key(GLFW_KEY_F12);
  state_.force_host_copy = options_.force_host_copy;
  state_.split.strategy = session_->strategy().name;
  state_.split.priority = default_right_priority(session_->options().task.priority);
  if (right_) {
    state_.split.on = true;
    state_.split.strategy = right_->strategy().name;
    state_.split.priority = right_->options().task.priority;
    spdlog::info("split view: on, left {}/{}, right {}/{}", session_->strategy().name,
                 priority_name(session_->options().task.priority), right_->strategy().name,
                 priority_name(right_->options().task.priority));
  }
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
      if (right_) log_split("end");
      return options_.window_shot.empty() ? 0 : save_window_shot();
    }
    window_.swap_buffers();
  }
  return 0;
}

bool Viewer::idle() const {
  const bool right_idle = !right_ || ((state_.paused || right_->done()) && shown_right_epoch_ == film_epoch_ &&
                                      shown_right_paths_ == right_->last().total_paths);
  return options_.frames == 0 && (state_.paused || session_->done()) && state_.commands.empty() &&
         state_.split.request == SplitState::Request::None && shown_epoch_ == film_epoch_ &&
         shown_paths_ == session_->last().total_paths && right_idle;
}

void Viewer::log_split(const char* when) const {
  const uint64_t l = session_->last().total_paths, r = right_->last().total_paths;
  spdlog::info("split view ({}): left {}/{} {} paths ({:.2f} spp), right {}/{} {} paths ({:.2f} spp), "
               "gap {} paths, largest gap {} paths, largest left step {} paths",
               when, session_->strategy().name, priority_name(session_->options().task.priority), l,
               mean_spp(*session_), right_->strategy().name, priority_name(right_->options().task.priority), r,
               mean_spp(*right_), l > r ? l - r : r - l, max_gap_, max_left_step_);
}

void Viewer::apply_split_request() {
  SplitState& sp = state_.split;
  const SplitState::Request request = std::exchange(sp.request, SplitState::Request::None);
  if (request == SplitState::Request::On && !right_) start_split(sp.strategy, sp.priority);
  if (request == SplitState::Request::Off && right_) stop_split();
}

void Viewer::start_split(const std::string& strategy, PriorityFunction priority) {
  try {
    right_ = make_right_session(*session_, strategy, priority);
  } catch (const std::exception& e) {
    state_.report("Split view on (right side " + strategy + "/" + priority_name(priority) + ")", e);
    return;
  }
  // Both sides start from zero: the comparison is at equal paths from the same start.
  session_->reset();
  state_.split.on = true;
  film_was_reset();
  spdlog::info("split view: on, left {}/{}, right {}/{}; the left film was restarted", session_->strategy().name,
               priority_name(session_->options().task.priority), right_->strategy().name,
               priority_name(right_->options().task.priority));
}

void Viewer::stop_split() {
  state_.split.strategy = right_->strategy().name;  // what the next "on" brings back
  state_.split.priority = right_->options().task.priority;
  right_.reset();
  display_.release_right();
  state_.split.on = false;
  state_.split.dragging = false;
  state_.split.mse.clear();
  state_.split.paths_per_second.clear();
  state_.split.shown_mse_valid = false;
  shown_right_paths_ = shown_right_epoch_ = ~uint64_t{0};
  spdlog::info("split view: off");
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
  const float panel_right = draw_control_window(*session_, right_.get(), state_, display_);
  const float status_height = draw_status_bar(*session_, right_.get(), state_, display_.stats());
  draw_error_window(state_, panel_right);
  const PixelRect area = image_area(panel_right, status_height);
  camera_input(area);
  if (window_.take_key_press(GLFW_KEY_F12) && !ImGui::GetIO().WantTextInput) state_.capture_requested = true;

  const bool scripted_switch = queue_smoke_actions();
  apply_split_request();
  const uint64_t paths_before = session_->last().total_paths;
  const uint64_t right_paths_before = right_ ? right_->last().total_paths : 0;
  apply_commands();
  if (scripted_switch) {
    spdlog::info("smoke: frame {}: now {}/{}, film {} ({} paths before the switch, {} after)", frame_index_,
                 session_->strategy().name, priority_name(session_->options().task.priority),
                 session_->last().total_paths == paths_before ? "kept" : "reset", paths_before,
                 session_->last().total_paths);
    if (right_)
      spdlog::info("smoke: frame {}: right now {}/{}, film {} ({} paths before the switch, {} after)", frame_index_,
                   right_->strategy().name, priority_name(right_->options().task.priority),
                   right_->last().total_paths == right_paths_before ? "kept" : "reset", right_paths_before,
                   right_->last().total_paths);
  }
  if (!state_.paused) render_step();
  update_mse();
  if (state_.capture_requested) take_capture();
  update_display();

  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  display_.draw(fb_width, fb_height, area,
                right_ ? split_column(state_.split.divider, static_cast<int>(session_->width())) : -1);
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
    } else if (a.action == "split") {
      spdlog::info("smoke: frame {}: split={}", frame_index_, a.value);
      state_.split.request = a.value == "on" ? SplitState::Request::On : SplitState::Request::Off;
    } else if (a.action == "divider") {
      state_.split.divider = std::clamp(std::stof(a.value), 0.f, 1.f);  // parse_smoke_action checked it
      spdlog::info("smoke: frame {}: divider={:.3f}", frame_index_, state_.split.divider);
    } else if (a.action == "split-strategy" || a.action == "split-priority") {
      const std::string name = a.value;
      const bool is_strategy = a.action == "split-strategy";
      if (!right_ && state_.split.request != SplitState::Request::On) {
        // Split view is off: the Split view section's choice for the next "on".
        try {
          if (is_strategy)
            state_.split.strategy = patch_strategies().find(name).info.name;
          else
            state_.split.priority = parse_priority(name.c_str());
        } catch (const std::exception& e) {
          state_.report("Set right " + std::string(is_strategy ? "strategy " : "priority ") + name, e);
        }
        continue;
      }
      if (is_strategy)
        state_.queue_on(Target::Right, "Set right strategy " + name,
                        [name](Session& session) { session.set_strategy(name); });
      else
        state_.queue_on(Target::Right, "Set right priority " + name,
                        [name](Session& session) { session.set_priority(parse_priority(name.c_str())); });
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

bool Viewer::divider_input(const PixelRect& area) {
  SplitState& sp = state_.split;
  const ImGuiIO& io = ImGui::GetIO();
  if (!right_ || area.width <= 0 || area.height <= 0) {
    sp.dragging = false;
    return false;
  }
  if (sp.dragging && !io.MouseDown[0]) {
    sp.dragging = false;
    return true;  // the release ends the drag, it does not orbit
  }
  const int film_width = static_cast<int>(session_->width());
  const ImageRect r = letterbox(area, film_width, static_cast<int>(session_->height()));
  if (r.width <= 0.f || io.MousePos.x == -FLT_MAX) return sp.dragging;
  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  // The mouse in framebuffer pixels, origin at the bottom left like the image rectangle.
  const float mx = io.MousePos.x * io.DisplayFramebufferScale.x;
  const float my = static_cast<float>(fb_height) - io.MousePos.y * io.DisplayFramebufferScale.y;
  if (sp.dragging) {
    sp.divider = std::clamp((mx - r.x) / r.width, 0.f, 1.f);
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    return true;
  }
  const float line_x =
      r.x + r.width * static_cast<float>(split_column(sp.divider, film_width)) / static_cast<float>(film_width);
  const float grab = 6.f * std::max(io.DisplayFramebufferScale.x, 1.f);
  const bool over = !io.WantCaptureMouse && my >= r.y && my <= r.y + r.height && std::abs(mx - line_x) <= grab;
  if (!over) return false;
  ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  if (io.MouseClicked[0] && !io.KeyShift) {
    sp.dragging = true;
    return true;
  }
  return false;
}

void Viewer::camera_input(const PixelRect& area) {
  const ImGuiIO& io = ImGui::GetIO();
  if (divider_input(area)) return;
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
    if (c.target == Target::Right) {  // the split view's right side only; keeps its film
      if (!right_) {
        spdlog::warn("{}: split view is off; ignored", c.action);
        continue;
      }
      try {
        c.run(*right_);
      } catch (const std::exception& e) {
        state_.report(c.action, e);
      }
      continue;
    }
    try {
      c.run(*session_);
    } catch (const std::exception& e) {
      state_.report(c.action, e);
      // The Session restored its previous scene and size, on a new (empty) film; the right side, which
      // did not change, restarts with it.
      if (c.rebuilds_film) {
        if (right_) right_->reset();
        film_was_reset();
      }
      continue;
    }
    if (c.target == Target::Both && right_) {
      try {
        c.run(*right_);
      } catch (const std::exception& e) {
        // The two sides would no longer show the same scene: keep the single view working.
        state_.report(c.action + " (split view's right side; split view is off)", e);
        stop_split();
      }
    }
    if (c.resets_film) film_was_reset();
  }
}

void Viewer::film_was_reset() {
  ++film_epoch_;
  mse_failed_ = false;
  max_left_step_ = max_gap_ = 0;
  mse_divider_ = -1.f;
  state_.on_film_reset(*session_);
}

void Viewer::render_step() {
  try {
    const FrameStats fs = session_->advance();
    if (fs.step.paths > 0) state_.paths_per_second.add(fs.paths_per_second);
    if (const MegakernelControl* m = session_->megakernel(); m && fs.step.tasks > 0)
      state_.megakernel_rates.add(m->stats(), fs.step.busy_ms, gpu_info().clock_khz);
    max_left_step_ = std::max(max_left_step_, fs.step.paths);
  } catch (const std::exception& e) {
    state_.report("Render", e);
    state_.paused = true;
    return;
  }
  if (!right_) return;
  try {
    // Equal budget (app/core/split.h): the right side renders what brings its total up to the left's.
    const uint64_t budget = split_follower_budget(session_->last().total_paths, right_->last().total_paths);
    if (budget > 0 && !right_->done()) {
      const FrameStats rs = right_->advance(budget);
      if (rs.step.paths > 0) state_.split.paths_per_second.add(rs.paths_per_second);
    }
    const uint64_t l = session_->last().total_paths, r = right_->last().total_paths;
    max_gap_ = std::max(max_gap_, l > r ? l - r : r - l);
  } catch (const std::exception& e) {
    state_.report("Render (split view's right side)", e);
    state_.paused = true;
  }
}

void Viewer::update_mse() {
  if (mse_failed_) return;
  const double now = ms_between(start_, std::chrono::steady_clock::now());
  try {
    if (!right_) {
      state_.mse.update(*session_, now);
      return;
    }
    // Both sides at the same moments, so the two curves share their time axis.
    SplitState& sp = state_.split;
    if (state_.mse.due(*session_, now) || sp.mse.due(*right_, now)) {
      state_.mse.sample(*session_, now);
      sp.mse.sample(*right_, now);
      mse_divider_ = -1.f;
    }
    if (mse_divider_ != sp.divider && session_->has_reference() && right_->has_reference()) {
      const int w = static_cast<int>(session_->width()), h = static_cast<int>(session_->height());
      const int column = split_column(sp.divider, w);
      sp.left_shown_mse = session_->mse(PixelRegion::columns(0, column, h));
      sp.right_shown_mse = right_->mse(PixelRegion::columns(column, w, h));
      sp.shown_mse_valid = true;
      mse_divider_ = sp.divider;
    }
  } catch (const std::exception& e) {
    state_.report("MSE", e);
    mse_failed_ = true;
  }
}

void Viewer::take_capture() {
  state_.capture_requested = false;
  try {
    const nlohmann::json extra = {{"display_path", display_.stats().label}, {"fps", state_.fps()}};
    if (right_) {
      const SplitCaptureResult r =
          capture_split(*session_, *right_, state_.tonemap, state_.split.divider, options_.capture_dir, extra);
      state_.capture_message = r.png;
      spdlog::info("capture: split view {} ({}, left {}, right {})", r.png, r.json, r.left.json, r.right.json);
    } else {
      const CaptureResult r = capture(*session_, state_.tonemap, options_.capture_dir, extra);
      state_.capture_message = r.png;
      spdlog::info("capture: {}", r.png);
    }
    state_.capture_failed = false;
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
  if (!right_) return;
  const uint64_t right_paths = right_->last().total_paths;
  try {
    display_.update(*right_, state_.tonemap, right_paths != shown_right_paths_ || film_epoch_ != shown_right_epoch_,
                    Layer::Right);
  } catch (const std::exception& e) {
    state_.report("Display (split view's right side)", e);
    state_.paused = true;
  }
  shown_right_paths_ = right_paths;
  shown_right_epoch_ = film_epoch_;
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
