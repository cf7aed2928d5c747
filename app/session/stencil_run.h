// The deep-halo stencil (Valen 2023) as a live lattice run: the Jacobi/Laplace iteration of
// render/lattice/jacobi.h on a periodic n × n float32 grid split into P partitions on G GPUs (or on the
// CPU), with deep halos, synchronous/asynchronous exchange and overlap (sched/lattice/halo_plan.h,
// sched/lattice/halo_gpu.cuh, sched/lattice/halo_cpu.h).
//
// Knobs (stencil_params()): size (restarts the run), partitions, gpus, depth, exchange, overlap, kernel
// (change the decomposition or the GPU kernel and keep the field), iterations-per-frame. A combination the plan refuses (a depth
// larger than a partition, more GPUs than present…) is refused at the next advance() with InputError
// naming the option, and the knobs go back to the running ones.
//
// View "field": the field as a heat colour map (scaled to the shown minimum … maximum), at most 1024 ×
// 1024 pixels (sampled), with the partition borders drawn in white.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/session/lattice_run.h"
#include "sched/lattice/halo_plan.h"
#include "sched/strategy_info.h"

namespace mv {

/// The stencil's knobs.
struct StencilSettings {
  int size = 2048;                      ///< grid side n (sites)
  int partitions = 4;                   ///< P
  int gpus = 1;                         ///< G
  int depth = 1;                        ///< halo depth d
  HaloExchange exchange = HaloExchange::Sync;
  bool overlap = false;
  int iterations_per_frame = 0;         ///< at most this many per frame, within its time budget; 0: as many as it allows
  int kernel = 4;                       ///< the GPU compute kernel's block shape (kHaloKernelShapes; 512x1x16)
};

/// The knob table (base/params.h) of StencilSettings.
const ParamTable<StencilSettings>& stencil_params();
/// The stencil workload's kernels as strategies (sched/strategy_info.h): deep-halo only.
const std::vector<StrategyInfo>& stencil_strategies();

/// CUDA devices present (0 without a usable driver).
int stencil_gpu_count();

/// Throws InputError naming `option` (e.g. "--size") when the CPU reference's n × n grid (two copies of the
/// field, halos aside) needs more than half the available host memory (app/cli/cli_validate.h
/// check_host_memory: $MEGAVIEW_HOST_MEMORY caps it).
void check_stencil_host_memory(int n, const std::string& option);

/// The GPU's peak DRAM bandwidth in GB/s from cudaDeviceProp (memory clock × bus width × 2), 0 without one.
double stencil_dram_peak_gbps(int device = 0);

class StencilRun : public LatticeRun {
 public:
  /// Starts on the GPU (`gpu`) or the CPU reference. Throws InputError for a bad knob or combination.
  StencilRun(const ParamValues& knobs, bool gpu);
  ~StencilRun() override;

  std::string workload() const override { return "stencil"; }
  std::string strategy() const override { return "deep-halo"; }
  std::vector<std::string> strategies() const override { return {stencil_strategies().front().name}; }
  void set_strategy(const std::string& name) override;
  Params& params() override { return params_; }
  bool restarts(const std::string& name) const override { return name == "size"; }
  void restart() override;
  uint64_t advance(double budget_ms) override;
  uint64_t steps() const override { return steps_; }
  std::vector<std::string> views() const override { return {"field"}; }
  void image(size_t view, std::vector<uint32_t>& rgba, uint32_t& width, uint32_t& height) override;
  nlohmann::json report() const override;

  /// Applies changed knobs (as advance() does), runs exactly `iterations` iterations and returns the
  /// phase times of just those (waiting for them).
  HaloPhaseTimes run_timed(uint64_t iterations);
  /// The plan now running.
  const HaloPlan& plan() const;
  bool on_gpu() const { return gpu_; }
  /// The field as a global n × n row-major array (for tests; copies the whole grid).
  std::vector<float> field();

 private:
  struct Engine;
  void rebuild(bool keep_field);
  void apply_pending();

  bool gpu_;
  StencilSettings settings_, running_;
  BoundParams<StencilSettings> params_;
  std::unique_ptr<Engine> engine_;
  uint64_t steps_ = 0;
  double ms_per_iteration_ = 0.0;
  HaloPhaseTimes since_;  // since the last restart or change of decomposition
};

}  // namespace mv
