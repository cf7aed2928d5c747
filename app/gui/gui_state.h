// What the viewer's panels and its frame loop share: UI settings, queued Session changes, live numbers.
//
// Panels only read the Session; every change they make is queued as a SessionCommand and applied by the
// frame loop between frames (Viewer::apply_commands), which is also the one place that catches the
// exceptions of those calls and shows them in the error window.
#pragma once

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/session/lattice_run.h"
#include "app/session/megakernel_report.h"
#include "app/session/session.h"
#include "app/session/strand_view_params.h"
#include "app/gui/mse_tracker.h"
#include "sched/strand_stats.h"
#include "sched/strand_strategy.h"

namespace mv::gui {

/// Which Session(s) a queued change applies to. Without the split view only the left (primary) one
/// exists and Right commands are dropped. In split view the two sides differ only in strategy and
/// priority (app/session/split.h): every other setting, the scheduling ones included, goes to both.
enum class Target {
  Both,   ///< scene, resolution, camera, seed, reset, target spp, paths per pixel/frame, frame budget;
          ///< the Scheduling panel's wave size, block size and strategy knobs
  Left,   ///< the Scheduling panel's strategy and priority
  Right,  ///< the Split view section: the right session's strategy and priority
};

/// A change to the Session requested by a panel.
struct SessionCommand {
  std::string action;                 ///< what the user did, for the error window ("Apply resolution")
  std::function<void(Session&)> run;  ///< the Session call(s)
  /// Optional validation without side effects, run first; its failure leaves the Session untouched.
  std::function<void()> check;
  bool resets_film = false;           ///< the call clears the film (scene, resolution, camera, seed, reset)
  /// The call replaces the film (scene, resolution); on failure the Session restores the previous scene
  /// on a new, empty film, which the viewer then treats as a reset.
  bool rebuilds_film = false;
  Target target = Target::Both;
};

/// Exponential moving average; the first sample is taken as is.
class Ema {
 public:
  explicit Ema(double alpha = 0.1) : alpha_(alpha) {}
  void add(double x) {
    value_ = valid_ ? value_ + alpha_ * (x - value_) : x;
    valid_ = true;
  }
  void clear() {
    value_ = 0.0;
    valid_ = false;
  }
  double value() const { return value_; }
  bool valid() const { return valid_; }

