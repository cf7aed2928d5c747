// The patch-task strategies as strand strategies: `sequential-priority`, `uniform`,
// `sorted-waves` and `megakernel` run a strand program as groups of 32 strands (sched/adapters/strand_tasks.h),
// so the Lehmann 2023 bench, sweep, tests and the viewer's strand mode compare them with Appendix A's
// nine strategies on the same workloads. Include from a CUDA translation unit.
//
// A run: allocate the strand arrays and the per-group done flags and priorities on the strategy's side;
// then, timed, initialise every strand (init(i), Active, 0 steps; every group unstarted) and call the task
// strategy's step() until every group is finished; then download the arrays. Each step's budget is
// "everything" for uniform (one step runs its passes back to back) and the megakernel (one persistent
// slice, ended early only by its host time limit, after which the next slice continues the same queue),
// and the unfinished groups' worth for sorted-waves and sequential-priority (whose step would otherwise
// keep re-sorting finished work). The strategies run with their default settings (ScheduleSettings,
// MegakernelSettings): the grid is theirs (occupancy-sized), not GridConfig's.
//
// Timed region (StrandTimings): GPU: CUDA events on the default stream from before the init kernel to
// after the last step, so every step's own synchronisation and read-backs are inside; CPU: steady_clock
// around the same. Outside: allocation, the download and the image.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "base/mirrored_buffer.h"
#include "sched/gpu/gpu_common.cuh"
#include "sched/gpu/strand_gpu.cuh"
#include "sched/strand_strategy.h"
#include "sched/adapters/strand_tasks.h"
#include "sched/strategy.h"

namespace mv {

namespace strand_task_detail {

/// Every strand from init(i), Active, 0 steps; every group unstarted.
template <class SW>
__global__ void init_kernel(StrandTaskView<SW> v, uint32_t groups) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < v.strands; k += stride) {
    const uint32_t i = static_cast<uint32_t>(k);
    v.state[i] = v.workload.init(i);
    v.status[i] = WorkStatus::Active;
    v.steps[i] = 0;
    if (i < groups) {  // max_steps = 0: no strand may update, so every group is finished from the start
      v.done[i] = v.max_steps == 0 ? 1 : 0;
      v.priority[i] = v.max_steps == 0 ? kFinishedPriority : kUnsampledPriority;
    }
  }
}

}  // namespace strand_task_detail

/// A strand program as a Workload of sched/strategy.h: the arrays of StrandTaskView<SW> on one side.
template <class SW>
class StrandTaskWorkload {
 public:
  using View = StrandTaskView<SW>;
  using State = typename SW::State;

  /// Allocates the arrays on `side` (nothing is initialised until init()). `w` must hold its data on
  /// `side`. Throws CudaError for a failed allocation.
  StrandTaskWorkload(const SW& w, Side side, const StrandRunSettings& s) : side_(side) {
    view_.workload = w;
    view_.strands = w.num_strands();
    view_.quantum = s.task_quantum;
    view_.max_steps = s.max_steps;
    view_.rule = s.task_priority;
    const uint32_t n = view_.strands, g = num_tasks();
    view_.state = resize_on(side, h_state_, d_state_, n);
    view_.status = resize_on(side, h_status_, d_status_, n);
    view_.steps = resize_on(side, h_steps_, d_steps_, n);
    view_.done = resize_on(side, h_done_, d_done_, g);
    view_.priority = resize_on(side, h_priority_, d_priority_, g);
    if (side == Side::Device) {
      counters_.resize(1);
      view_.counters = counters_.data();
      if (s.record_finish_order) view_.finish = d_finish_.allocate(n);
    } else if (s.record_finish_order) {
      h_finish_.resize(n);
      view_.finish = FinishTickets{h_finish_.data(), &h_finish_next_};
    }
  }

  uint32_t num_tasks() const { return view_.num_tasks(); }
  uint32_t work_per_task() const { return kStrandTaskGroup * view_.quantum; }
  Side side() const { return side_; }
  void make_current(Side s) { require(s); }
  View view(Side s) {
    require(s);
    return view_;
  }
  WorkCounters* device_counters() { return counters_.data(); }

