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
#include <functional>
#include <map>
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
      imgui_(window.handle(), imgui_ini_path(&settings_why_)), state_(*session_) {
  if (const auto size = imgui_.saved_window_size()) window_.resize_within_screen(size->first, size->second);
  spdlog::info("settings: {}", imgui_.ini_path().empty() ? "none (" + settings_why_ + ")" : imgui_.ini_path());
  if (!gpu_available() && !gpu_info().cuda_error.empty())
    spdlog::info("gpu: {} (CUDA: {})", gpu_info().reason, gpu_info().cuda_error);
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
  StrandState& ss = state_.strands;
  ss.gpu = gpu_available() && !options_.session.force_cpu;
  ss.no_gpu_reason = options_.session.force_cpu ? "--cpu was given" : gpu_info().reason;
  ss.strategy = !options_.strand_strategy.empty() ? options_.strand_strategy : ss.gpu ? "cuda" : "cpu-parallel";
  ss.fill_in_seconds = options_.fill_in_seconds >= 0.f ? options_.fill_in_seconds : options_.frames > 0 ? 0.f : 2.f;
  ss.grid_auto = options_.strand_grid.automatic;
  if (!ss.grid_auto) {
    ss.grid_n = options_.strand_grid.blocks;
    ss.grid_b = options_.strand_grid.threads;
  }
  ss.knobs.grid.work_unit = options_.strand_grid.work_unit;
  BoundParams<StrandRunSettings>(strand_params(), ss.knobs).apply(options_.strand_knobs);  // checked by the CLI
  if (find_lattice_workload(options_.strand_workload)) {
    enter_lattice_mode(options_.strand_workload);
  } else if (!options_.strand_workload.empty()) {
    enter_strand_mode(options_.strand_workload, options_.strand_width, options_.strand_height);
  }
  start_ = last_frame_ = std::chrono::steady_clock::now();
}

void Viewer::show_error(const std::string& message) {
  state_.error = message;
  ++state_.error_count;
  state_.error_raise = true;
}

int Viewer::run() {
  int held = 0;  // frames drawn while the smoke test's frame number stood still
  std::chrono::steady_clock::time_point held_since;
  for (int n = 0; !window_.should_close();) {
    // Smoke tests in strand mode: the frame number stands still while a strand run is pending, so a
    // scripted step after it sees the run finished and shown.
    if (n == 0 || options_.frames == 0 || !strand_busy()) {
      if (held > 0)
        spdlog::info("smoke: frame {} waited for the strand run: {} frames drawn meanwhile ({:.0f} fps)", n, held,
                     1000.0 * held / std::max(ms_between(held_since, std::chrono::steady_clock::now()), 1e-3));
      held = 0;
      ++n;
    } else if (held++ == 0) {
      held_since = std::chrono::steady_clock::now();
    }
    frame_index_ = n;
    frame();
    if (options_.frames > 0 && n >= options_.frames && !strand_busy()) {
      const DisplayStats& d = display_.stats();
      if (state_.strands.active())
        spdlog::info("smoke test: {} frames, strand mode {} {}, display {}", n, state_.strands.workload,
                     state_.strands.strategy, d.label);
      else if (lattice_)
        spdlog::info("smoke test: {} frames, lattice mode {}: {}, display {}", n, state_.lattice.workload,
                     lattice_settings_text(*lattice_), d.label);
      else
      spdlog::info("smoke test: {} frames, {:.1f} spp, display {} ({} updates, mean {:.3f} ms CPU, {:.3f} ms GPU), "
                   "render budget {:.1f} ms, rest of the frame {:.1f} ms",
                   n, mean_spp(*session_), d.label, d.updates, d.mean_update_ms(), d.mean_device_ms(),
                   state_.render_budget_ms, state_.frame_overhead_ms.value());
      if (right_) log_split("end");
      return options_.window_shot.empty() ? 0 : save_window_shot();
    }
    window_.swap_buffers();
  }
  return 0;
}

