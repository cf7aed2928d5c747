// A rendering session: one scene, its patch workload (film + priorities), the active strategy and all
// settings. The GUI and the headless commands (render, reference, mse-curve, bench) drive the same
// Session, so what a user sees is what the command line measures.
//
// Live switching (docs/architecture.md): strategy, priority function, paths per pixel, wave size and the
// frame budget continue on the same film; scene, resolution, camera and seed reset it. When the new
// strategy runs on the other side (CPU ↔ GPU), film and priorities move with it.
#pragma once

#include <memory>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "render/gpu.h"
#include "render/metrics.h"
#include "render/pathtracer/patch_workload.h"
#include "render/tonemap.h"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/strategy.h"

namespace mv {

using PatchStrategy = Strategy<PatchWorkload>;
/// All strategies that run the path tracer's patch tasks (app/session/strategies.cu).
const StrategyRegistry<PatchWorkload>& patch_strategies();
/// The knobs of every patch strategy (base/params.h: the megakernel's, cuda-global-queue's work-unit, …), in
/// registry order, each name once: the CLI options, the GUI's knob widgets and Session::set_knob read this.
const std::vector<ParamSpec>& patch_strategy_knobs();

struct SessionOptions {
  std::string scene = "room";  ///< path or bare name of a file in scenes/
  int width = 0, height = 0;   ///< 0: the scene's resolution
  std::string strategy;        ///< empty: "megakernel" on a GPU, "cpu-waves" (priority waves on all cores) without one
  PatchTaskParams task{};      ///< target_spp 0 means: the scene's target (the default is PatchTaskParams')
  ScheduleSettings schedule{};
  /// The strategies' knobs by name (base/params.h: the megakernel's queue, segment-size, …, Kerbl 2012
  /// §3–§5; cuda-global-queue's work-unit), applied to whichever strategy has them, now or after a later
  /// set_strategy. Checked against patch_strategy_knobs() when the session starts.
  ParamValues knobs;
  /// Paths per frame (GUI) or per step (headless); 0 = auto: about `frame_budget_ms` of work.
  uint64_t paths_per_frame = 0;
  double frame_budget_ms = 12.0;
  bool force_cpu = false;      ///< never use the GPU, even if present
  /// EXR to compare against; empty: the scene's reference if it exists and has the film's size (a
  /// scene's reference that cannot be read is an InputError naming it; one of another size is skipped).
  std::string reference;
};

/// What one frame (or headless step) did, and where the session stands.
struct FrameStats {
  StepStats step;
  double frame_ms = 0.0;          ///< wall clock of the frame's rendering work
  uint64_t total_paths = 0;       ///< paths traced since the last reset
  double total_busy_ms = 0.0;     ///< busy time since the last reset
  double paths_per_second = 0.0;  ///< this frame's paths / busy time
  uint32_t finished_tasks = 0;
  uint32_t num_tasks = 0;
  bool done = false;              ///< every patch reached the target spp
};

class Session {
 public:
  /// Loads the scene and sets everything up. Throws InputError / CudaError with a one-line message.
  explicit Session(const SessionOptions& options);
  ~Session();

  // ---- things that reset the film ----
  void load_scene(const std::string& name_or_path);
  void set_resolution(int width, int height);
  void set_camera(const Camera& cam);
  void set_seed(uint32_t seed);
  /// Clears the film and restarts the schedule.
  void reset();

  // ---- live settings (keep the film) ----
  void set_strategy(const std::string& name);
  void set_priority(PriorityFunction f);
  /// Noise threshold of the priority function `adaptive`, (0, 1] (InputError otherwise; nothing changes).
  void set_noise_threshold(float t);
  void set_paths_per_pixel(uint32_t n);
  void set_target_spp(uint32_t spp);
  ScheduleSettings& schedule() { return options_.schedule; }
  void set_paths_per_frame(uint64_t paths) { options_.paths_per_frame = paths; }
  void set_frame_budget_ms(double ms) { options_.frame_budget_ms = ms; }
  /// Sets knob `name` of the strategies (options().knobs) from its text and hands it to the active strategy
  /// if it has that knob, now or after a later set_strategy. Throws InputError("", "--name", …) for an
  /// unknown knob or a value out of its range; nothing changes then. Keeps the film: a new queue design,
  /// segment size or blocks per SM rebuilds the megakernel's queue from the film at its next step.
  void set_knob(const std::string& name, const std::string& text);

