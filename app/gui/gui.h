// The interactive viewer: a GLFW window with Dear ImGui panels showing a Session's film.
#pragma once

#include <string>

#include "app/core/session.h"

namespace mv {

struct GuiOptions {
  SessionOptions session;
  int window_width = 1280, window_height = 800;
  /// Smoke-test mode: render this many frames, then (if window_shot is set) save the window and exit.
  int frames = 0;
  std::string window_shot;        ///< PNG of the whole window after `frames` frames
  std::string capture_dir = "captures";
};

/// Runs the viewer until the window closes. Returns the process exit code. Errors while running are
/// shown in the error panel; only a failure to open the window (no display) returns non-zero.
int run_gui(const GuiOptions& options);

}  // namespace mv
