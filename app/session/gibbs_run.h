// The Poisson-Ising Gibbs sampler as a live lattice workload ("gibbs"): the model of
// render/lattice/poisson_ising.h, swept by the checkerboard kernels of sched/lattice/checkerboard_sweep.cuh
// or by the CPU reference of sched/lattice/checkerboard_sweep.h, after the source document
// "Poisson-Icing: Gibbs sampling with a GPU using CuPy" (../shared/papers/poisson-ising-gibbs-cupy.txt).
//
// Strategies (GPU run): "gibbs-deep" (several sweeps per launch on shared-memory tiles with deep halos),
// "gibbs-groups" (one launch per half-sweep, uint8 in place, Philox in registers), "gibbs-persistent"
// (gibbs-groups' update in one cooperative launch, a grid barrier per half-sweep), "gibbs-blog" (the
// document's method: uniforms buffer, int32 image, one thread per pixel pair, shared tile with a
// one-pixel halo, separately padded copy, weights from their definition), "gibbs-window" (gibbs-persistent
// with the window draw first: two weights decide the site unless u falls within the tails' mass of a
// boundary, render/lattice/poisson_ising.h poisson_ising_draw_window), "gibbs-strips" (gibbs-window's draw
// with a thread per strip of 4 rows, the window table in shared memory and per-site table row ids; where
// the table exceeds 48 KiB, x_max > 11, it runs gibbs-window's kernel), "gibbs-ahead" (gibbs-strips with the
// random numbers of each half-sweep, but for a strip's first row, computed during the grid barrier before it,
// and a strip's rows loaded before its stores), "gibbs-resident" (gibbs-ahead with each block's band of rows
// resident in shared memory for the whole launch and no grid barrier: the bands' edge rows go through tagged
// words in global memory, a thread per strip of 8 rows in blocks of at most 512 threads, else of 4; where a band
// does not fit shared memory or the SMs, it runs gibbs-ahead's kernel) and
// "gibbs-cpu" (the TBB reference). gibbs-deep, gibbs-groups, gibbs-persistent, gibbs-window, gibbs-strips,
// gibbs-ahead, gibbs-resident and gibbs-cpu give identical bits for the same
// seed; gibbs-blog samples the same chain law with other roundings. A GPU run starts on gibbs-resident (the same
// chain as gibbs-persistent, 1.05× gibbs-ahead's speed on the H100 with its band held twice, docs/perf.md); a CPU run (no GPU) has
// gibbs-cpu only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/session/lattice_run.h"
#include "base/device_buffer.h"
#include "base/params.h"
#include "render/lattice/poisson_ising.h"

namespace mv {

/// The gibbs workload's knobs (gibbs_params()). Model knobs restart the chain; grid-configuration knobs
/// (block shape, padding, tile, sweeps per launch, thinning) keep it.
struct GibbsSettings {
  int width = 2048, height = 2048;  ///< lattice size (width a multiple of 8)
  double gamma = 0.8;               ///< interaction coefficient γ ≥ 0
  double lambda = 0.9;              ///< Poisson rate λ (the peak of the Gaussian map)
  LambdaMap lambda_map = LambdaMap::Gaussian;
  double decay_width = 0.25;        ///< Gaussian σ as a fraction of min(width, height)
  std::string lambda_image;         ///< image map: a PNG or JPEG (its luminance, app/session/gibbs_lambda.h)
  std::string volume = "ch2";       ///< volume map: a volume name or file (default_volume_path)
  int slice_axis = 2;               ///< volume map: the index axis across the slice (0 x, 1 y, 2 z: axial)
  int slice = -1;                   ///< volume map: the slice index (−1: the middle)
  int seed = 1;
  /// Philox rounds of the chain's uniforms: 10 (Salmon et al.'s default) or 7 (their fewest that pass
  /// BigCrush, base/philox.h), the knob's two choices. Another stream of random numbers: another chain, on
  /// every strategy alike.
  int philox_rounds = 10;
  /// Threads per block. 32 × 16 is gibbs-resident's best: blocks of at most 512 threads take strips of 8 rows
  /// (docs/perf.md, "The default block shape: 32 × 16"); gibbs-persistent and gibbs-window run best at 32 × 32.
  /// The document's best for its kernel on the H100 is 32 × 4.
  int block_width = 32, block_height = 16;
  bool padding = false;             ///< the document's shared-memory row padding (+6 at width 8, +2 at width 4)
  int thinning = 500;               ///< keep every thinning-th sweep for the running mean
  int tile_width = 128, tile_height = 64;  ///< gibbs-deep: interior tile in sites
  int sweeps_per_launch = 4;        ///< gibbs-deep: sweeps per launch (halo 2 · this)

