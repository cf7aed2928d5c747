#include "app/cli/sched_bench_gpu.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "sched/megakernel/megakernel.cuh"
#include "render/synthetic/spin_workload.cuh"

namespace mv {

SchedBenchResult run_sched_bench_case(const SchedBenchCase& c) {
  if (c.n < 2 || c.n > (1u << 24)) throw InputError("", "--n", std::to_string(c.n) + " is not in [2, 2^24]");
  if (!(c.task_us > 0.0) || c.task_us > 1e6) throw InputError("", "--task-us", "must be in (0, 1e6] µs");
  int dev = 0, khz = 0;
  MV_CUDA_CHECK(cudaGetDevice(&dev));
  MV_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  const double us_per_cycle = khz > 0 ? 1e3 / khz : 1e-3;
  SpinWorkload w(c.n, c.task_us);
  MegakernelStrategy<SpinWorkload> m;
  MegakernelSettings& s = m.settings();
  s = c.settings;
  if (!s.controller) s.queue = QueueDesign::Kerbl;
  s.rebuild_sorted = false;  // ascending: §6.2's worst case
  if (c.static_duration)
    s.static_task_cycles = static_cast<uint32_t>(std::min(4.0e9, std::max(1.0, c.task_us / us_per_cycle)));
  s.record_order = true;
  s.record_capacity = c.n;
  // A slice runs all n tasks; allow it n·task / (a few workers) and at least 10 s before the host asks
  // it to stop (a stopped slice would leave tasks unrun, which the check below reports).
  s.watchdog_seconds = std::min(60.0, std::max(10.0, 4.0 * c.n * c.task_us * 1e-6 / 64.0));
  ScheduleSettings ss;
  ss.block_size = c.block;
  const StepStats st = m.step(w, c.n, ss);
  const MegakernelStats& ms = m.stats();
  const std::vector<uint32_t> e = w.executions();
  const auto bad = std::find_if(e.begin(), e.end(), [](uint32_t x) { return x != 1u; });
  if (bad != e.end() || st.tasks != c.n || ms.queue_length != 0 || ms.recorded != c.n)
    throw std::runtime_error("sched-bench: task " + std::to_string(bad - e.begin()) + " ran " +
                             (bad != e.end() ? std::to_string(*bad) : std::string("once")) + " times; " +
                             std::to_string(st.tasks) + " executions of " + std::to_string(c.n) + ", " +
                             std::to_string(ms.recorded) + " recorded, queue left " +
                             std::to_string(ms.queue_length) + (ms.stopped_by_host ? " (slice stopped by the host)" : ""));
  SchedBenchResult r;
  r.score = ms.order_score;
  r.busy_ms = st.busy_ms;
  r.worker_warps = ms.worker_warps;
  r.grid_blocks = ms.grid_blocks;
  r.blocks_per_sm = ms.blocks_per_sm;
  r.controllers = ms.controllers;
  for (int k = 0; k < 3; ++k) {
    r.passes[k] = ms.sort_passes[k];
    r.sort_us_max[k] = static_cast<double>(ms.sort_cycles_max[k]) * us_per_cycle;
  }
  r.collisions = ms.lock_collisions;
  r.wait_ms = static_cast<double>(ms.wait_cycles) * us_per_cycle * 1e-3;
  r.refusals = ms.ctrl_time_refusals;
  r.restarts = ms.ctrl_restarts;
  r.lock_failures = ms.ctrl_lock_failures;
  if (c.keep_order) {
    r.tickets = m.recorded_tickets();
    r.tasks = m.recorded_tasks();
    r.keys = m.recorded_keys();
  }
  return r;
}

}  // namespace mv