 private:
  double alpha_;
  double value_ = 0.0;
  bool valid_ = false;
};

/// Average samples per pixel of the film: paths traced since the last reset / pixels.
double mean_spp(const Session& session);

/// Share of a frame the CPU renderer aims at, and the largest rendering budget it takes for it (so that
/// the panels still answer within about this much).
inline constexpr double kCpuRenderShare = 0.7, kMaxCpuRenderBudgetMs = 60.0;

/// The rendering budget of a CPU frame whose other work (display, panels, swap) takes `overhead_ms`:
/// enough for rendering to be kCpuRenderShare of the frame, i.e. overhead · share / (1 − share), never
/// below the user's `budget_ms` and never above max(budget_ms, kMaxCpuRenderBudgetMs).
inline double adapted_frame_budget_ms(double budget_ms, double overhead_ms) {
  const double want = overhead_ms > 0.0 ? overhead_ms * kCpuRenderShare / (1.0 - kCpuRenderShare) : 0.0;
  return std::max(budget_ms, std::min(want, kMaxCpuRenderBudgetMs));
}

/// The split view's UI state (app/session/split.h). The right Session itself is the Viewer's.
struct SplitState {
  bool on = false;                 ///< a right session exists (kept by the frame loop)
  /// Turn split view on / off at the next frame (the frame loop creates or drops the right session).
  enum class Request { None, On, Off } request = Request::None;
  std::string strategy;            ///< what the next "on" creates on the right
  PriorityFunction priority = PriorityFunction::Variance;
  float divider = 0.5f;            ///< fraction of the film's width left of the divider, [0, 1]
  bool dragging = false;           ///< the divider is being dragged in the image
  MseTracker mse;                  ///< the right session's whole-film MSE (the left's is GuiState::mse)
  Ema paths_per_second{0.2};       ///< the right session's
  /// The right session's megakernel rates, fed after each of its megakernel steps (the left's is
  /// GuiState::megakernel_rates); the Megakernel panel's right column.
  MegakernelRateTracker megakernel_rates;
  /// MSE of the columns each side shows (Session::mse(PixelRegion)), sampled with the whole-film MSE.
  double left_shown_mse = 0.0, right_shown_mse = 0.0;
  bool shown_mse_valid = false;
};

/// The control window's workload picker entry that means "no strand workload": the progressive path tracer
/// (distinct from the strand workload `path-tracer`, its patch tasks run once by a strand strategy).
inline constexpr const char* kPathTracerMode = "path tracer (progressive)";
/// The `--smoke-at FRAME:workload=V` value that picks kPathTracerMode (any other V names a strand workload).
inline constexpr const char* kProgressiveModeValue = "progressive";

/// One finished strand run as the Strands section lists it.
struct StrandRunRow {
  uint64_t id = 0;                  ///< StrandRequest::id
  std::string strategy, grid;       ///< grid: what the strategy ran with ("-" on the CPU)
  uint32_t width = 0, height = 0;
  double ms = 0.0;                  ///< StrandTimings::ms
  bool cuda_events = false;         ///< ms by CUDA events (else wall clock)
  uint32_t launches = 0;
  StepStatistics steps;
  std::vector<float> active_curve;  ///< active_strands_curve of the run (strands active after each super-step)
  std::string error;                ///< the run failed: why (then the numbers are 0)
};

/// The strand mode's UI state. The panel edits the settings and raises `run_requested`
/// (or `mode_request`); the frame loop validates them, hands the run to its StrandRunner, and fills in
/// the rows when runs finish. The runner and the shown image are the Viewer's.
struct StrandState {
  std::string workload;             ///< the active strand workload; empty: path tracer mode
  std::optional<std::string> mode_request;  ///< switch to this workload (or kPathTracerMode) next frame
  std::string strategy;             ///< strand strategy (the workload's registry name)
  bool grid_auto = true;            ///< GridConfig auto; else grid_n, grid_b (validated by make_grid)
  uint32_t grid_n = 1024, grid_b = 64;
  /// The strategies' knobs (strand_params(), sched/strand_strategy.h: work unit c, permute seed, prefetch,
  /// task quantum and priority, …), edited by the generated widgets; the grid's n and b above replace
  /// knobs.grid at the run.
  StrandRunSettings knobs;
  /// The workload's own knobs by name (StrandWorkloadEntry::knobs: the ray casters' volume, smooth, kernel,
  /// step), its defaults when it is chosen, then the command line's and the panel's values.
  ParamValues workload_knobs;
  int width = 0, height = 0;        ///< strands across and down (the workload's default when it is chosen)
  /// Set width × height next frame, after any workload switch of that frame (the smoke test's strand-size).
  std::optional<std::pair<int, int>> size_request;
  bool auto_run = true;             ///< every change of strategy or settings restarts the run
  bool run_requested = false;       ///< start a run with the current settings next frame
  bool heat_map = false;            ///< show steps per strand instead of the image
  float fill_in_seconds = 2.f;      ///< replay of each finished run's finish order, [0, 60]; 0: at once
  StrandViewParams view;            ///< the mouse's orbit / pan / zoom (validated when the run starts)
  bool view_dragging = false;       ///< a drag that started on the image is in progress (runs when it ends)
  bool gpu = false;                 ///< GPU strategies can run here
  std::string no_gpu_reason;        ///< why not (tooltip of the greyed-out strategies)

