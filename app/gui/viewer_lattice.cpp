// The viewer's lattice mode: a lattice workload of the registry (app/session/lattice_run.h) advanced live by
// its kernel, one frame's budget of super-steps per frame, its chosen view shown and captured; the
// workload picker's mode switch between the path tracer, the strand and the lattice workloads.
#include "app/gui/viewer.h"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "app/session/lattice_run.h"
#include "base/errors.h"

namespace mv::gui {

void Viewer::apply_mode_request() {
  StrandState& ss = state_.strands;
  if (!ss.mode_request) return;
  const std::string m = *std::exchange(ss.mode_request, std::nullopt);
  if (m == kPathTracerMode) {
    if (ss.active()) leave_strand_mode();
    if (state_.lattice.active()) leave_lattice_mode();
  } else if (find_lattice_workload(m)) {
    if (m != state_.lattice.workload) enter_lattice_mode(m);
    if (!lattice_) state_.lattice.commands.clear();  // it failed to start: its queued settings go too
  } else if (m != ss.workload) {
    enter_strand_mode(m);  // an unknown name goes to the error window and changes nothing
    if (ss.workload == m && state_.lattice.active()) leave_lattice_mode();
  }
}

void Viewer::enter_lattice_mode(const std::string& workload) {
  const LatticeWorkloadEntry* e = find_lattice_workload(workload);
  if (!e) {
    state_.report("Workload " + workload,
                  InputError("", "workload", "unknown lattice workload \"" + workload + "\" (allowed: " +
                                                 lattice_workload_names() + ")"));
    return;
  }
  std::unique_ptr<LatticeRun> run;
  try {
    // The command line's knobs (--name value, --smoke-at is later): each workload takes the ones it has.
    run = e->make(options_.session.knobs, state_.strands.gpu);
  } catch (const std::exception& ex) {
    state_.report("Workload " + workload, ex);
    return;
  }
  if (state_.strands.active()) leave_strand_mode();
  lattice_ = std::move(run);
  LatticeState& ls = state_.lattice;
  ls.workload = e->name;
  ls.run = lattice_.get();  // commands queued for it in the frame of the switch stay: they apply next
  ls.view = 0;
  ls.last_steps = 0;
  ls.steps_per_second.clear();
  ls.report = lattice_->report();
  lattice_report_time_ = glfwGetTime();
  lattice_dirty_ = true;
  spdlog::info("lattice: workload {}: {}", ls.workload, lattice_settings_text(*lattice_));
}

void Viewer::leave_lattice_mode() {
  LatticeState& ls = state_.lattice;
  spdlog::info("lattice: leaving {} after {} steps; back to {}", ls.workload, lattice_ ? lattice_->steps() : 0,
               state_.strands.active() ? state_.strands.workload : "the path tracer");
  ls.workload.clear();
  ls.run = nullptr;
  ls.commands.clear();
  ls.report = nlohmann::json();
  lattice_.reset();
  lattice_pixels_.clear();
  lattice_width_ = lattice_height_ = 0;
  lattice_view_shown_ = ~size_t{0};
  shown_epoch_ = ~uint64_t{0};  // the film goes back into the texture at the next update
  shown_right_epoch_ = ~uint64_t{0};
}

void Viewer::lattice_frame() {
  LatticeState& ls = state_.lattice;
  ls.run = lattice_.get();
  if (!lattice_) return;
  for (LatticeCommand& c : std::exchange(ls.commands, {})) {
    try {
      c.run(*lattice_);
      spdlog::info("lattice: {}: now {}", c.action, lattice_settings_text(*lattice_));
    } catch (const std::exception& e) {
      state_.report(c.action, e);
    }
    lattice_dirty_ = true;
    lattice_report_time_ = -1.0;  // the panel shows the new settings at once
  }
  ls.last_steps = 0;
  if (!ls.paused) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      ls.last_steps = lattice_->advance(std::clamp(static_cast<double>(ls.budget_ms), 1.0, 100.0));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s > 0.0) ls.steps_per_second.add(static_cast<double>(ls.last_steps) / s);
      last_render_ms_ = 1000.0 * s;
      lattice_dirty_ = true;
    } catch (const std::exception& e) {
      ls.paused = true;  // as a failed render step pauses the path tracer: the user resumes
      state_.report("Advance " + ls.workload + " (paused)", e);
    }
  }
  const double now = glfwGetTime();
  if (lattice_report_time_ < 0.0 || now - lattice_report_time_ > 0.25) {
    try {
      ls.report = lattice_->report();
    } catch (const std::exception& e) {
      state_.report("Report of " + ls.workload, e);
    }
    lattice_report_time_ = now;
  }
  if (state_.capture_requested) take_lattice_capture();
  if (!lattice_dirty_ && ls.view == lattice_view_shown_) return;
  try {
    if (ls.view >= lattice_->views().size()) ls.view = 0;
    lattice_->image(ls.view, lattice_pixels_, lattice_width_, lattice_height_);
    lattice_view_shown_ = ls.view;
    lattice_dirty_ = false;
    display_.show_image(lattice_pixels_.data(), static_cast<int>(lattice_width_), static_cast<int>(lattice_height_),
                        "host upload \xC2\xB7 " + ls.workload + " " + lattice_->views()[ls.view]);
  } catch (const std::exception& e) {
    ls.paused = true;
    state_.report("Show " + ls.workload + " (paused)", e);
  }
}

void Viewer::take_lattice_capture() {
  record_capture([this](nlohmann::json extra) {
    if (lattice_pixels_.empty() || lattice_view_shown_ != state_.lattice.view) {  // capture what is meant to show
      lattice_->image(state_.lattice.view, lattice_pixels_, lattice_width_, lattice_height_);
      lattice_view_shown_ = state_.lattice.view;
    }
    extra["steps_per_second"] = state_.lattice.steps_per_second.value();
    const auto [png, json] = capture_lattice(*lattice_, state_.lattice.view, lattice_pixels_, lattice_width_,
                                             lattice_height_, options_.capture_dir, extra);
    spdlog::info("capture: {} ({})", png, json);
    return png;
  });
}

}  // namespace mv::gui
