// What the viewer's strand mode needs besides GL: one strand run on a worker thread,
// its image and step-count heat map as RGBA8, the run's report as JSON, and captures of what is shown.
// Kept out of app/gui so the tests can run it headless, through exactly the viewer's code path.
#pragma once

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/session/strand_workloads.h"
#include "sched/strand_stats.h"

namespace mv {

/// One run the viewer asks for: `strategy` of workload `workload` on width × height strands, seen through
/// `view` (the mouse's orbit / pan / zoom; the default is the workload's fixed view).
struct StrandRequest {
  std::string workload, strategy;
  uint32_t width = 0, height = 0;
  StrandRunSettings settings;
  StrandViewParams view;
  ParamValues knobs;  ///< the workload's own knobs by name (StrandWorkloadEntry::run)
  uint64_t id = 0;  ///< set by StrandRunner::request: 1, 2, … in request order
};

/// A finished run: its result (with the image) and step statistics, or the exception it threw.
struct StrandOutcome {
  StrandRequest request;
  StrandResult result;         ///< empty when `error` is set
  StepStatistics stats;        ///< of result.steps
  double wall_ms = 0.0;        ///< wall clock of the whole run() call (workload set-up and image included)
  std::exception_ptr error;    ///< InputError, CudaError, std::bad_alloc, … thrown by the run
};

/// Runs strand programs one at a time on its own thread, so the GUI stays responsive while a run takes
/// seconds. A strand run cannot be interrupted (StrandStrategy::run is one call), so a new request does
/// not stop the run in flight: it replaces any request still waiting, and starts when that run ends. The
/// frame loop collects finished runs with take(). Not copyable; the destructor waits for the run in flight.
class StrandRunner {
 public:
  /// `on_finished` (optional) is called on the worker thread after each run, e.g. to wake the GUI's event
  /// wait (glfwPostEmptyEvent); it must be thread-safe.
  explicit StrandRunner(std::function<void()> on_finished = {});
  ~StrandRunner();
  StrandRunner(const StrandRunner&) = delete;
  StrandRunner& operator=(const StrandRunner&) = delete;

  /// Queues `r` (replacing a queued, not yet started request). Returns its id.
  uint64_t request(StrandRequest r);
  /// The oldest finished run not yet taken, if any (runs finish in request order).
  std::optional<StrandOutcome> take();
  /// A run is queued, in flight, or finished and not yet taken.
  bool busy() const;
  /// The request in flight, if any (for the panel's "running …" line).
  std::optional<StrandRequest> running() const;

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<StrandRequest> queued_, running_;
  std::vector<StrandOutcome> finished_;
  std::function<void()> on_finished_;
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;  // last: started after the members it uses
};

/// The viewer's fill-in replay of a finished run (the image fills in as strands finish, and
/// the strategies look different while running). A GPU run of millions of strands lasts milliseconds, far
/// below a frame, so the viewer records the run's finish order (StrandRunSettings::record_finish_order)
/// and replays it over a few seconds: at fraction f of the replay the first round(f·N) strands to finish
/// are shown over the background, the rest (and strands that never finished) at the end. Sequential
/// fills rows in order, BSP strategies fill by step count (cheap strands first, everywhere at once),
/// batch and the global queue sweep the index space thread wave by wave, permutations speckle, and the
/// task strategies fill groups of 32 in their priority order.
class StrandReplay {
 public:
  /// `final_rgba8`: the image to reveal, one pixel per strand; `finish_order`: per strand its place
  /// (StrandRun::finish_order; kStrandNotFinished last); `pixel`: per strand the pixel it writes
  /// (StrandResult::pixel), empty for strand i at pixel i. Throws std::invalid_argument if the sizes differ
  /// or a pixel is outside the image.
  StrandReplay(std::vector<uint32_t> final_rgba8, const std::vector<uint32_t>& finish_order,
               const std::vector<uint32_t>& pixel = {}, uint32_t background = 0xff000000u);
  /// Reveals the strands whose place is below round(f·N), f clamped to [0, 1]. Returns whether pixels changed.
  bool advance(double f);
  const std::vector<uint32_t>& image() const { return shown_image_; }
  size_t shown() const { return shown_; }
  bool done() const { return shown_ == order_.size(); }