  std::optional<StrandRunRow> last, previous;  ///< the latest finished run and the one before it
  std::vector<StrandRunRow> per_strategy;      ///< the latest run of each strategy on this workload
  std::string running;              ///< "strategy grid WxH" of the run in flight; empty: none
  double running_since_s = 0.0;     ///< ImGui::GetTime() when it started
  bool active() const { return !workload.empty(); }
};

/// A change to the lattice run requested by the Lattice section: applied by the frame loop between frames,
/// which shows its exception in the error window (the run stays as it was).
struct LatticeCommand {
  std::string action;                    ///< what the user did ("Set block-width")
  std::function<void(LatticeRun&)> run;  ///< the LatticeRun call(s)
};

/// The change "knob `name` = `text`" of a lattice run, as the Lattice section's widgets and the smoke script
/// make it: the value is checked and set; a model parameter (LatticeRun::restarts) restarts the run, a
/// grid configuration keeps its state.
inline std::function<void(LatticeRun&)> lattice_knob_change(std::string name, std::string text) {
  return [name = std::move(name), text = std::move(text)](LatticeRun& r) {
    r.params().apply({{name, text}});
    if (r.restarts(name)) r.restart();
  };
}

/// The lattice mode's UI state (app/session/lattice_run.h). The run itself is the Viewer's: the frame loop
/// sets `run` each frame (null outside lattice mode); the panels only read it (its const members and
/// params().get/text/specs) and queue their changes in `commands`.
struct LatticeState {
  std::string workload;                 ///< the active lattice workload; empty: not in lattice mode
  LatticeRun* run = nullptr;            ///< the run on screen, for reading only
  std::vector<LatticeCommand> commands;
  size_t view = 0;                      ///< index into run->views()
  bool paused = false;                  ///< stop advancing (the image stays)
  /// Device time per frame given to advance(), [1, 100] ms. 8 ms leaves the rest of a 30 fps frame to the
  /// view's download and upload (16 MB at 2048², measured on an H100: docs/perf.md).
  float budget_ms = 8.f;
  uint64_t last_steps = 0;              ///< super-steps the last frame ran
  Ema steps_per_second{0.2};            ///< super-steps per second of wall clock, over frames that advanced
  nlohmann::json report;                ///< the run's report(), refreshed a few times a second
  bool active() const { return !workload.empty(); }
  /// Queues `change` under the name `action` for the frame loop.
  void queue(std::string action, std::function<void(LatticeRun&)> change) {
    commands.push_back({std::move(action), std::move(change)});
  }
};

struct GuiState {
  explicit GuiState(const Session& session);

  ToneMapSettings tonemap;       ///< target_spp follows the session each frame
  bool paused = false;
  bool force_host_copy = false;  ///< display through the host even where interop works
  Camera file_camera;            ///< the scene file's camera, for "Reset camera"
  int edit_width = 0, edit_height = 0;  ///< the resolution fields, applied by "Apply"
  std::vector<SessionCommand> commands;

  MseTracker mse;
  Ema paths_per_second{0.2};
  Ema frame_ms{0.1};             ///< wall clock of a loop iteration
  /// The rest of a frame that renders: its wall clock less the rendering (display, panels, swap).
  Ema frame_overhead_ms{0.2};
  /// The rendering budget of the last frame (ms): the frame budget setting, or more on the CPU when the rest
  /// of the frame is slow (adapted_frame_budget_ms).
  double render_budget_ms = 0.0;
  MegakernelRateTracker megakernel_rates;  ///< the left (or only) session's, fed after each of its megakernel steps
  SplitState split;
  StrandState strands;
  LatticeState lattice;
  /// The progressive path tracer's film is on screen (not a strand or lattice workload).
  bool film_mode() const { return !strands.active() && !lattice.active(); }

  std::string error;             ///< shown in the Error window until dismissed; empty: none
  int error_count = 0;           ///< errors since the window was last dismissed
  bool error_raise = false;      ///< bring the Error window to the front on its next draw
  bool capture_requested = false;
  std::string capture_message;   ///< path written, or why the capture failed
  bool capture_failed = false;

  /// Frames per second from the smoothed frame time.
  double fps() const { return frame_ms.value() > 0.0 ? 1000.0 / frame_ms.value() : 0.0; }
  /// Queues a Session change (applied after the panels are drawn) to both sides of the split view.
  void queue(std::string action, std::function<void(Session&)> run, bool resets_film = false);
  /// Queues a change for `target` that keeps the film (a side's strategy or priority: Target::Left or
  /// Target::Right; the shared scheduling settings: Target::Both).
  void queue_on(Target target, std::string action, std::function<void(Session&)> run);
  /// Queues a change that rebuilds the film (scene, resolution), with an optional side-effect-free check.
  void queue_rebuild(std::string action, std::function<void()> check, std::function<void(Session&)> run);
  /// Shows `e` in the error window as "<action>: <message>" and logs it.
  void report(const std::string& action, const std::exception& e);
  /// Re-reads what follows the session after its film was reset: edit fields, MSE history, smoothing
  /// (the split view's right side's too).
  void on_film_reset(const Session& session);
};

}  // namespace mv::gui