bool Viewer::idle() const {
  if (state_.lattice.active())
    return options_.frames == 0 && state_.commands.empty() && !state_.strands.mode_request &&
           state_.lattice.paused && state_.lattice.commands.empty() && !lattice_dirty_ &&
           lattice_view_shown_ == state_.lattice.view && !state_.capture_requested;
  if (state_.strands.active() || state_.strands.mode_request)
    return options_.frames == 0 && state_.commands.empty() && !state_.strands.mode_request &&
           !state_.strands.run_requested && !strand_busy() && !strand_dirty_ && !strand_replay_ &&
           state_.strands.heat_map == strand_heat_shown_;
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
  state_.split.megakernel_rates.clear();
  state_.split.shown_mse_valid = false;
  shown_right_paths_ = shown_right_epoch_ = ~uint64_t{0};
  spdlog::info("split view: off");
}

void Viewer::frame() {
  bool waited = true;
  if (idle())
    window_.wait_events(0.1);  // nothing renders: wake on input, or 10 times a second for the panels
  else if (const double left_s = 1.0 / 30.0 - ms_between(last_frame_, std::chrono::steady_clock::now()) / 1000.0;
           state_.strands.active() && strand_busy() && !state_.strands.run_requested && left_s > 0.0)
    window_.wait_events(left_s);  // a strand run on the worker: 30 fps for the panels; its end wakes us
  else
    window_.poll_events(), waited = false;
  const auto now = std::chrono::steady_clock::now();
  const double wall_ms = ms_between(last_frame_, now);
  state_.frame_ms.add(wall_ms);
  // What the last frame spent besides rendering, when it rendered without waiting for events.
  if (last_render_ms_ > 0.0 && !waited) state_.frame_overhead_ms.add(std::max(0.0, wall_ms - last_render_ms_));
  last_render_ms_ = 0.0;
  last_frame_ = now;

  imgui_.begin_frame();
  const float panel_right = draw_control_window(*session_, right_.get(), state_, display_);
  const float status_height = draw_status_bar(*session_, right_.get(), state_, display_.stats());
  draw_error_window(state_, panel_right);
  const PixelRect area = image_area(panel_right, status_height);
  if (state_.film_mode())
    camera_input(area);
  else if (state_.strands.active())
    strand_view_input(area);
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
    if (right_) {
      spdlog::info("smoke: frame {}: right now {}/{}, film {} ({} paths before the switch, {} after)", frame_index_,
                   right_->strategy().name, priority_name(right_->options().task.priority),
                   right_->last().total_paths == right_paths_before ? "kept" : "reset", right_paths_before,
                   right_->last().total_paths);
      // The knobs both sides share (app/session/split.h), as each side holds them now.
      const std::string l = nlohmann::json(session_->options().knobs).dump();
      const std::string r = nlohmann::json(right_->options().knobs).dump();
      spdlog::info("smoke: frame {}: knobs {}", frame_index_,
                   l == r ? "the same on both sides: " + l : "differ: left " + l + ", right " + r);
    }
  }
  apply_mode_request();
  strand_frame();
  lattice_frame();
  const bool film = state_.film_mode();
  if (state_.strands.active()) {
    show_strand_image();
    if (state_.capture_requested) take_strand_capture();
  } else if (film) {
    if (!state_.paused) render_step();
    update_mse();
    if (state_.capture_requested) take_capture();
    update_display();
  }

  int fb_width = 0, fb_height = 0;
  window_.framebuffer_size(fb_width, fb_height);
  display_.draw(fb_width, fb_height, area,
                right_ && film ? split_column(state_.split.divider, static_cast<int>(session_->width())) : -1);
  imgui_.end_frame();
}

bool Viewer::queue_smoke_actions() {
  if (frame_index_ == smoke_frame_done_) return false;  // a strand-mode smoke frame drawn again while waiting
  smoke_frame_done_ = frame_index_;
  bool switched = false;
  for (const SmokeAction& a : options_.smoke_actions)
    if (a.frame == frame_index_) switched |= run_smoke_action(a);
  return switched;
}