 private:
  std::vector<uint32_t> final_, shown_image_;
  std::vector<uint32_t> order_;  ///< the strands' pixels in finishing order, unfinished ones last
  size_t shown_ = 0;
};

/// Active strands over time in the program's own clock: entry k of the result is the
/// number of strands still active after super-step k·stride (those with more than k·stride updates),
/// k = 0 … ceil(max / stride), where stride = max(1, ceil(max / max_points)) and max the largest step
/// count — at most max_points + 1 entries; entry 0 is the number of strands (every strand starts active).
/// The same for every strategy (it is the BSP view of the strand program); the strategies differ in how
/// they pack these strands onto threads. Empty for no strands. max_points ≥ 1.
std::vector<float> active_strands_curve(const std::vector<uint32_t>& steps, size_t max_points = 256);

/// Estimated bytes one strand of a viewer run occupies: the result (float RGBA, status, steps, finish
/// order, pixel), the strategy's per-strand state (taken as 64 bytes, more than any workload's), and the
/// viewer's RGBA8 copies (image, heat map, fill-in replay). A GPU run holds about the same on the device.
inline constexpr double kStrandRunBytesPerStrand = 128.0;

/// Refuses a run of r.width × r.height strands whose memory (kStrandRunBytesPerStrand each) would not fit,
/// before anything is allocated: InputError("", "size", "WxH strands need N MiB, more than half of the
/// M MiB of free host memory") and, for a GPU strategy (`on_gpu`) with a GPU in use, the same against
/// cudaMemGetInfo's free device memory less a margin of max(256 MiB, 5 % of the device).
void check_strand_run_fits(const StrandRequest& r, bool on_gpu);

/// Runs `r` synchronously (what the worker thread calls): find_strand_workload(r.workload).run(…, image =
/// true), with the step statistics and the wall clock; exceptions land in StrandOutcome::error.
StrandOutcome run_strand_request(const StrandRequest& r);

/// Width and height of what the viewer shows of `r`: the workload's own picture (StrandResult::view_rgba,
/// ridge3d's splats) when it has one and the heat map is off, else one pixel per strand.
std::pair<uint32_t, uint32_t> strand_shown_size(const StrandResult& r, bool heat_map);

/// The run's image as RGBA8 (R in the low byte, row 0 at the top), the workload's own picture where it has
/// one (StrandResult::view_rgba), else one pixel per strand: each float channel clamped to [0, 1],
/// colour multiplied by alpha over a black background (kStrandBackground), then encoded with 1/gamma
/// (gamma 1: the workloads' colours are display values, as `megaview strands` writes them).
std::vector<uint32_t> strand_image_rgba8(const StrandResult& r, float gamma = 1.f);
/// Steps per strand, each at its pixel (StrandResult::pixel, or strand i at pixel i, row-major), through
/// render/tonemap.h's heat ramp, t = steps / the run's largest step count (all strands the bottom colour when
/// every count is 0).
std::vector<uint32_t> strand_heat_rgba8(const StrandResult& r);

/// What a run was configured with, for tables, panels and sidecars: "auto" or the grid a GPU strategy used,
/// "n,b" (or "n,b,c" for the global queues); a task strategy's quantum and group priority
/// (strand_task_text, e.g. "q16,most-remaining"); "-" for the CPU strategies.
std::string strand_grid_text(const StrategyInfo& info, const GridConfig& g, const StrandRunSettings& s);

/// The run as JSON (the capture sidecar's body): workload, strategy (with its paper section), size, the
/// requested settings and the grid it ran with, timing (ms, clock, launches, super-steps, notes), step
/// statistics (Lehmann 2023 Fig 3.2), the image checksum, the GPU's name and the view: {"kind": "orbit",
/// "azimuth_deg", "elevation_deg", "distance", "fov_deg"} for the volumes, {"kind": "plane", "center_x",
/// "center_y", "half_height"} for the mandelbrot, {"kind": "fixed"} for path-tracer (the scene's camera).
nlohmann::json strand_report(const StrandOutcome& o);

/// Writes "<workload>-<strategy>-NNNN.png" (`shown`, RGBA8 as on screen: the image, or with `heat_map` the
/// steps heat map, at strand_shown_size(o.result, heat_map)) and its ".json" sidecar (strand_report plus
/// `extra` and {"capture": {"png", "shown": "image" | "steps heat map"}}) into `dir`, claiming the number as
/// capture() does (app/session/capture.h): nothing is ever overwritten. Returns {png, json}.
/// Throws InputError if `shown` is not of that size, or the directory or a file cannot be written.
std::pair<std::string, std::string> capture_strands(const StrandOutcome& o, const std::vector<uint32_t>& shown,
                                                    bool heat_map, const std::string& dir,
                                                    const nlohmann::json& extra = nlohmann::json::object());

}  // namespace mv