  // ---- running ----
  /// Renders one frame's budget (no-op when done). Returns what happened.
  FrameStats advance();
  /// Renders about `budget_work` paths instead of the frame budget (at least one task; no-op when
  /// done): the split view's right side traces what the left side traced (app/session/split.h).
  FrameStats advance(uint64_t budget_work);
  /// Renders until every patch is finished, or `max_paths` / `max_ms` of busy time are spent (0 = no limit).
  /// `progress` (may be empty) is called after every step.
  FrameStats run(uint64_t max_paths, double max_ms, const std::function<void(const FrameStats&)>& progress = {});
  bool done() const { return finished_tasks_ >= workload_->num_tasks(); }
  const FrameStats& last() const { return last_; }

  // ---- reference and error ----
  /// Loads a reference EXR; throws InputError (file, size mismatch, a sidecar R.json beside R.exr that names
  /// another scene) and keeps the old one on failure.
  void load_reference(const std::string& path);
  bool has_reference() const { return !reference_rgb_.empty(); }
  const std::string& reference_path() const { return reference_path_; }
  /// MSE of the film against the reference (GPU when the film is on the device). Needs has_reference().
  double mse();
  /// MSE over `region` of the film only (render/metrics.h; clamped, 0 when empty): the split view's halves.
  double mse(const PixelRegion& region);

  // ---- display ----
  /// Tone-maps the film into `rgba` (host, width × height): the CPU display path and captures.
  void tonemap_to_host(const ToneMapSettings& s, std::vector<uint32_t>& rgba);
  /// Tone-maps into a device RGBA8 buffer. Throws CudaError if the film is on the host.
  void tonemap_to_device(const ToneMapSettings& s, uint32_t* d_rgba);

  // ---- introspection ----
  const SessionOptions& options() const { return options_; }
  const Scene& scene() const { return workload_->scene(); }
  PatchWorkload& workload() { return *workload_; }
  const StrategyInfo& strategy() const { return strategy_->info(); }
  /// The active strategy's knobs (base/params.h), read-only for reports; null when it has none.
  const Params* strategy_params() const { return strategy_->params(); }
  /// The active strategy's megakernel statistics (and its settings, as its knobs hold them); null when
  /// another strategy is active.
  const MegakernelControl* megakernel() const;
  Side side() const { return strategy_->info().side; }
  bool gpu_in_use() const { return use_gpu_; }
  /// Why the GPU is not in use (empty when it is).
  std::string cpu_reason() const;
  uint32_t width() const { return static_cast<uint32_t>(workload_->film().width()); }
  uint32_t height() const { return static_cast<uint32_t>(workload_->film().height()); }
  /// Per-pixel mean radiance (linear RGB, 3 floats a pixel): what captures save as EXR.
  std::vector<float> mean_image();

 private:
  Scene load_scene_file_(const std::string& name);
  /// Rebuilds with `next`; on failure restores the previous scene, film size and options and rethrows.
  void replace_workload(Scene next, const SessionOptions& next_options);
  void rebuild_workload(Scene scene);
  void count_finished();
  /// Applies new task parameters; when the finished patches may have changed (PatchWorkload::set_params),
  /// forgets the schedule and recounts them.
  void set_task_params(const PatchTaskParams& p);
  /// Forgets the schedule and the progress counters (after the film was cleared or replaced).
  void clear_progress();
  uint64_t frame_budget_paths() const;
  /// Hands options_.knobs to the held strategy's knobs (those it has).
  void apply_knobs();
  SessionOptions options_;
  bool use_gpu_ = false;
  std::unique_ptr<PatchWorkload> workload_;
  std::unique_ptr<PatchStrategy> strategy_;
  uint32_t finished_tasks_ = 0;
  uint64_t total_paths_ = 0;
  double total_busy_ms_ = 0.0;
  double paths_per_ms_estimate_ = 0.0;
  FrameStats last_;
  std::vector<float> reference_rgb_;
  std::string reference_path_;
  std::pair<int, int> reference_size_{0, 0};
  DeviceBuffer<float> d_reference_;
  DeviceBuffer<double> d_mse_scratch_;
  DeviceBuffer<float> d_tonemap_scratch_;
};

}  // namespace mv
