// The strand workloads the bench and the tests can run by name, each with Lehmann 2023's strategies
// (sched/strand_registry.cuh). One entry per workload; the volume ray casters (vr-lite-cam, illust-vr) and
// the path tracer's patch tasks (path-tracer) join with one registration line each in
// app/session/strand_workloads.cu.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "app/session/strand_view_params.h"
#include "base/params.h"
#include "render/strands/mandelbrot.h"
#include "render/strands/path_tracer_strands.h"
#include "sched/strand_image.h"
#include "sched/strand_strategy.h"

namespace mv {

struct StrandWorkloadEntry {
  std::string name;         ///< --workload value (Lehmann's benchmark name)
  std::string description;  ///< one line
  uint32_t default_width = 0, default_height = 0;  ///< the paper's strand count (Fig 3.2)
  uint32_t max_side = 0;                          ///< largest width or height --size accepts
  /// Width and height must be multiples of this (path-tracer: 4, whole 4×4 patch tasks); 1 for the others.
  uint32_t size_multiple = 1;
  std::string size_multiple_why;                  ///< why, for the message: "one strand per pixel of …"
  std::vector<StrategyInfo> strategies;     ///< registry order
  /// How strategies' results must agree: exact for mandelbrot, a tolerance for the volume workloads.
  StrandTolerance tolerance;
  StrandViewKind view_kind = StrandViewKind::Plane;  ///< which StrandViewParams fields run() reads
  /// The workload's own knobs beyond its size and view (base/params.h), e.g. the ray casters' volume,
  /// smooth, kernel and step (app/session/volume_strand_workloads.h); empty for a workload without any.
  /// The CLI generates its options from them; run() takes their values by name.
  std::vector<ParamSpec> knobs;
  ParamValues knob_defaults;  ///< each knob's default, as text
  /// Lehmann 2023 Fig 3.2's step statistics of the paper's own run of this program (its own data and view,
  /// so for orientation only); all 0 for a workload the paper does not have.
  struct PaperSteps {
    double mean = 0, sigma = 0, cv = 0;
  } paper_steps;
  /// Runs `strategy` on a width × height instance seen through `view` (the workload reads its own fields;
  /// the default is the fixed view every run had before, bit for bit). With `image` false the result's rgba
  /// stays empty (the sweep compares step counts and statuses and makes one image per strategy). Throws
  /// InputError for an unknown strategy, bad settings or a bad view ("view", field), CudaError for a failed
  /// CUDA call.
  ///
  /// The view is a parameter of its own rather than a StrandRunSettings field: the settings (sched/) say how
  /// the strands are scheduled and are the same for every workload, while the view says which strands there
  /// are (the workload's instance, like width × height), so it sits beside the size and sched/ stays free of
  /// workload parameters. The bench keeps the default; the viewer and `megaview strands` pass their own.
  /// `knobs` are values of the workload's own knobs by name (check_knobs; the others keep knob_defaults).
  StrandResult run(std::string_view strategy, uint32_t width, uint32_t height, const StrandRunSettings& settings,
                   bool image, const StrandViewParams& view = {}, const ParamValues& knobs = {}) const {
    check_knobs(knobs);
    return run_fn(strategy, width, height, settings, image, view, knobs);
  }
  std::function<StrandResult(std::string_view strategy, uint32_t width, uint32_t height, const StrandRunSettings&,
                             bool image, const StrandViewParams& view, const ParamValues& knobs)>
      run_fn;  ///< what run() calls (set by the registry)

  /// Throws InputError("", "--name", "applies to <the workloads that have it>, not to <this one>") for the
  /// first name in `knobs` that is not one of this workload's knobs, and parse_param's refusal for a value
  /// out of range.
  void check_knobs(const ParamValues& knobs) const;
  /// Every knob's value for a run given `given`: knob_defaults, overridden by the entries of `given` that
  /// are knobs of this workload (other names are ignored).
  ParamValues knob_values(const ParamValues& given) const;

  /// Throws InputError("", "--strategy", …) listing the names if `name` is not registered.
  const StrategyInfo& strategy(std::string_view name) const;
  /// Throws InputError("", option, "WxH: width and height must be multiples of M for NAME (why)") unless width
  /// and height are multiples of size_multiple (run() checks it too; callers check early for a one-line error).
  void check_size_multiple(uint32_t width, uint32_t height, const std::string& option) const;
};

/// Every workload, in registration order.
const std::vector<StrandWorkloadEntry>& strand_workloads();
/// "mandelbrot, vr-lite-cam, …": every workload's name, in registration order (help texts).
std::string strand_workload_names();
/// Every workload's knobs, each name once, in registration order (the CLI makes one option of each).
std::vector<ParamSpec> strand_workload_knobs();
/// Throws InputError("", "--workload", …) listing the names if `name` is unknown.
const StrandWorkloadEntry& find_strand_workload(std::string_view name);

/// Mandelbrot at width × height over mandelbrot_region(view, width, height) with the default cap (tests use
/// it for other regions). The default view at a square size is today's [−2.1, 1.1] × [−1.6, 1.6] exactly.
/// Throws InputError("view", field, …) for a bad view.
MandelbrotStrands mandelbrot_workload(uint32_t width, uint32_t height, Side side = Side::Host,
                                      const StrandViewParams& view = {});
/// The strategies instantiated for the mandelbrot workload.
const StrandStrategyRegistry<MandelbrotStrands>& mandelbrot_strand_strategies();
/// The strategies instantiated for the path-tracer workload (app/session/path_tracer_strand_workload.h builds it).
const StrandStrategyRegistry<PathTracerStrands>& path_tracer_strand_strategies();

}  // namespace mv