  /// Throws InputError("", "--name", …) for a combination the table alone cannot refuse: width not a
  /// multiple of 8, block-width × block-height > 1024, a gibbs-deep tile over 40 KiB of shared memory.
  void validate() const;
};

/// The table of GibbsSettings (base/params.h).
const ParamTable<GibbsSettings>& gibbs_params();
/// The gibbs workload's kernels as strategies (sched/strategy_info.h), in GibbsRun::strategies() order:
/// gibbs-deep, gibbs-groups, gibbs-persistent, gibbs-blog, gibbs-cpu, gibbs-window, gibbs-strips, gibbs-ahead,
/// gibbs-resident.
const std::vector<StrategyInfo>& gibbs_strategies();
/// The document's shared-memory padding for block width bw (ints per row): 6 at 8, 2 at 4, else 0.
int gibbs_doc_padding(int block_width);

/// The gibbs workload's live run.
class GibbsRun : public LatticeRun {
 public:
  /// Throws InputError for a bad knob, CudaError when `gpu` and a CUDA call fails.
  GibbsRun(const ParamValues& knobs, bool gpu);
  ~GibbsRun() override;

  std::string workload() const override { return "gibbs"; }
  std::string strategy() const override;
  std::vector<std::string> strategies() const override;
  void set_strategy(const std::string& name) override;
  Params& params() override { return *params_; }
  bool restarts(const std::string& name) const override;
  void restart() override;
  /// On the GPU: whole sweeps for about `budget_ms`. On the CPU: bands of rows of the sweeps (a sweep run in
  /// bands gives the whole sweep's bits, sched/lattice/checkerboard_sweep.h) for about `budget_ms`, so that a
  /// lattice whose sweep takes seconds still gives a frame; it returns the sweeps completed, 0 while one is in
  /// progress, and at least one when a sweep fits in the budget. steps(), the running mean and the report
  /// count whole sweeps; run_sweeps() completes a sweep in progress first.
  uint64_t advance(double budget_ms) override;
  uint64_t steps() const override { return steps_; }
  std::vector<std::string> views() const override { return {"sample", "mean", "lambda"}; }
  void image(size_t view, std::vector<uint32_t>& rgba, uint32_t& width, uint32_t& height) override;
  nlohmann::json report() const override;

  /// Runs exactly `sweeps` sweeps with the current strategy (keeping every thinning-th for the mean) and
  /// returns their time in ms (CUDA events on the GPU, the wall clock on the CPU). The bench's clock.
  double run_sweeps(uint64_t sweeps);
  /// The lattice now (row-major uint8, width × height).
  std::vector<uint8_t> state() const;
  /// Samples kept for the running mean.
  uint64_t kept() const { return kept_; }
  bool gpu() const { return gpu_; }
  const GibbsSettings& settings() const { return s_; }

 private:
  void start();                    // (re)builds the model and the initial state from s_
  void start_or_keep();            // start(); on InputError puts back the last started model knobs, rethrows
  void sweep_cpu(uint32_t first, uint32_t n);
  void sweeps_gpu(uint32_t first, uint32_t n);
  template <bool Site>
  void sweeps_gpu_site(uint32_t first, uint32_t n);
  template <int NX, bool Site>
  void sweeps_gpu_with(uint32_t first, uint32_t n);
  template <bool Site>
  PoissonIsingRule<kPoissonIsingMaxTerms, Site> host_rule() const;
  void keep_sample();
  void ensure_current();          // applies knob changes: restart when a model knob changed
  uint64_t advance_cpu(double budget_ms);  // advance() of a CPU run: bands of rows within the budget
  void band_cpu(int rows);        // CPU run: the next `rows` rows of the sweep in progress
  bool mid_sweep() const { return band_colour_ != 0 || band_row_ != 0; }

  bool gpu_;
  size_t strategy_ = 0;
  GibbsSettings s_, started_;
  std::unique_ptr<Params> params_;
  PoissonIsingTables tables_;
  LambdaField field_;
  LambdaGrid grid_;                // the image or slice behind field_ (image, volume maps)
  std::string grid_key_;           // what grid_ was read from
  std::vector<uint8_t> hx_;        // CPU run: the lattice
  std::vector<uint32_t> hsum_;     // CPU run: the sum of kept samples
  uint64_t steps_ = 0, kept_ = 0;
  int band_colour_ = 0, band_row_ = 0;  // CPU run: sweep steps_ is done up to half-sweep band_colour_, row band_row_
  double sweeps_per_ms_ = 0.0;     // measured rate (0: unknown)
  double last_rate_sweeps_per_s_ = 0.0;
  /// The kernel that ran the last sweeps: the strategy's own, or the one it falls back to where it does not
  /// apply (gibbs-resident → gibbs-ahead → gibbs-window); report()'s "kernel". Empty before the first sweep.
  std::string kernel_;
  uint64_t runs_ = 0;              // restarts, for the histogram's cache
  mutable std::vector<uint64_t> hist_;
  mutable uint64_t hist_steps_ = ~0ull, hist_runs_ = ~0ull;
  struct Device;
  std::unique_ptr<Device> d_;
};

}  // namespace mv
