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
  /// Start with the display copying through the host even where CUDA-GL interop works (to compare).
  bool force_host_copy = false;
};

/// Runs the viewer until the window closes (or for `frames` frames). Returns the process exit code.
/// Errors while running are shown in the error panel and the viewer goes on. Returns 1 after printing
/// one line to stderr when it cannot start: options the Session rejects ("megaview: <error>"), or no
/// window ("megaview: cannot open a window (no display?): <GLFW error>; use `megaview render` for
/// headless rendering"); also when the smoke test's window shot cannot be written.
int run_gui(const GuiOptions& options);

}  // namespace mv
