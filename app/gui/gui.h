// The interactive viewer: a GLFW window with Dear ImGui panels showing a Session's film.
#pragma once

#include <string>
#include <vector>

#include "app/core/session.h"
#include "app/core/split.h"

namespace mv {

/// One scripted step of a smoke test (`--smoke-at FRAME:ACTION`), run at the start of frame `frame`
/// through the same path as the panel or key that does it by hand:
///   priority=P   the Scheduling panel's priority combo (queued Session change; the film is kept)
///   strategy=S   the Scheduling panel's strategy combo (the film is kept)
///   NAME=VALUE   a megakernel setting of the Scheduling panel (the film is kept), NAME one of
///                app/core/megakernel_report.h's names, e.g. segment-size=64, controllers=4, controller=off
///   capture      the screenshot button / F12 (writes the four capture files into capture_dir; in split
///                view each side's four files plus the composed PNG and split sidecar, capture_split)
///   split=on|off         the Split view section's checkbox (on: creates the right session, restarts
///                        the left film; off: drops it)
///   split-strategy=S     the Split view section's right strategy combo (the right film is kept)
///   split-priority=P     the Split view section's right priority combo (the right film is kept)
///   divider=F            the divider slider, F in [0, 1]
/// The viewer logs each step; for priority and strategy it logs the paths on the film before and after,
/// so a test can see that the switch kept the film.
struct SmokeAction {
  int frame = 0;       ///< 1-based frame number, ≥ 1
  std::string action;  ///< "priority", "strategy", "capture", "split", "split-strategy", "split-priority",
                       ///< "divider" or a megakernel setting's name
  std::string value;   ///< the priority or strategy name, the setting's value; empty for capture
};

/// Parses "FRAME:ACTION" as above. Throws InputError("--smoke-at", ...) naming the allowed forms; the
/// priority or strategy name and a setting's value are checked when the step runs (a bad one lands in
/// the error window, like any failed panel change).
SmokeAction parse_smoke_action(const std::string& text);

struct GuiOptions {
  SessionOptions session;
  int window_width = 1280, window_height = 800;
  /// Smoke-test mode: render this many frames, then (if window_shot is set) save the window and exit.
  int frames = 0;
  std::string window_shot;        ///< PNG of the whole window after `frames` frames
  std::string capture_dir = "captures";
  /// Start with the display copying through the host even where CUDA-GL interop works (to compare).
  bool force_host_copy = false;
  /// Scripted steps for smoke tests (in any order; several may share a frame).
  std::vector<SmokeAction> smoke_actions;
  /// `--split STRATEGY[:PRIORITY]`: start in split view with this right side (app/core/split.h).
  bool split = false;
  SplitSpec split_spec;
};

/// Runs the viewer until the window closes (or for `frames` frames). Returns the process exit code.
/// With options.split, the right session is created before the window opens; if it cannot be (a GPU
/// strategy without a GPU, a film that does not fit) that is a start-up failure: "megaview: --split: <error>".
/// Errors while running are shown in the error panel and the viewer goes on. Returns 1 after printing
/// one line to stderr when it cannot start: options the Session rejects ("megaview: <error>"), or no
/// window ("megaview: cannot open a window (no display?): <GLFW error>; use `megaview render` for
/// headless rendering"); also when the smoke test's window shot cannot be written.
int run_gui(const GuiOptions& options);

}  // namespace mv
