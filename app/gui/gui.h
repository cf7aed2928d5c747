// The interactive viewer: a GLFW window with Dear ImGui panels showing a Session's film.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/session/session.h"
#include "app/session/split.h"
#include "app/gui/smoke_script.h"
#include "sched/strand_grid.h"

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
  /// Scripted steps for smoke tests (in any order; several may share a frame).
  std::vector<SmokeAction> smoke_actions;
  /// `--split STRATEGY[:PRIORITY]`: start in split view with this right side (app/session/split.h).
  bool split = false;
  SplitSpec split_spec;
  /// `--workload W`: start in strand mode on this strand workload; empty: the path tracer.
  std::string strand_workload;
  std::string strand_strategy;  ///< `--strand-strategy S`; empty: cuda with a GPU, else cpu-parallel
  GridConfig strand_grid;       ///< `--grid n,b[,c]` or auto
  ParamValues strand_knobs;     ///< the strand strategies' knobs given on the command line (strand_params())
  uint32_t strand_width = 0, strand_height = 0;  ///< `--strand-size WxH`; 0: the workload's default
  /// `--fill-in S`: seconds of the fill-in replay of each finished strand run (StrandReplay), [0, 60];
  /// negative: the default, 2 s interactively and 0 (the finished image at once) in a scripted run (--frames).
  float fill_in_seconds = -1.f;
};

/// Parses "WxH" (decimal, ≥ 1) for `option`; throws InputError("", option, …) naming the expected form.
std::pair<uint32_t, uint32_t> parse_strand_size(const std::string& text, const std::string& option);

/// Checks the strand-mode options in `o` against the registry (a known --workload; a --strand-strategy
/// of that workload that can run here; --strand-size within the workload's limit and a multiple of its
/// size_multiple; no strand option without --workload). Throws InputError naming the option, for a one-line
/// start-up error.
void check_strand_options(const GuiOptions& o);

/// Runs the viewer until the window closes (or for `frames` frames). Returns the process exit code.
/// With options.split, the right session is created before the window opens; if it cannot be (a GPU
/// strategy without a GPU, a film that does not fit) that is a start-up failure: "megaview: --split: <error>".
/// A scene or reference that cannot be used at start-up (InputError) does not stop it: the viewer opens the
/// scene without the reference, or else the default scene, with the error in the error panel.
/// Errors while running are shown in the error panel and the viewer goes on. Returns 1 after printing
/// one line to stderr when it cannot start: options the Session rejects ("megaview: <error>"), or no
/// window ("megaview: cannot open a window (no display?): <GLFW error>; use `megaview render` for
/// headless rendering"); also when the smoke test's window shot cannot be written.
int run_gui(const GuiOptions& options);

}  // namespace mv
