// The viewer's frame loop: input → panels → queued Session changes → render one frame's budget →
// tone map + display → ImGui → swap.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "app/session/lattice_run.h"
#include "app/session/session.h"
#include "app/session/strand_view.h"
#include "app/gui/display.h"
#include "app/gui/gui.h"
#include "app/gui/gui_state.h"
#include "app/gui/imgui_layer.h"
#include "app/gui/window.h"

namespace mv::gui {

/// The split view's right session: `left`'s current scene, resolution, camera, seed, target
/// spp, sampling, schedule, strategy knobs and reference, with `strategy` and `priority`.
/// Throws what the Session constructor throws (InputError: an unknown strategy, a GPU strategy without
/// a GPU, a film that does not fit in memory; CudaError).
std::unique_ptr<Session> make_right_session(const Session& left, const std::string& strategy, PriorityFunction priority);

/// Drives one Session in one Window, or two side by side in split view (app/session/split.h). Errors of Session calls are shown in the error window and the loop
/// goes on; a failed render step or display update pauses rendering until the user resumes.
class Viewer {
 public:

  /// `window` and `options` must outlive the viewer. `right` (may be null): start in split view with this
  /// right session (make_right_session). Throws std::runtime_error if the display shaders fail.
  Viewer(Window& window, std::unique_ptr<Session> session, const GuiOptions& options,
         std::unique_ptr<Session> right = nullptr);

  /// Runs until the window is closed, or for options.frames frames in smoke-test mode (then saves
  /// options.window_shot if set). Returns the process exit code: 0, or 1 if the window shot cannot be
  /// written. Throws only if the Session cannot be rebuilt after a failed change (see SessionCommand).
  int run();
  /// Shows `message` in the error window (and counts it) as a failed panel change would: for start-up
  /// problems the viewer recovered from, e.g. a scene that could not be opened.
  void show_error(const std::string& message);
  /// The display's cost and path (also shown in the Progress section and the status bar).
  const DisplayStats& display_stats() const { return display_.stats(); }

 private:
  void frame();
  /// Queues the options' smoke actions of frame `frame_index_`; returns whether any switched settings.
  bool queue_smoke_actions();
  /// Runs one smoke action through its handler (app/gui/smoke_script.h); returns whether it switched a
  /// Session setting.
  bool run_smoke_action(const SmokeAction& a);
  /// The part of the framebuffer left for the image (right of the docked panel, above the status bar).
  PixelRect image_area(float panel_right, float status_height) const;
  void camera_input(const PixelRect& area);
  /// Hover and drag of the split view's divider in the image; returns whether it took the mouse.
  bool divider_input(const PixelRect& area);
  /// Strand mode: drag on the image orbits (volumes) or pans (mandelbrot), the wheel zooms; the run
  /// restarts when the drag ends and after each wheel step. Ignored while ImGui wants the mouse.
  void strand_view_input(const PixelRect& area);
  /// Turns split view on or off as state_.split.request asks (errors go to the error window).
  void apply_split_request();
  void start_split(const std::string& strategy, PriorityFunction priority);
  void stop_split();
  /// Logs both sides' paths (smoke tests check the equal budget).
  void log_split(const char* when) const;
  void apply_commands();
  void render_step();
  void update_mse();
  void take_capture();
  /// The part every capture shares: clears the request, calls `write(extra)` — which writes the files, with
  /// `extra` (display path, fps) merged into the sidecar, and returns the PNG's path — and records that path
  /// for the Capture section, or on failure the message, also shown in the error window.
  void record_capture(const std::function<std::string(const nlohmann::json& extra)>& write);
  void update_display();
  void film_was_reset();
  bool idle() const;
  int save_window_shot();

