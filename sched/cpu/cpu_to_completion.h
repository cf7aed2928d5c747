// Lehmann 2023's CPU strategies on patch tasks (the progressive film): `sequential` (§4.1.2) and `cpu-parallel`
// (§2.3), the algorithms that sched/cpu/strand_cpu.h runs on strands, with a patch task as the work item
// (base/work.h: one update is one batch of samples, and the item is active until its target spp).
//
//  - sequential: one thread runs task 0, 1, … each to its target before the next (bucket order).
//  - cpu-parallel: bulk-synchronous super-steps: every unfinished task takes one update per super-step, in
//    blocks of `cpu-block` consecutive tasks per TBB task, with a barrier after each super-step.
//
// A progressive renderer must return within a frame, so a step is bounded by its work budget: sequential
// stops inside a task when the budget is spent, and the next step goes on with the first unfinished task;
// cpu-parallel runs a super-step in pieces of about the budget, and the next step goes on where the last
// piece ended, so a super-step still gives every unfinished task exactly one update. Priorities are
// ignored, as in the paper.
#pragma once

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "sched/cpu/host_tasks.h"
#include "sched/cpu/strand_cpu.h"
#include "sched/strand_strategy.h"
#include "sched/strategy.h"

namespace mv {

/// Knobs of cpu-parallel on patch tasks: the strand strategies' `cpu-block` (strand_params()), here the most
/// patches per TBB task. Its default differs from the strands' 4096: one batch of a patch task (32 paths)
/// costs about as much as a thousand strand updates, so a super-step's piece must be split finely to keep
/// every core busy (with 4096 a piece of a few thousand patches ran on one core).
struct CpuBlockSettings {
  uint32_t cpu_block = 1;  ///< patches per TBB task at most, [1, 2^24]; TBB's partitioner groups them
};

template <class W, bool Parallel>
class CpuToCompletionStrategy final : public Strategy<W> {
 public:
  const StrategyInfo& info() const override { return info_; }
  void invalidate() override { cursor_ = 0; }
  Params* params() override { return Parallel ? &params_ : nullptr; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings&) override {
    const auto t0 = std::chrono::steady_clock::now();
    StepStats st;
    typename W::View v = w.view(Side::Host);
    const uint32_t n = w.num_tasks();
    if constexpr (!Parallel) {
      for (uint32_t t = 0; t < n && st.work < budget_work; ++t) {
        while (!v.finished(t) && st.work < budget_work) {
          const uint32_t work = v.run_task(t);
          ++st.tasks;
          st.work += work;
          if (v.finished(t)) ++st.finished;
          if (work == 0) break;
        }
      }
    } else {
      const uint64_t per_task = std::max<uint64_t>(1, w.work_per_task());
      while (st.work < budget_work) {
        // The next piece of the super-step: up to `want` unfinished tasks from the cursor on, in index order;
        // at the end of the index space the super-step is over and the next one starts from task 0.
        const uint64_t want = std::max<uint64_t>(1, (budget_work - st.work + per_task - 1) / per_task);
        piece_.clear();
        uint32_t t = cursor_ < n ? cursor_ : 0;
        for (uint32_t seen = 0; seen < n && piece_.size() < want; ++seen, ++t) {
          if (t == n) {
            if (!piece_.empty()) break;  // the super-step ends here: the barrier
            t = 0;
          }
          if (!v.finished(t)) piece_.push_back(t);
        }
        if (piece_.empty()) break;  // every task is at its target
        cursor_ = piece_.back() + 1;
        const HostPass pass = run_host_pass(v, piece_.data(), piece_.size(), true, settings_.cpu_block);
        st.work += pass.work;
        st.tasks += piece_.size();
        st.finished += pass.finished;
      }
    }
    st.busy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }

 private:
  static const ParamTable<CpuBlockSettings>& table() {
    static const ParamTable<CpuBlockSettings> t = [] {
      ParamTable<CpuBlockSettings> p;
      p.add(*find_param(strand_params().specs(), "cpu-block"), &CpuBlockSettings::cpu_block);
      return p;
    }();
    return t;
  }
  StrategyInfo info_{Parallel ? cpu_parallel_strategy_info() : sequential_strategy_info()};
  CpuBlockSettings settings_;
  BoundParams<CpuBlockSettings> params_{table(), settings_};
  uint32_t cursor_ = 0;  ///< cpu-parallel: where the current super-step goes on
  std::vector<uint32_t> piece_;
};

}  // namespace mv
