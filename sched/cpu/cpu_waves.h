// CPU strategies `sequential-waves` (one thread) and `cpu-waves` (TBB): priority waves on the host, the host
// twin of the GPU's sorted-waves.
//
// Each wave takes the K = min(wave_size, budget) unfinished tasks of highest priority (std::nth_element,
// then sorted, ties by task index) and executes each with `run_task` on the host. They are the speed-up
// baselines and the exact-priority reference: with priority `none` they visit the least-sampled patches
// first, i.e. uniformly.
#pragma once

#include <algorithm>
#include <chrono>
#include <numeric>

#include "sched/cpu/host_tasks.h"
#include "sched/strategy.h"

namespace mv {

template <class W, bool Parallel>
class CpuWaveStrategy final : public Strategy<W> {
 public:
  CpuWaveStrategy()
      : info_{Parallel ? "cpu-waves" : "sequential-waves",
              Parallel ? "CPU, all cores (TBB): waves of the K highest-priority tasks (sorted-waves on the host)"
                       : "CPU, one thread: waves of the K highest-priority tasks (sorted-waves on the host)",
              "Kerbl 2012 §1–2 (host-sorted waves)", Side::Host, false, {}, true} {}
  const StrategyInfo& info() const override { return info_; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    const auto t0 = std::chrono::steady_clock::now();
    StepStats st;
    typename W::View v = w.view(Side::Host);
    const uint32_t n = w.num_tasks();
    const uint64_t per_task = std::max<uint64_t>(1, w.work_per_task());
    while (st.work < budget_work) {
      order_.clear();
      for (uint32_t t = 0; t < n; ++t)
        if (!v.finished(t)) order_.push_back(t);
      if (order_.empty()) break;
      const uint64_t want = std::max<uint64_t>(1, (budget_work - st.work + per_task - 1) / per_task);
      const size_t k = static_cast<size_t>(std::min<uint64_t>({want, s.wave_size, order_.size()}));
      auto by_priority = [&](uint32_t a, uint32_t b) {
        return v.priority[a] > v.priority[b] || (v.priority[a] == v.priority[b] && a < b);
      };
      if (k < order_.size()) std::nth_element(order_.begin(), order_.begin() + k, order_.end(), by_priority);
      std::sort(order_.begin(), order_.begin() + k, by_priority);
      const HostPass pass = run_host_pass(v, order_.data(), k, Parallel);
      st.work += pass.work;
      st.tasks += k;
      st.finished += pass.finished;
    }
    st.busy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }

 private:
  StrategyInfo info_;
  std::vector<uint32_t> order_;
};

}  // namespace mv
