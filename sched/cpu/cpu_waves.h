// CPU strategies `sequential-waves` (one thread) and `cpu-waves` (TBB): priority waves on the host, the host
// twin of the GPU's sorted-waves.
//
// Each wave takes the K = min(wave_size, budget) unfinished tasks of highest priority (std::nth_element,
// then sorted, ties by task index) and executes each with `run_task` on the host. They are the speed-up
// baselines and the exact-priority reference: with priority `none` they visit the least-sampled patches
// first, i.e. uniformly.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <chrono>
#include <numeric>

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
      uint64_t paths = 0;
      uint32_t finished = 0;
      if constexpr (Parallel) {
        using Acc = std::pair<uint64_t, uint32_t>;
        const Acc acc = tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, k, 1), Acc{0, 0},
            [&](const tbb::blocked_range<size_t>& r, Acc a) {
              for (size_t i = r.begin(); i != r.end(); ++i) {
                a.first += v.run_task(order_[i]);
                a.second += v.finished(order_[i]) ? 1u : 0u;
              }
              return a;
            },
            [](Acc a, Acc b) { return Acc{a.first + b.first, a.second + b.second}; });
        paths = acc.first;
        finished = acc.second;
      } else {
        for (size_t i = 0; i < k; ++i) {
          paths += v.run_task(order_[i]);
          finished += v.finished(order_[i]) ? 1u : 0u;
        }
      }
      st.work += paths;
      st.tasks += k;
      st.finished += finished;
    }
    st.busy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }

 private:
  StrategyInfo info_;
  std::vector<uint32_t> order_;
};

}  // namespace mv