  /// Every strand from init(i), Active, 0 steps; every group unstarted (kUnsampledPriority). Asynchronous
  /// on the default stream on the device.
  void init() {
    const uint32_t n = view_.strands, g = num_tasks();
    if (side_ == Side::Device) {
      if (n == 0) return;
      if (view_.finish.ticket) d_finish_.reset();
      const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>((n + 255) / 256, 65535));
      strand_task_detail::init_kernel<SW><<<blocks, 256>>>(view_, g);
      MV_CUDA_CHECK_LAUNCH();
      return;
    }
    for (uint32_t i = 0; i < n; ++i) {
      h_state_[i] = view_.workload.init(i);
      h_status_[i] = WorkStatus::Active;
      h_steps_[i] = 0;
    }
    std::fill(h_finish_.begin(), h_finish_.end(), kStrandNotFinished);
    h_finish_next_ = 0;
    const bool none = view_.max_steps == 0;  // no strand may update: every group is finished from the start
    std::fill(h_done_.begin(), h_done_.end(), static_cast<uint8_t>(none ? 1 : 0));
    std::fill(h_priority_.begin(), h_priority_.end(), none ? kFinishedPriority : kUnsampledPriority);
  }

  /// Moves (host) or copies (device) the strand arrays into `r` (waits for the device).
  void collect(StrandRun<SW>& r) {
    if (side_ == Side::Host) {
      r.state = std::move(h_state_);
      r.status = std::move(h_status_);
      r.steps = std::move(h_steps_);
      r.finish_order = std::move(h_finish_);
      return;
    }
    MV_CUDA_CHECK(cudaDeviceSynchronize());  // the wrapped strategy may have used streams of its own
    download_strand_arrays(d_state_, d_status_, d_steps_, view_.strands, r.state, r.status, r.steps);
    if (view_.finish.ticket) d_finish_.download(r.finish_order);
  }

 private:
  void require(Side s) const {
    if (s != side_)
      throw std::logic_error(std::string("StrandTaskWorkload: the strand arrays live on the ") +
                             (side_ == Side::Device ? "device" : "host") + ", a strategy asked for the other side");
  }
  Side side_;
  View view_{};
  std::vector<State> h_state_;
  std::vector<WorkStatus> h_status_;
  std::vector<uint32_t> h_steps_;
  std::vector<uint8_t> h_done_;
  std::vector<float> h_priority_;
  std::vector<uint32_t> h_finish_;
  unsigned int h_finish_next_ = 0;
  DeviceFinishRecord d_finish_;
  DeviceBuffer<State> d_state_;
  DeviceBuffer<WorkStatus> d_status_;
  DeviceBuffer<uint32_t> d_steps_;
  DeviceBuffer<uint8_t> d_done_;
  DeviceBuffer<float> d_priority_;
  DeviceBuffer<WorkCounters> counters_;
};

/// How much work one step() of the task strategy is asked for.
enum class StrandTaskBudget {
  Unbounded,   ///< everything: the strategy runs until its own end (uniform's passes, a megakernel slice)
  Unfinished,  ///< the unfinished groups' worth: one pass (sorted-waves, sequential-priority)
};

/// Task strategy TS<StrandTaskWorkload<SW>> (uniform, sorted-waves, megakernel, sequential-priority) as a
/// StrandStrategy<SW>.
template <class SW, template <class> class TS>
class StrandTaskStrategy final : public StrandStrategy<SW> {
  using TW = StrandTaskWorkload<SW>;

 public:
  explicit StrandTaskStrategy(StrandTaskBudget budget) : budget_(budget) {
    const StrategyInfo patch = TS<TW>().info();  // constructing a task strategy touches no CUDA
    info_.name = patch.name;
    info_.description = "groups of 32 strands as tasks re-enqueued after each quantum of updates; " + patch.description;
    info_.section = patch.section;
    info_.side = patch.side;
    info_.priorities = patch.priorities;
    info_.knobs = {"task-quantum", "task-priority"};
  }
  const StrategyInfo& info() const override { return info_; }

  StrandRun<SW> run(const SW& w, const StrandRunSettings& s) override {
    validate_strand_settings(s);
    const Side side = info_.side;
    TW tw(w, side, s);
    TS<TW> strategy;
    if (Params* p = strategy.params()) p->apply(s.task_knobs);  // InputError naming a bad knob value
    const ScheduleSettings schedule;
    const uint32_t groups = tw.num_tasks();
    StrandRun<SW> r;
    r.timing.cuda_events = side == Side::Device;

    std::unique_ptr<GpuTimer> timer;
    const auto t0 = std::chrono::steady_clock::now();
    if (side == Side::Device) {
      timer = std::make_unique<GpuTimer>();
      timer->start();
    }
    tw.init();
    // With max_steps = 0 init leaves every group finished, and no strategy would count them finishing: the
    // megakernel in particular counts a task that does no work as a duplicate entry (its twin ends it).
    uint64_t finished = s.max_steps == 0 ? groups : 0, steps = 0, executions = 0;
    uint32_t idle = 0;
    while (finished < groups) {
      const uint64_t budget = budget_ == StrandTaskBudget::Unbounded
                                  ? std::numeric_limits<uint64_t>::max() / 4
                                  : (groups - finished) * static_cast<uint64_t>(tw.work_per_task());
      const StepStats st = strategy.step(tw, budget, schedule);
      finished += st.finished;
      executions += st.tasks;
      ++steps;
      // Every step that finds unfinished groups runs at least one of them; a few empty steps in a row
      // mean the strategy lost groups (a bug), not slowness.
      idle = st.tasks == 0 ? idle + 1 : 0;
      if (idle > 3)
        throw std::runtime_error(info_.name + " on strands: " + std::to_string(groups - finished) + " of " +
                                 std::to_string(groups) + " groups unfinished but no task ran in 4 steps");
    }
    if (timer) {
      timer->stop();
      r.timing.ms = timer->elapsed_ms();
    } else {
      r.timing.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    tw.collect(r);
    r.timing.launches = 0;  // the task strategies launch per step or wave; their count is not tracked here
    r.timing.notes = std::to_string(groups) + " groups of 32, quantum " + std::to_string(s.task_quantum) +
                     ", priority " + strand_task_priority_name(s.task_priority) + "; " + std::to_string(steps) +
                     (steps == 1 ? " step, " : " steps, ") + std::to_string(executions) + " task executions" +
                     (s.record_finish_order ? "; finish order recorded" : "");
    return r;
  }

 private:
  StrandTaskBudget budget_;
  StrategyInfo info_;
};

}  // namespace mv
