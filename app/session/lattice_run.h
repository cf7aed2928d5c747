// Lattice workloads run live: a chain or an iteration on a 2D lattice (the Poisson-Ising Gibbs sampler,
// the deep-halo stencil) that advances progressively, one super-step at a time, under a kernel
// (its strategy) whose grid configuration — block shape, padding, halo depth, partitions — is a set of
// live knobs (base/params.h). The viewer's lattice mode, the capture sidecar and the tests drive every
// lattice workload through this one interface.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/params.h"
#include "sched/strategy_info.h"

namespace mv {

/// One lattice workload's live run. Not thread-safe: one thread calls it (the viewer's frame loop, or a
/// test). Errors: InputError (base/errors.h) for a refused setting, naming the knob and the allowed range,
/// with the run left as it was; CudaError for a failed CUDA call.
class LatticeRun {
 public:
  virtual ~LatticeRun() = default;

  /// The workload's registry name ("gibbs", "stencil").
  virtual std::string workload() const = 0;
  /// The strategy (kernel) now running, and every strategy this run can switch to, in registry order.
  virtual std::string strategy() const = 0;
  virtual std::vector<std::string> strategies() const = 0;
  /// Switches the kernel and keeps the lattice's state (the chain or the field goes on where it was).
  /// Throws InputError("", "--strategy", …) listing the names for an unknown one.
  virtual void set_strategy(const std::string& name) = 0;

  /// The live knobs: the model's parameters and the grid configuration. The GUI and the CLI edit them
  /// through Params (their ranges are checked there); the change takes effect at the next advance().
  virtual Params& params() = 0;
  /// Whether changing knob `name` restarts the run (a model parameter: γ, λ, grid size) rather than
  /// keeping the state (a grid configuration: block shape, padding, depth, overlap).
  virtual bool restarts(const std::string& name) const = 0;
  /// Starts again from the initial state with the current knobs.
  virtual void restart() = 0;

  /// Runs whole super-steps (one Gibbs sweep, one stencil iteration) for about `budget_ms` milliseconds of
  /// device time, at least one where one fits in the budget; a run whose super-step takes far longer may run
  /// part of one per call (a CPU Gibbs run: bands of rows of a sweep, the same chain). Returns how many whole
  /// super-steps completed.
  virtual uint64_t advance(double budget_ms) = 0;
  /// Super-steps since the last restart.
  virtual uint64_t steps() const = 0;

  /// What the run can show ("sample", "mean", "lambda"; "field"), the first being the default.
  virtual std::vector<std::string> views() const = 0;
  /// View `view` (an index into views()) as RGBA8 (0xAABBGGRR, row 0 at the top), width × height, with any
  /// overlay the view draws (partition borders). Throws std::out_of_range for a bad index.
  virtual void image(size_t view, std::vector<uint32_t>& rgba, uint32_t& width, uint32_t& height) = 0;

  /// The run's numbers for the panel and the capture sidecar: at least "workload", "strategy", "steps",
  /// "knobs" (every knob by name), and the rates the workload measures (e.g. "sweeps_per_s",
  /// "site_updates_per_ns"), each a number or a string.
  virtual nlohmann::json report() const = 0;
};

/// A lattice workload the viewer, the bench and `--workload` can start by name.
struct LatticeWorkloadEntry {
  std::string name;         ///< --workload value
  std::string description;  ///< one line, with the source document
  /// Starts a run on the GPU (`gpu` true) or the CPU reference, with the knobs in `knobs` (others at their
  /// defaults). Throws InputError for a bad knob value, CudaError for a failed CUDA call.
  std::function<std::unique_ptr<LatticeRun>(const ParamValues& knobs, bool gpu)> make;
  /// The knobs' specs, without starting a run: what `--smoke-at FRAME:NAME=VALUE` and the CLI may name.
  std::vector<ParamSpec> knobs;
  /// Its kernels as strategies, each name unique in the program (app/session/strategy_catalogue.h).
  std::vector<StrategyInfo> strategies;
};

/// Every lattice workload, in registration order (app/session/lattice_workloads.cpp).
const std::vector<LatticeWorkloadEntry>& lattice_workloads();
/// The entry called `name`, or nullptr.
const LatticeWorkloadEntry* find_lattice_workload(const std::string& name);
/// "gibbs, stencil": every lattice workload's name, in registration order (help texts).
std::string lattice_workload_names();
/// "strategy S, step N, name=value …" (every knob): the viewer's log line of a run's settings.
std::string lattice_settings_text(LatticeRun& run);
/// Whether some lattice workload has a knob called `name`.
bool lattice_knob_exists(const std::string& name);

/// A capture of what the viewer shows of `run`: `shown` (width × height RGBA8, view `view`) as
/// "<dir>/<workload>-<strategy>-<view>-NNNN.png" and its sidecar .json = run.report() with "shown" (the view's
/// name) and `extra` merged, claimed as every capture is (app/session/capture.h: nothing is overwritten).
/// Returns the PNG's and the sidecar's paths. Throws InputError (size mismatch, unwritable folder).
std::pair<std::string, std::string> capture_lattice(const LatticeRun& run, size_t view, const std::vector<uint32_t>& shown,
                                                    uint32_t width, uint32_t height, const std::string& dir,
                                                    const nlohmann::json& extra);

}  // namespace mv
