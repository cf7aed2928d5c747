// The viewer's frame loop: input → panels → queued Session changes → render one frame's budget →
// tone map + display → ImGui → swap.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "app/core/session.h"
#include "app/gui/display.h"
#include "app/gui/gui.h"
#include "app/gui/gui_state.h"
#include "app/gui/imgui_layer.h"
#include "app/gui/window.h"

namespace mv::gui {

/// Drives one Session in one Window. Errors of Session calls are shown in the error window and the loop
/// goes on; a failed render step or display update pauses rendering until the user resumes.
class Viewer {
 public:

  /// `window` and `options` must outlive the viewer. Throws std::runtime_error if the display shaders fail.
  Viewer(Window& window, std::unique_ptr<Session> session, const GuiOptions& options);

  /// Runs until the window is closed, or for options.frames frames in smoke-test mode (then saves
  /// options.window_shot if set). Returns the process exit code: 0, or 1 if the window shot cannot be
  /// written. Throws only if the Session cannot be rebuilt after a failed change (see SessionCommand).
  int run();
  /// The display's cost and path (also shown in the Progress section and the status bar).
  const DisplayStats& display_stats() const { return display_.stats(); }

 private:
  void frame();
  /// Queues the options' smoke actions of frame `frame_index_`; returns whether any switched settings.
  bool queue_smoke_actions();
  /// The part of the framebuffer left for the image (right of the docked panel, above the status bar).
  PixelRect image_area(float panel_right, float status_height) const;
  void camera_input(const PixelRect& area);
  void apply_commands();
  void render_step();
  void update_mse();
  void take_capture();
  void update_display();
  void film_was_reset();
  bool idle() const;
  int save_window_shot();

  Window& window_;
  const GuiOptions& options_;
  std::unique_ptr<Session> session_;
  ImGuiLayer imgui_;
  Display display_;
  GuiState state_;
  uint64_t film_epoch_ = 0;          // bumped by every change that resets the film
  uint64_t shown_epoch_ = ~uint64_t{0};
  uint64_t shown_paths_ = 0;         // film state the texture shows
  int frame_index_ = 0;              // 1-based number of the frame being drawn
  bool mse_failed_ = false;          // stop sampling the MSE after an error, until the film is reset
  std::chrono::steady_clock::time_point start_, last_frame_;
};

}  // namespace mv::gui
