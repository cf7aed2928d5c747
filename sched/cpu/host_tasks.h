// One update of each task of a list on the host, on one thread or on all cores (TBB): the inner step the
// CPU patch-task strategies share (sched/cpu/cpu_waves.h's priority waves, sched/cpu/cpu_to_completion.h's
// super-steps).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace mv {

/// What one pass over a list did.
struct HostPass {
  uint64_t work = 0;      ///< sum of run_task's returns (units of work)
  uint32_t finished = 0;  ///< tasks of the list at their target after their update
};

/// Calls v.run_task(tasks[i]) once for i in [0, k): in list order on this thread, or with `parallel` in
/// TBB tasks of `grain` consecutive entries (≥ 1). A task must appear at most once in the list.
template <class View>
HostPass run_host_pass(const View& v, const uint32_t* tasks, size_t k, bool parallel, size_t grain = 1) {
  const auto pass = [&](size_t begin, size_t end, HostPass p) {
    for (size_t i = begin; i != end; ++i) {
      p.work += v.run_task(tasks[i]);
      p.finished += v.finished(tasks[i]) ? 1u : 0u;
    }
    return p;
  };
  if (!parallel) return pass(0, k, HostPass{});
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, k, grain), HostPass{},
      [&](const tbb::blocked_range<size_t>& r, HostPass p) { return pass(r.begin(), r.end(), p); },
      [](HostPass a, HostPass b) { return HostPass{a.work + b.work, a.finished + b.finished}; });
}

}  // namespace mv
