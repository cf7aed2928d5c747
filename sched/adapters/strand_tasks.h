// Strands as patch-style tasks: how the patch-task strategies (sequential-priority, uniform,
// sorted-waves, megakernel: sched/strategy.h's Workload concept) run a strand program (Lehmann 2023 §2).
//
// Task t is the group of strands [32·t, min(N, 32·t + 32)) (kStrandTaskGroup: one warp's worth, so the
// GPU strategies' warp-per-task mapping gives lane l strand 32·t + l). One execution of a task gives each
// of its still-active strands up to Q = task_quantum updates; then the task re-enqueues with its new
// priority (Kerbl 2012 §6.3: "a task re-enqueues itself with its new priority until it is done"), and it
// is finished once none of its strands is active. A strand therefore sees exactly run_item's sequence
// of calls (init once, update until not Active or max_steps), whatever the strategy and the order of
// tasks: only the interleaving across strands changes, so images and per-strand step counts equal the
// `sequential` strand strategy's (bit for bit where the workload's arithmetic is, e.g. mandelbrot).
//
// Priority after an execution (StrandTaskPriority): with A the group's strands still active and a_i the
// updates strand i has taken so far, the remaining-work estimate is R = Σ_{i∈A} a_i (age predicts the
// remaining steps of heavy-tailed step distributions). Fifo: 0. MostRemaining: R. LeastRemaining: −R.
// Groups not yet run have kUnsampledPriority (each group runs once before any estimate is trusted);
// finished groups kFinishedPriority. "Paths" in the strategies' statistics count strand updates here.
//
// Units: one "path" = one strand update; work_per_task = 32·Q. Memory: the strand arrays (state,
// status, steps; N entries each) and per group a done flag and a priority, all on one side (host or
// device), owned by StrandTaskWorkload (sched/adapters/strand_task_strategy.cuh).
#pragma once

#include <cstdint>

#include "base/common.h"
#include "base/work.h"
#include "sched/strand_strategy.h"

namespace mv {

/// The task view of a strand program: trivially copyable, pointers all on one side.
template <class SW>
struct StrandTaskView {
  using State = typename SW::State;

  SW workload;                       ///< the strand program (its data on the view's side)
  State* state = nullptr;            ///< per strand
  WorkStatus* status = nullptr;    ///< per strand
  uint32_t* steps = nullptr;         ///< per strand: updates so far
  uint8_t* done = nullptr;           ///< per group: 1 once no strand of the group is active
  float* priority = nullptr;         ///< per group, larger = more urgent (sched/strategy.h)
  WorkCounters* counters = nullptr;  ///< device side only (may be null on the host)
  uint32_t strands = 0;              ///< N
  uint32_t quantum = 16;             ///< Q, updates per strand per execution, ≥ 1
  uint32_t max_steps = 0xffffffffu;  ///< per-strand bound (run_item's)
  StrandTaskPriority rule = StrandTaskPriority::MostRemaining;
  FinishTickets finish;              ///< null unless the finish order is recorded

  MV_HD uint32_t num_tasks() const { return (strands + kStrandTaskGroup - 1) / kStrandTaskGroup; }
  MV_HD bool finished(uint32_t task) const { return done[task] != 0; }

  /// Up to Q updates of strand i if it is still active. Returns the updates taken; `age` receives the
  /// strand's total updates and `active` whether it can still be updated afterwards.
  MV_HD MV_INLINE uint32_t advance(uint32_t i, uint32_t& age, bool& active) const {
    age = 0;
    active = false;
    if (i >= strands || status[i] != WorkStatus::Active || steps[i] >= max_steps) return 0;
    State s = state[i];
    uint32_t n = steps[i], taken = 0;
    WorkStatus st = WorkStatus::Active;
    while (st == WorkStatus::Active && taken < quantum && n < max_steps) {
      st = workload.update(s);
      ++n;
      ++taken;
    }
    state[i] = s;
    status[i] = st;
    steps[i] = n;
    if (st != WorkStatus::Active) finish.stamp(i);
    age = n;
    active = st == WorkStatus::Active && n < max_steps;
    return taken;
  }

  /// The group's priority from its active strands' count and summed age (see the header comment).
  MV_HD MV_INLINE float group_priority(uint32_t active, float age_sum) const {
    if (active == 0) return kFinishedPriority;
    switch (rule) {
      case StrandTaskPriority::Fifo: return 0.f;
      case StrandTaskPriority::MostRemaining: return age_sum;
      case StrandTaskPriority::LeastRemaining: return -age_sum;
    }
    return 0.f;
  }

  /// Executes `task` on the calling thread. Returns the strand updates taken (0 if already finished).
  MV_HD uint32_t run_task(uint32_t task) const {
    if (done[task]) return 0;
    uint32_t updates = 0, active = 0;
    float age_sum = 0.f;
    const uint32_t first = task * kStrandTaskGroup;
    for (uint32_t l = 0; l < kStrandTaskGroup; ++l) {
      uint32_t age = 0;
      bool still = false;
      updates += advance(first + l, age, still);
      if (still) {
        ++active;
        age_sum += static_cast<float>(age);
      }
    }
    priority[task] = group_priority(active, age_sum);
    done[task] = active == 0 ? 1 : 0;
    return updates;
  }

#if defined(__CUDACC__)
  /// Executes `task` with the calling (full, converged) warp: lane l runs strand 32·task + l. Returns the
  /// updates taken, in every lane.
  __device__ uint32_t run_task_warp(uint32_t task) const {
    constexpr unsigned kFull = 0xffffffffu;
    if (done[task]) return 0;  // the same value in every lane
    const uint32_t lane = threadIdx.x & 31u;
    uint32_t age = 0;
    bool still = false;
    uint32_t updates = advance(task * kStrandTaskGroup + lane, age, still);
    float age_sum = still ? static_cast<float>(age) : 0.f;
    // The lanes' ages are summed in a fixed tree order; the host loop sums in lane order, so the two
    // priorities can differ in the last bits (order only, never results).
    for (int off = 16; off > 0; off >>= 1) {
      updates += __shfl_xor_sync(kFull, updates, off);
      age_sum += __shfl_xor_sync(kFull, age_sum, off);
    }
    const uint32_t active = static_cast<uint32_t>(__popc(__ballot_sync(kFull, still)));
    if (lane == 0) {
      priority[task] = group_priority(active, age_sum);
      done[task] = active == 0 ? 1 : 0;
      if (counters) {
        atomicAdd(&counters->work, static_cast<unsigned long long>(updates));
        atomicAdd(&counters->tasks, 1u);
        if (active == 0) atomicAdd(&counters->finished, 1u);
      }
    }
    __syncwarp();
    return updates;
  }
#endif
};

}  // namespace mv