bool Viewer::run_smoke_action(const SmokeAction& a) {
  // One handler per action of smoke_rules() (app/gui/smoke_script.h), each doing what its panel control
  // does; parse_smoke_action checked the value's form. Returns whether a Session setting was switched.
  spdlog::info("smoke: frame {}: {}{}{}", frame_index_, a.action, a.value.empty() ? "" : "=", a.value);
  using Handler = std::function<bool(Viewer&, const std::string&)>;
  // A control that changes the viewer's state only (no Session setting switched).
  const auto set = [](std::function<void(Viewer&, const std::string&)> change) -> Handler {
    return [change](Viewer& v, const std::string& value) {
      change(v, value);
      return false;
    };
  };
  const auto queue_left = [](Viewer& v, const std::string& action, std::function<void(Session&)> change) {
    v.state_.queue_on(Target::Left, action, std::move(change));
    return true;
  };
  const auto view = [set](const char* action) {
    return set([action](Viewer& v, const std::string& value) {
      StrandState& ss = v.state_.strands;
      // The script's value was checked when --smoke-at was parsed.
      ss.view = std::string(action) == "strand-view-reset" ? StrandViewParams{} : smoke_view(action, value, ss.view);
      ss.run_requested = true;
    });
  };
  const auto split_side = [](bool is_strategy) {
    return [is_strategy](Viewer& v, const std::string& name) {
      const std::string what = std::string(is_strategy ? "strategy " : "priority ") + name;
      if (!v.right_ && v.state_.split.request != SplitState::Request::On) {
        // Split view is off: the Split view section's choice for the next "on".
        try {
          if (is_strategy)
            v.state_.split.strategy = patch_strategies().find(name).info.name;
          else
            v.state_.split.priority = parse_priority(name.c_str());
        } catch (const std::exception& e) {
          v.state_.report("Set right " + what, e);
        }
        return false;
      }
      v.state_.queue_on(Target::Right, "Set right " + what, [is_strategy, name](Session& session) {
        if (is_strategy)
          session.set_strategy(name);
        else
          session.set_priority(parse_priority(name.c_str()));
      });
      return true;
    };
  };
  const auto set_grid = [](Viewer& v, const std::string& value) {
    StrandState& ss = v.state_.strands;
    std::string text = value;
    std::replace(text.begin(), text.end(), ':', ',');
    try {
      const GridConfig g = parse_grid(text, "grid");
      ss.grid_auto = g.automatic;
      if (!g.automatic) {
        ss.grid_n = g.blocks;
        ss.grid_b = g.threads;
        ss.knobs.grid.work_unit = g.work_unit;
      }
      ss.run_requested = true;
    } catch (const std::exception& e) {
      v.state_.report("Set grid " + value, e);
    }
  };
  // An action of the Lattice section: for the run on screen, or for the lattice workload that a switch of
  // this same frame is about to start (queued, it applies once that run exists, as its knobs do). Outside
  // lattice mode it is refused, naming the action, rather than kept for a later run.
  const auto lattice_action = [set](const char* action, std::function<void(Viewer&, const std::string&)> change) {
    return set([action, change](Viewer& v, const std::string& value) {
      const std::optional<std::string>& switching = v.state_.strands.mode_request;
      if (switching ? find_lattice_workload(*switching) != nullptr : v.lattice_ != nullptr) return change(v, value);
      v.state_.report(std::string(action) + (value.empty() ? "" : "=" + value),
                      InputError("", action, "is an action of lattice mode (" + lattice_workload_names() +
                                                 "): switch to it first (workload=NAME)"));
    });
  };
  const auto show_lattice_view = [](Viewer& v, const std::string& value) {
    v.state_.lattice.queue("Show " + value, [&v, value](LatticeRun& r) {
      const std::vector<std::string> views = r.views();
      const auto it = std::find(views.begin(), views.end(), value);
      if (it != views.end()) {
        v.state_.lattice.view = static_cast<size_t>(it - views.begin());
        return;
      }
      std::string names;
      for (const std::string& n : views) names += (names.empty() ? "" : ", ") + n;
      throw InputError("", "lattice-view", "\"" + value + "\" is not a view of " + r.workload() + " (" + names + ")");
    });
  };
  static const std::map<std::string, Handler> handlers = {
      {"priority",
       [queue_left](Viewer& v, const std::string& name) {
         return queue_left(v, "Set priority " + name,
                           [name](Session& session) { session.set_priority(parse_priority(name.c_str())); });
       }},
      {"strategy",
       [queue_left](Viewer& v, const std::string& name) {
         return queue_left(v, "Set strategy " + name, [name](Session& session) { session.set_strategy(name); });
       }},
      // What F12 and the Screenshot button do.
      {"capture", set([](Viewer& v, const std::string&) { v.state_.capture_requested = true; })},
      {"split", set([](Viewer& v, const std::string& on) {
         v.state_.split.request = on == "on" ? SplitState::Request::On : SplitState::Request::Off;
       })},
      {"split-strategy", split_side(true)},
      {"split-priority", split_side(false)},
      {"divider", set([](Viewer& v, const std::string& f) { v.state_.split.divider = std::clamp(std::stof(f), 0.f, 1.f); })},
      {"workload", set([](Viewer& v, const std::string& w) {
         v.state_.strands.mode_request = w == kProgressiveModeValue ? std::string(kPathTracerMode) : w;
       })},
      // The strategy is checked when the run starts.
      {"strand-strategy", set([](Viewer& v, const std::string& s) {
         v.state_.strands.strategy = s;
         v.state_.strands.run_requested = true;
       })},
      {"grid", set(set_grid)},
      {"strand-size", set([](Viewer& v, const std::string& size) {
         const auto [w, h] = parse_strand_size(size, "strand-size");  // at most 9 digits each: fits an int
         v.state_.strands.size_request = std::make_pair(static_cast<int>(w), static_cast<int>(h));
       })},
      {"strand-view", set([](Viewer& v, const std::string& shown) { v.state_.strands.heat_map = shown == "heat"; })},
      {"strand-orbit", view("strand-orbit")},
      {"strand-pan", view("strand-pan")},
      {"strand-view-reset", view("strand-view-reset")},
      {"lattice-strategy", lattice_action("lattice-strategy", [](Viewer& v, const std::string& s) {
         v.state_.lattice.queue("Set strategy " + s, [s](LatticeRun& r) { r.set_strategy(s); });
       })},
      {"lattice-view", lattice_action("lattice-view", show_lattice_view)},
      {"lattice-pause", lattice_action("lattice-pause", [](Viewer& v, const std::string& on) { v.state_.lattice.paused = on == "on"; })},
      {"lattice-restart", lattice_action("lattice-restart", [](Viewer& v, const std::string&) {
         v.state_.lattice.queue("Restart", [](LatticeRun& r) { r.restart(); });
       })},
  };
  if (const auto h = handlers.find(a.action); h != handlers.end()) return h->second(*this, a.value);
  // A generated widget of the Lattice section: of the run on screen, or of the lattice workload a switch
  // of this same frame is about to start (its commands wait for it).
  const std::optional<std::string>& switching = state_.strands.mode_request;
  const LatticeWorkloadEntry* next = switching ? find_lattice_workload(*switching) : nullptr;
  if ((lattice_ && !next && lattice_->params().has(a.action)) || (next && find_param(next->knobs, a.action))) {
    state_.lattice.queue("Set " + a.action + " " + a.value, lattice_knob_change(a.action, a.value));
    return false;
  }
  const bool film_knob = find_param(patch_strategy_knobs(), a.action) != nullptr;
  if (film_knob && !(state_.strands.active() && strand_params_have(a.action))) {  // the Scheduling panel's knobs
    const std::string name = a.action, value = a.value;
    state_.queue_on(Target::Both, "Set " + name + " " + value,
                    [name, value](Session& session) { session.set_knob(name, value); });
    return true;
  }
  if (strand_params_have(a.action)) {  // a generated widget of the Strands section
    try {
      BoundParams<StrandRunSettings>(strand_params(), state_.strands.knobs).apply({{a.action, a.value}});
      state_.strands.run_requested = true;
    } catch (const std::exception& e) {
      state_.report("Set " + a.action + " " + a.value, e);
    }
    return false;
  }
  if (state_.strands.active() && find_param(strand_workload_knobs(), a.action)) {  // the workload's own knobs
    try {
      const StrandWorkloadEntry& w = find_strand_workload(state_.strands.workload);
      w.check_knobs({{a.action, a.value}});
      state_.strands.workload_knobs[a.action] = a.value;
      state_.strands.run_requested = true;
    } catch (const std::exception& e) {
      state_.report("Set " + a.action + " " + a.value, e);
    }
    return false;
  }
  // A lattice knob while no lattice workload runs.
  state_.report("Set " + a.action + " " + a.value,
                InputError("", a.action, "is a setting of a lattice workload (" + lattice_workload_names() +
                                             "): switch to it first (workload=NAME)"));
  return false;
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
  const auto t0 = std::chrono::steady_clock::now();
  struct Timed {  // the wall clock of the rendering, however render_step leaves
    double& out;
    std::chrono::steady_clock::time_point t0;
    ~Timed() { out = ms_between(t0, std::chrono::steady_clock::now()); }
  } timed{last_render_ms_, t0};
  // On the CPU the display copies through the host and can cost more than the rendering: the budget grows
  // so that rendering keeps most of the frame (adapted_frame_budget_ms). The user's setting stays as set.
  const double user_budget = session_->options().frame_budget_ms;
  const bool adapt = session_->side() == Side::Host && session_->options().paths_per_frame == 0;
  // In split view the right side renders as many paths again: the left side takes half of the adapted budget.
  state_.render_budget_ms =
      adapt ? std::max(user_budget, adapted_frame_budget_ms(user_budget, state_.frame_overhead_ms.value()) / (right_ ? 2.0 : 1.0))
            : user_budget;
  try {
    session_->set_frame_budget_ms(state_.render_budget_ms);
    const FrameStats fs = session_->advance();
    session_->set_frame_budget_ms(user_budget);
    if (fs.step.work > 0) state_.paths_per_second.add(fs.paths_per_second);
    if (const MegakernelControl* m = session_->megakernel(); m && fs.step.tasks > 0)
      state_.megakernel_rates.add(m->stats(), fs.step.busy_ms, gpu_info().clock_khz);
    max_left_step_ = std::max(max_left_step_, fs.step.work);
  } catch (const std::exception& e) {
    session_->set_frame_budget_ms(user_budget);
    state_.report("Render", e);
    state_.paused = true;
    return;
  }
  if (!right_) return;
  try {
    // Equal budget (app/session/split.h): the right side renders what brings its total up to the left's.
    const uint64_t budget = split_follower_budget(session_->last().total_paths, right_->last().total_paths);
    if (budget > 0 && !right_->done()) {
      const FrameStats rs = right_->advance(budget);
      if (rs.step.work > 0) state_.split.paths_per_second.add(rs.paths_per_second);
      if (const MegakernelControl* m = right_->megakernel(); m && rs.step.tasks > 0)
        state_.split.megakernel_rates.add(m->stats(), rs.step.busy_ms, gpu_info().clock_khz);
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

void Viewer::record_capture(const std::function<std::string(const nlohmann::json& extra)>& write) {
  state_.capture_requested = false;
  try {
    state_.capture_message = write({{"display_path", display_.stats().label}, {"fps", state_.fps()}});
    state_.capture_failed = false;
  } catch (const std::exception& e) {
    state_.capture_message = e.what();
    state_.capture_failed = true;
    state_.report("Screenshot", e);
  }
}

void Viewer::take_capture() {
  record_capture([this](const nlohmann::json& extra) {
    if (right_) {
      const SplitCaptureResult r =
          capture_split(*session_, *right_, state_.tonemap, state_.split.divider, options_.capture_dir, extra);
      spdlog::info("capture: split view {} ({}, left {}, right {})", r.png, r.json, r.left.json, r.right.json);
      return r.png;
    }
    const CaptureResult r = capture(*session_, state_.tonemap, options_.capture_dir, extra);
    spdlog::info("capture: {}", r.png);
    return r.png;
  });
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
    // Never over a file, also one created while the viewer ran (the CLI checked it before the window opened).
    write_new_file(options_.window_shot,
                   [&](const std::string& tmp) { write_png(tmp, rgba.data(), width, height); });
  } catch (const std::exception& e) {
    spdlog::error("window shot: {}", e.what());
    return 1;
  }
  spdlog::info("window shot: {} ({}x{})", options_.window_shot, width, height);
  return 0;
}

}  // namespace mv::gui
