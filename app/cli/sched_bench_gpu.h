// The GPU side of `megaview sched-bench` (app/cli/cli_sched_bench.cpp): Kerbl 2012 §6.2 (Figs 4 and 5)
// measured on the real priority megakernel (sched/megakernel/megakernel.cuh) with blocking spin tasks
// (render/synthetic/spin_workload.cuh). Kept apart from the command so that only this file needs nvcc.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sched/megakernel/megakernel_settings.h"

namespace mv {

/// One measured configuration.
struct SchedBenchCase {
  uint32_t n = 10000;             ///< tasks, [2, 2^24]; each runs once, priorities 0 … n−1
  double task_us = 100.0;         ///< duration of every task, µs, (0, 1e6]
  uint32_t block = 128;           ///< threads per block of the persistent kernel (controller and workers)
  /// The megakernel's settings (megakernel_params(), checked by the strategy). Its queue is Kerbl's ring
  /// unless set otherwise here; with `controller` false the run is always Kerbl's ring in FIFO order. The
  /// bench owns record_order, record_capacity, watchdog_seconds, rebuild_sorted (ascending: §6.2's worst
  /// case) and, with static_duration, static_task_cycles.
  MegakernelSettings settings = kerbl_settings();
  /// §5.4's static task duration: the controller is told task_us (in SM cycles at the device's clock
  /// rate) instead of measuring. Spin tasks run once and never re-enqueue, so §5.3's measurements never
  /// reach the entries still in the queue (their estimate stays "unknown" = 0), and with measuring the
  /// time check refuses every pair after the first sort times are known.
  bool static_duration = true;
  bool keep_order = false;        ///< fill SchedBenchResult's order vectors (the order log)

  static MegakernelSettings kerbl_settings() {
    MegakernelSettings s;
    s.queue = QueueDesign::Kerbl;
    return s;
  }
};

struct SchedBenchResult {
  double score = 0.0;          ///< S(n) of the dequeue order (ticket order of the atomic head counter)
  double busy_ms = 0.0;        ///< the slice, CUDA events: first dequeue to the last worker's exit
  uint32_t worker_warps = 0;   ///< concurrent workers (one warp each)
  uint32_t grid_blocks = 0, blocks_per_sm = 0, controllers = 0;
  std::array<uint64_t, 3> passes{};     ///< controller passes per SortMethod
  std::array<double, 3> sort_us_max{};  ///< §5.3.2: longest lock-to-unlock time per method, µs
  uint64_t collisions = 0;     ///< worker accesses that met a locked segment
  double wait_ms = 0.0;        ///< summed worker time waiting on locked segments, ms
  uint64_t refusals = 0, restarts = 0, lock_failures = 0;
  /// With keep_order: the execution order, entry i the i-th dequeue (its ticket in its ring, the task,
  /// its priority); order_score(keys) == score.
  std::vector<unsigned long long> tickets;
  std::vector<uint32_t> tasks;
  std::vector<float> keys;
};

/// Runs one configuration on the current device: queue filled in ascending priority, one slice to
/// the end, dequeue order recorded. Checks that every task ran exactly once (else throws
/// std::runtime_error). Throws CudaError on CUDA failures, InputError on settings out of range.
SchedBenchResult run_sched_bench_case(const SchedBenchCase& c);

}  // namespace mv
