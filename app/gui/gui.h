// The interactive viewer: a GLFW window with Dear ImGui panels showing a Session's film.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/core/session.h"
#include "app/core/split.h"
#include "sched/strand_grid.h"

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
///   workload=W           the control window's workload picker: a strand workload (path-tracer is the
///                        path tracer's patch tasks as strands), or `progressive` for the path tracer mode
///   strand-strategy=S    the Strands section's strategy combo (restarts the run)
///   grid=G               the Strands section's grid: auto or n:b[:c] (':' since --smoke-at splits at
///                        commas; restarts the run)
///   strand-size=WxH      the Strands section's size fields (restarts the run); applied after a workload
///                        switch of the same frame, so `3:workload=W,3:strand-size=32x24` runs W at 32 × 24
///                        only (a switch alone starts a run at the workload's default size)
///   strand-view=image|heat  the Strands section's image / steps heat map toggle
///   strand-orbit=AZ:EL:DIST the volume view a mouse drag / wheel gives: azimuth and elevation in degrees
///                        (elevation [−89, 89]), distance in world units (> 0); restarts the run
///   strand-pan=CX:CY:HALF   the mandelbrot view a drag / wheel gives: centre and half-height (> 0) in the
///                        complex plane; restarts the run
///   strand-view-reset    the Strands section's "Reset view" (restarts the run)
/// In strand mode a smoke test's frame count stands still while a strand run is queued or in flight, so
/// the steps after one happen after that run finished and was shown; each finished run logs
/// "strands: <workload> <strategy> <grid> <ms> ms, steps mu … sigma … cv …".
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