  // Strand mode: the path tracer's Session stays as it is (not advanced) while a strand
  // workload is shown; its runs go through strand_runner_ on a worker thread.
  /// Applies a workload switch, starts a requested run, collects finished runs and updates the panel's
  /// "running" line.
  void strand_frame();
  /// Switches to `workload` at width × height strands (0: its default, the paper's strand count); the
  /// history is cleared and a run is requested. An unknown name goes to the error window.
  void enter_strand_mode(const std::string& workload, uint32_t width = 0, uint32_t height = 0);
  void leave_strand_mode();
  /// Validates the Strands section's settings (errors go to the error window) and queues the run.
  void start_strand_run();
  void strand_finished(StrandOutcome o);
  /// Uploads the shown run's image or step heat map when it changed (black before the first run).
  void show_strand_image();
  /// Uploads strand_pixels_ (width × height) for display; a failure goes to the error panel.
  void upload_strand_pixels(int width, int height);
  void take_strand_capture();
  bool strand_busy() const { return strand_runner_ && strand_runner_->busy(); }

  // Lattice mode (app/gui/viewer_lattice.cpp): a lattice workload (app/session/lattice_run.h) advances
  // live, one frame's budget of super-steps per frame; the path tracer's Session waits unchanged.
  /// Applies the workload picker's request (path tracer, a strand or a lattice workload); errors go to the
  /// error window and leave the mode as it was.
  void apply_mode_request();
  /// Starts `workload` (a lattice registry name) with the command line's knobs; leaves strand mode.
  void enter_lattice_mode(const std::string& workload);
  void leave_lattice_mode();
  /// Applies the Lattice section's queued changes, advances the run by the frame's budget unless paused,
  /// refreshes its report and uploads the shown view.
  void lattice_frame();
  void take_lattice_capture();

  Window& window_;
  const GuiOptions& options_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Session> right_;   // the split view's right session; null in the single view
  std::string settings_why_;  // why there is no settings file (imgui_ini_path); before imgui_, which sets it
  ImGuiLayer imgui_;
  Display display_;
  GuiState state_;
  uint64_t film_epoch_ = 0;          // bumped by every change that resets the film
  uint64_t shown_epoch_ = ~uint64_t{0};
  uint64_t shown_paths_ = 0;         // film state the texture shows
  uint64_t shown_right_paths_ = ~uint64_t{0};  // the right layer's
  uint64_t shown_right_epoch_ = ~uint64_t{0};
  uint64_t max_left_step_ = 0;       // split view: the largest left step since the films were reset (paths)
  uint64_t max_gap_ = 0;             // split view: the largest |left − right| total paths after a frame
  float mse_divider_ = -1.f;         // the divider the shown-columns MSE was computed for
  int frame_index_ = 0;              // 1-based number of the frame being drawn
  int smoke_frame_done_ = 0;         // the last frame whose smoke steps were queued
  std::unique_ptr<StrandRunner> strand_runner_;  // created with the first strand run
  std::optional<StrandOutcome> strand_shown_;    // the run on screen (the latest successful one)
  std::vector<uint32_t> strand_pixels_;          // what was uploaded (captures write exactly this)
  bool strand_dirty_ = false;        // strand_shown_ or the mode changed: upload again
  bool strand_heat_shown_ = false;   // strand_pixels_ is the step heat map
  std::unique_ptr<StrandReplay> strand_replay_;  // the fill-in replay in progress (null: none)
  double strand_replay_start_ = 0.0;             // glfwGetTime() when it started
  uint64_t strand_running_id_ = 0;   // the request the panel's "running" line shows
  std::unique_ptr<LatticeRun> lattice_;          // the lattice run on screen (null: not in lattice mode)
  std::vector<uint32_t> lattice_pixels_;         // what was uploaded (captures write exactly this)
  uint32_t lattice_width_ = 0, lattice_height_ = 0;
  size_t lattice_view_shown_ = ~size_t{0};       // the view lattice_pixels_ holds
  bool lattice_dirty_ = false;                   // the run changed since the last upload
  double lattice_report_time_ = -1.0;            // glfwGetTime() of the last report() refresh
  bool mse_failed_ = false;          // stop sampling the MSE after an error, until the film is reset
  double last_render_ms_ = 0.0;      // wall clock of this frame's render_step (0: it did not render)
  std::chrono::steady_clock::time_point start_, last_frame_;
};

}  // namespace mv::gui
