// The strand workloads the bench and the tests can run by name, each with Lehmann 2023's strategies
// (sched/strand_registry.cuh). One entry per workload; the volume ray casters (vr-lite-cam, illust-vr)
// join with one registration line each in app/core/strand_workloads.cu.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "render/strands/mandelbrot.h"
#include "sched/strand_image.h"
#include "sched/strand_strategy.h"

namespace mv {

struct StrandWorkloadEntry {
  std::string name;         ///< --workload value (Lehmann's benchmark name)
  std::string description;  ///< one line
  uint32_t default_width = 0, default_height = 0;  ///< the paper's strand count (Fig 3.2)
  uint32_t max_side = 0;                          ///< largest width or height --size accepts
  std::vector<StrandStrategyInfo> strategies;     ///< registry order
  /// How strategies' results must agree: exact for mandelbrot, a tolerance for the volume workloads.
  StrandTolerance tolerance;
  /// Runs `strategy` on a width × height instance. With `image` false the result's rgba stays empty
  /// (the sweep compares step counts and statuses and makes one image per strategy). Throws InputError
  /// for an unknown strategy or bad settings, CudaError for a failed CUDA call.
  std::function<StrandResult(std::string_view strategy, uint32_t width, uint32_t height, const StrandRunSettings&,
                             bool image)>
      run;

  /// Throws InputError("", "--strategy", …) listing the names if `name` is not registered.
  const StrandStrategyInfo& strategy(std::string_view name) const;
};

/// Every workload, in registration order.
const std::vector<StrandWorkloadEntry>& strand_workloads();
/// Throws InputError("", "--workload", …) listing the names if `name` is unknown.
const StrandWorkloadEntry& find_strand_workload(std::string_view name);

/// Mandelbrot at width × height over the default view and cap (tests use it for other regions).
MandelbrotStrands mandelbrot_workload(uint32_t width, uint32_t height, Side side = Side::Host);
/// The strategies instantiated for the mandelbrot workload.
const StrandStrategyRegistry<MandelbrotStrands>& mandelbrot_strand_strategies();

}  // namespace mv
