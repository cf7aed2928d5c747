// CPU strategy `sequential-priority`: one task at a time, always the one of highest current priority.
//
// The CPU reference of the priority megakernel and the upper bound of its order score (Kerbl 2012, §6.2,
// sched/megakernel/score.h): an exact priority queue (binary max-heap of (priority, task), ties by the smaller task
// index) holds the unfinished tasks; each execution pops the top, runs it with `run_task` on the calling
// thread and re-inserts it with the priority the execution wrote, unless it finished. A task execution
// writes only its own priority, so the heap stays exact and every execution takes a task whose priority
// is at least that of every other unfinished task at that moment. The heap is rebuilt (O(n)) at the start
// of each step, so priorities changed between steps (priority function, target, reset) are picked up.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "sched/strategy.h"

namespace mv {

template <class W>
class ExactPriorityStrategy final : public Strategy<W> {
 public:
  ExactPriorityStrategy()
      : info_{"sequential-priority", "CPU, one thread: one task at a time by an exact priority queue",
              "Kerbl 2012 §6.2 (exact priority queue, CPU model)", Side::Host, false, {}, true} {}
  const StrategyInfo& info() const override { return info_; }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings&) override {
    const auto t0 = std::chrono::steady_clock::now();
    StepStats st;
    typename W::View v = w.view(Side::Host);
    heap_.clear();
    for (uint32_t t = 0, n = w.num_tasks(); t < n; ++t)
      if (!v.finished(t)) heap_.push_back({v.priority[t], t});
    std::make_heap(heap_.begin(), heap_.end(), below);
    do {
      if (heap_.empty()) break;
      std::pop_heap(heap_.begin(), heap_.end(), below);
      const uint32_t task = heap_.back().task;
      heap_.pop_back();
      st.work += v.run_task(task);
      ++st.tasks;
      if (v.finished(task)) {
        ++st.finished;
      } else {
        heap_.push_back({v.priority[task], task});
        std::push_heap(heap_.begin(), heap_.end(), below);
      }
    } while (st.work < budget_work);
    st.busy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }

 private:
  struct Item {
    float priority;
    uint32_t task;
  };
  /// Heap order (std::*_heap keep the largest on top): lower priority, or equal and larger index, is below.
  static bool below(const Item& a, const Item& b) {
    return a.priority < b.priority || (a.priority == b.priority && a.task > b.task);
  }
  StrategyInfo info_;
  std::vector<Item> heap_;
};

}  // namespace mv
