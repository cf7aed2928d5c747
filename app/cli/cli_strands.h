// `megaview strands`: a headless look at any strand workload of the registry (app/session/strand_workloads.h):
// runs every strand to completion on the CPU under Lehmann 2023's `cpu-parallel` (sched/cpu/strand_cpu.h; the
// same per-strand results as run_item, the reference every strand strategy must agree with), writes the
// image as a PNG (never over an existing file) and prints the step statistics of Lehmann 2023 Fig 3.2
// (count, μ, σ, CV = σ/μ, min, max), beside the paper's where it has the program.
#pragma once

#include <string>

#include "app/session/strand_view_params.h"
#include "base/params.h"

namespace mv {

struct StrandsCommand {
  std::string workload = "vr-lite-cam";  ///< a name of strand_workloads()
  std::string size;                      ///< "WxH"; empty: the workload's (Fig 3.2's strand count)
  /// The view (orbit for the ray casters, plane for the mandelbrot); StrandViewParams' defaults.
  StrandViewParams view;
  /// The workload's own knobs by name (StrandWorkloadEntry::knobs: the ray casters' volume, smooth, kernel,
  /// step); a knob the workload does not have is refused, naming the workloads that have it.
  ParamValues knobs;
  std::string out;  ///< F.png (required)
};

/// Throws InputError for a bad size, workload, knob, view, an output path that cannot be written or already
/// exists (checked before any work), or strands that would not fit in host memory. Progress on stderr
/// (app/cli/progress.h) while the strands run.
void run_strands(const StrandsCommand& c);

}  // namespace mv
