// The headless commands behind `megaview render | reference | mse-curve | bench`; app/cli/main.cpp parses
// the command line into these structs. Each command prints its results on stdout and progress on
// stderr, writes its files without ever replacing an existing one (app/session/output_file.h), and reports
// bad input by throwing InputError (one line naming the file, field or range) for main to print.
//
// Times are the Session's busy time: strategy steps only (CUDA events around the kernels on the GPU,
// wall clock on the CPU), excluding scene loading, film allocation, MSE evaluation and display.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/session/session.h"

namespace mv {

/// `megaview render`: renders one image, writes F.png (tone-mapped, default display settings) and F.exr
/// (linear mean radiance) beside it, prints a summary and, with a reference, `MSE <value>`.
struct RenderCommand {
  SessionOptions session;  ///< task.target_spp 0: the scene's target
  double time_ms = 0.0;    ///< stop after this much busy time; 0: run until every patch reaches the target
  double budget = 0.0;     ///< (0, 1]: stop after this fraction of the full render's paths; 0: no such stop
  std::string heat_out;    ///< non-empty: the samples-per-patch heat map as PNG (render/tonemap.h's colours)
  std::string out;         ///< F.png
};
void run_render(const RenderCommand& c);

/// `megaview reference`: renders the ground truth to `session.task.target_spp` with a progress bar,
/// writes R.exr and the sidecar R.json (how it was made).
/// The default seed of `megaview reference`: renders use seed 0 by default, and a reference sharing their
/// random streams would share their first samples too, making the MSE look smaller than it is.
inline constexpr uint32_t kReferenceSeed = 1;

struct ReferenceCommand {
  SessionOptions session;  ///< strategy empty: the fastest available (uniform on a GPU, else cpu-parallel)
  std::string out;         ///< R.exr
  bool force = false;      ///< replace an existing R.exr / R.json
};
void run_reference(const ReferenceCommand& c);

/// `megaview mse-curve`: MSE against a reference over busy time for several strategy:priority series
/// (Kerbl 2012, Fig 9). Writes P.csv and P.json (app/cli/figures.h), prints a summary table and draws
/// P-time and P-samples .png/.pdf with tools/figures.py.
struct MseCurveCommand {
  SessionOptions session;            ///< strategy unused; task.priority: the default of non-uniform entries
  /// Entries "strategy[:priority]"; a strategy with knobs may carry overrides in brackets, e.g.
  /// "megakernel[queue=kerbl;controllers=4]:variance" or "cuda-global-queue[work-unit=4]" (names as the
  /// viewer's --smoke-at steps take them).
  std::vector<std::string> compare;
  double duration_ms = 2000.0;       ///< busy time per series
  /// > 0: the quality goal is the MSE that `uniform` (the first uniform series) has when its mean spp
  /// first reaches goal_spp; the summary gives each series' busy time and samples to reach it, and their
  /// ratios to uniform's (time to quality).
  double goal_spp = 0.0;
  double interval_ms = 50.0;         ///< busy time between records
  bool interval_given = false;       ///< whether --interval-ms was given (else the default above)
  /// Each record k is a fresh render (empty film, Session::reset) of one uninterrupted step of about
  /// k × interval_ms busy time, so that no record splits the schedule into slices (a slice ends with its
  /// warps' drain, which short slices pay often); false: one progressive render recorded every interval_ms.
  bool from_scratch = false;
  std::string out_prefix;            ///< P
};
void run_mse_curve(const MseCurveCommand& c);

/// `megaview bench`: `repeat` full renders per strategy (fresh Session each, after one untimed warm-up),
/// printed as a table of medians; optionally every run as CSV.
struct BenchCommand {
  SessionOptions session;               ///< strategy unused
  std::vector<std::string> strategies;  ///< empty: the GPU strategies with a GPU in use, else the CPU ones
  int repeat = 5;
  std::string csv;  ///< empty: no CSV
};
void run_bench(const BenchCommand& c);

/// `megaview sort-bench`: one thread block sorts n float keys with uint32 values (Kerbl 2012, §6.1,
/// Fig 3): the bitonic full sort and merge methods (sched/megakernel/bitonic_block.cuh) against cub::BlockRadixSort
/// and cub::DeviceRadixSort, every output verified against std::sort first. Prints µs per sort as tables
/// (rows n, columns block size; then the best block size per method); optionally CSV (with its metadata
/// JSON) and, from it, a figure (PNG and PDF by tools/figures.py).
/// Without a GPU: "sort-bench needs a CUDA GPU (<reason>)".
struct SortBenchCommand {
  std::vector<uint32_t> sizes;    ///< n, powers of two in [32, 1024]; empty: all six
  std::vector<uint32_t> threads;  ///< block sizes, powers of two in [32, 1024]; empty: all six
  int batches = 200;              ///< problems (different keys) sorted per timed run
  int repeat = 5;                 ///< timed runs; the median is reported
  uint32_t seed = 1;              ///< random keys
  std::string csv, plot;          ///< empty: no CSV / no figure; plot (F.png, needs csv): F.png and F.pdf
};
void run_sort_bench(const SortBenchCommand& c);

/// `megaview sched-model`: the CPU model's prediction of Kerbl's order score S(n) (Kerbl 2012, §6.2,
/// Figs 4–5; sched/megakernel/queue_model.h) per queue length n and task duration, controller against FIFO.
/// Prints a table, writes P.csv (one row per n and duration) and P.json, and draws P.png/.pdf (S(n) over n).
struct SchedModelCommand {
  std::vector<uint32_t> n = {1000, 2000, 5000, 10000, 20000, 40000, 80000};  ///< queue lengths (Figs 4–5)
  std::vector<double> task_us = {100.0, 1000.0};  ///< task durations, µs (Fig 4: 100 µs, Fig 5: 1 ms)
  /// Concurrent workers: an H100's 132 SMs × 8 resident warps, one patch task per warp (run_task_warp).
  uint32_t workers = 132 * 8;
  uint32_t segment = 256;  ///< entries per segment (§6.2)
  /// µs per controller pass: unsorted–unsorted, one sorted, sorted–sorted. Estimates, not measurements:
  /// §6.1 has a 512-thread block sort ≤ 1024 keys up to 56× faster than CUDPP's ~0.5 ms, i.e. ≈ 10 µs;
  /// the others scale by the bitonic steps of a 128-thread block on 2 × 256 keys (90 : 54 : 18).
  /// `megaview sort-bench` measures the real ones.
  std::vector<double> sort_us = {10.0, 6.0, 2.0};
  double buffer_multiplier = 1.0;  ///< §5.4's multiplier on the time buffers
  bool time_management = true;     ///< §5.2
  std::string order = "ascending"; ///< initial order: ascending (worst case, §6.2), random, descending
  uint64_t seed = 1;               ///< for the random order
  std::string out_prefix;          ///< P
};
void run_sched_model(const SchedModelCommand& c);

/// `megaview sched-bench`: Kerbl 2012 §6.2 (Figs 4–5) measured on the GPU megakernel with blocking spin
/// tasks (app/cli/sched_bench_gpu.h). Prints a table (S(n) with the controller(s), FIFO and the CPU
/// model's prediction), writes P.csv and P.json and draws P.png/.pdf (S(n) over n), never over existing files.
/// Without a GPU: std::runtime_error "sched-bench needs a CUDA GPU (…)".
struct SchedBenchCommand {
  std::vector<uint32_t> n = {1000, 5000, 10000, 20000, 40000, 80000};  ///< queue lengths
  std::vector<double> task_us = {100.0, 1000.0};  ///< task durations, µs (Fig 4: 100 µs, Fig 5: 1 ms)
  std::vector<uint32_t> threads = {128};          ///< block sizes of the persistent kernel (controller too)
  std::vector<uint32_t> controllers = {1};        ///< controller blocks P (MegakernelSettings::controllers), swept
  /// The megakernel's knobs by name (megakernel_params(): queue, segment-size, time-management, …) for every
  /// run, over MegakernelSettings' defaults (the queue: buckets, the program's default; kerbl for the
  /// paper's). The ones the bench sets itself are not among its options (sched_bench_owned_knob).
  ParamValues knobs;
  bool static_duration = true; ///< SchedBenchCase::static_duration
  int repeat = 3;              ///< runs per configuration; the median score is reported
  bool model = true;           ///< also run the CPU model for P = 1
  std::string order_log;          ///< non-empty: one CSV row per executed task of every run
  std::string out_prefix;
};
void run_sched_bench(const SchedBenchCommand& c);
/// Whether sched-bench sets megakernel knob `name` itself (so it is not one of its options): controller
/// (both orders are measured), controllers (the --controllers sweep), the order record, the watchdog, the
/// rebuild order (ascending, §6.2's worst case) and the static task cycles (--measure-durations).
bool sched_bench_owned_knob(const std::string& name);

/// `megaview allocation-bound`: renders uniformly to the target spp and prints render/pathtracer/allocation_bound.h's
/// ratios (the fewest samples, relative to uniform, that any allocation needs for uniform's MSE).
struct AllocationBoundCommand {
  SessionOptions session;  ///< strategy empty: uniform on a GPU, cpu-parallel otherwise
};
void run_allocation_bound(const AllocationBoundCommand& c);
/// `megaview bench --workload W …`: Lehmann 2023's strand strategies (sched/strand_strategy.h) on strand
/// workloads (app/session/strand_workloads.h). Prints per strategy the median / min / max of `repeat` timed
/// runs (GPU: CUDA events after one untimed warm-up run; CPU: wall clock), the launches, the step
/// statistics μ / σ / CV (Fig 3.2) and the image checksum (FNV-1a of the float RGBA), and fails if two
/// strategies' images or step counts differ. With `sweep`, Appendix A's grid sweep: n = 64…1024 and
/// b = 64…min(1024, sweep_max_threads / n) in powers of two, c ∈ {1, 2, 4, 8, 16} for the global queues,
/// and for the task strategies (groups of 32 strands) quantum ∈ {4, 16, 64} × the three task priorities,
/// against `sequential`; writes P.csv (every configuration), P.json and P.png/.pdf (best time per n), and prints the
/// best configuration per strategy with its speed-up over sequential. Without a GPU (or with --cpu) a
/// GPU strategy named in `strategies` is refused in one line.
struct StrandBenchCommand {
  std::vector<std::string> workloads;   ///< --workload, at least one
  std::vector<std::string> strategies;  ///< empty: every strategy with a GPU in use, else the CPU ones
  std::string grid;                     ///< "n,b[,c]" or "auto"; empty: auto (not with sweep)
  std::string size;                     ///< "WxH"; empty: the workload's (the paper's strand count)
  int repeat = 5;
  /// The strategies' knobs given on the command line (strand_params(), sched/strand_strategy.h: --work-unit,
  /// --permute-seed, --prefetch, --task-quantum, …), applied after --grid.
  ParamValues knobs;
  bool record_finish_order = false;     ///< StrandRunSettings::record_finish_order (what the viewer's replay costs)
  ParamValues task_knobs;               ///< StrandRunSettings::task_knobs: the patch strategies' knobs as given
  bool force_cpu = false;               ///< --cpu: as if there were no GPU
  bool sweep = false;
  uint32_t sweep_max_threads = 65536;   ///< n·b bound of the sweep (the paper's largest grid), [4096, 2^26]
  std::string csv;                      ///< without sweep: also every run as CSV (+ JSON, figure); empty: none
  std::string out_prefix;               ///< with sweep (required): P.csv, P.json, P.png/.pdf
};
void run_strand_bench(const StrandBenchCommand& c);

// ---- helpers shared by the commands ----

/// `path` with its extension `ext` (e.g. ".png") replaced by `new_ext`; InputError naming `field` if
/// `path` does not end in `ext`.
std::string sibling_path(const std::string& path, const std::string& field, const std::string& ext,
                         const std::string& new_ext);
/// The display settings a headless image is written with: the defaults, heat-map scale at the target.
ToneMapSettings default_display(const Session& s);
/// The strategies that run on one side (GPU: Side::Device), in registry order.
std::vector<std::string> strategies_on(Side side);
/// Millions of samples (paths) per second of busy time.
double msamples_per_second(uint64_t paths, double busy_ms);

/// Before a Session is made: the film of `o`'s resolution (the scene's where --width / --height are not
/// given; the scene file is read for it) must fit in half the available host memory. Throws InputError
/// naming --width/--height (or --scene) with the bytes needed and available. (Film::allocate checks the
/// GPU's free memory when the film goes there.)
void check_film_memory(const SessionOptions& o);

/// Host bytes a run of `strands` strands is estimated to hold (state, step count, status and RGBA image:
/// kStrandBytesEstimate each).
inline constexpr uint64_t kStrandBytesEstimate = 128;
uint64_t strand_bytes_estimate(uint64_t strands);

}  // namespace mv
