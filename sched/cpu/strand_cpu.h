// CPU strand strategies (Lehmann 2023): `sequential`, the speed-up baseline of §4.1.2, and
// `cpu-parallel`, Diderot's parallel CPU runtime as §2.3 describes it: strands are grouped into blocks,
// a scheduler (TBB's work stealing) hands blocks to idle threads, each thread runs one update of every
// active strand of its block, and all threads synchronise after every super-step.
//
// Both run exactly run_item's sequence of calls per strand (init once, update until not Active or
// max_steps), so their per-strand results equal the reference bit for bit. Timing: steady_clock wall
// time around init and the updates; the result arrays are allocated before, the image is made after.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <type_traits>
#include <utility>

#include "sched/strand_strategy.h"

namespace mv {

namespace strand_detail {
template <class W>
void allocate_run(StrandRun<W>& r, uint32_t n) {
  r.state.resize(n);
  r.status.assign(n, WorkStatus::Active);
  r.steps.assign(n, 0u);
}
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Strands [first, last) to completion (the sequential loop); finished strands are stamped into `ft`.
template <class W>
inline void run_range_body(const W& w, uint32_t first, uint32_t last, StrandRun<W>& r, uint32_t max_steps,
                           FinishTickets ft) {
  for (uint32_t i = first; i < last; ++i) {
    r.status[i] = run_item(w, i, r.state[i], r.steps[i], max_steps);
    if (r.status[i] != WorkStatus::Active) ft.stamp(i);
  }
}

/// One update of each strand in list[0, live); keeps the still-Active ones at the front, returns their count.
template <class W>
inline uint32_t update_list_body(const W& w, uint32_t* list, uint32_t live, StrandRun<W>& r, FinishTickets ft) {
  uint32_t kept = 0;
  for (uint32_t j = 0; j < live; ++j) {
    const uint32_t i = list[j];
    const WorkStatus st = w.update(r.state[i]);
    ++r.steps[i];
    r.status[i] = st;
    if (st == WorkStatus::Active)
      list[kept++] = i;
    else
      ft.stamp(i);
  }
  return kept;
}

// The CPU loops exist twice on x86-64: as compiled, and compiled for FMA (chosen at run time where the
// CPU has it). Workloads write fmaf for bitwise CPU/GPU agreement (render/strands/mandelbrot.h); without
// FMA enabled that is a libm call, with it one instruction — the same bits, the mandelbrot baseline
// about 3.5× faster. `flatten` inlines the workload's code into the FMA clone. A workload whose CPU results
// must equal code outside these loops bit for bit opts out (strand_cpu_fma below).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MV_STRAND_FMA_CLONES 1
template <class W>
__attribute__((target("fma"), flatten)) void run_range_fma(const W& w, uint32_t first, uint32_t last, StrandRun<W>& r,
                                                           uint32_t max_steps, FinishTickets ft) {
  run_range_body(w, first, last, r, max_steps, ft);
}
template <class W>
__attribute__((target("fma"), flatten)) uint32_t update_list_fma(const W& w, uint32_t* list, uint32_t live,
                                                                 StrandRun<W>& r, FinishTickets ft) {
  return update_list_body(w, list, live, r, ft);
}
inline bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}
#else
#define MV_STRAND_FMA_CLONES 0
#endif

/// Whether the CPU loops may run W's FMA clones: true unless W declares `static constexpr bool kCpuFma = false`.
/// A workload opts out when its CPU results must equal other host code bit for bit: the clones let the compiler
/// contract its `a * b + c` into FMAs, which the rest of the host code (built without FMA) does not do
/// (render/strands/path_tracer_strands.h: the strands must equal the patch tasks' film).
template <class W, class = void>
struct strand_cpu_fma : std::true_type {};
template <class W>
struct strand_cpu_fma<W, std::void_t<decltype(W::kCpuFma)>> : std::bool_constant<W::kCpuFma> {};

template <class W>
void run_range(const W& w, uint32_t first, uint32_t last, StrandRun<W>& r, uint32_t max_steps, FinishTickets ft) {
#if MV_STRAND_FMA_CLONES
  if constexpr (strand_cpu_fma<W>::value)
    if (cpu_has_fma()) return run_range_fma(w, first, last, r, max_steps, ft);
#endif
  run_range_body(w, first, last, r, max_steps, ft);
}
template <class W>
uint32_t update_list(const W& w, uint32_t* list, uint32_t live, StrandRun<W>& r, FinishTickets ft) {
#if MV_STRAND_FMA_CLONES
  if constexpr (strand_cpu_fma<W>::value)
    if (cpu_has_fma()) return update_list_fma(w, list, live, r, ft);
#endif
  return update_list_body(w, list, live, r, ft);
}

/// The most updates a strand of W takes, W::max_updates() where the workload declares it (render/strands/strand.h),
/// at most max_steps; 0 where unknown.
template <class W, class = void>
struct strand_max_updates {
  static uint64_t of(const W&, uint32_t) { return 0; }
};
template <class W>
struct strand_max_updates<W, std::void_t<decltype(std::declval<const W&>().max_updates())>> {
  static uint64_t of(const W& w, uint32_t max_steps) { return std::min<uint64_t>(w.max_updates(), max_steps); }
};

/// What every CPU run starts with: the settings checked, the result arrays of the N strands allocated and,
/// with s.record_finish_order, r.finish_order all kStrandNotFinished with tickets stamping into it through
/// `next` (null tickets otherwise), and the start of the timed region. Not movable: the tickets point at `next`.
template <class W>
struct HostRun {
  uint32_t n;
  StrandRun<W> r;
  unsigned int next = 0;
  FinishTickets ft;
  HostRun(const W& w, const StrandRunSettings& s) : n((validate_strand_settings(s), w.num_strands())) {
    allocate_run(r, n);
    if (s.record_finish_order) {
      r.finish_order.assign(n, kStrandNotFinished);
      ft = FinishTickets{r.finish_order.data(), &next};
    }
  }
  /// When the timed region began (start_clock; until then, at construction).
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void start_clock() { t0 = std::chrono::steady_clock::now(); }
  HostRun(const HostRun&) = delete;
  HostRun& operator=(const HostRun&) = delete;
};
}  // namespace strand_detail

/// The info records of Lehmann 2023's two CPU strategies, shared by their strand form (below) and their form
/// on the progressive film's patch tasks (sched/cpu/cpu_to_completion.h): one name, one algorithm.
inline const StrategyInfo& sequential_strategy_info() {
  static const StrategyInfo i{"sequential", "CPU, one thread: each item to completion in index order",
                              "Lehmann 2023 §4.1.2 (baseline)", Side::Host};
  return i;
}
inline const StrategyInfo& cpu_parallel_strategy_info() {
  static const StrategyInfo i{"cpu-parallel",
                              "CPU, all cores (TBB): one update per active item per super-step, blocks of items per "
                              "task, a barrier after each super-step",
                              "Lehmann 2023 §2.3 (Diderot's parallel runtime)", Side::Host, false, {"cpu-block"}};
  return i;
}

/// The frame of the CPU strand strategies: the info record Info(), the settings checked and the result arrays
/// allocated (HostRun), then `execute`, which starts the wall clock (HostRun::start_clock) once its own
/// allocations are made; the run's time is taken when it returns.
template <class W, const StrategyInfo& (*Info)()>
class HostStrandStrategy : public StrandStrategy<W> {
 public:
  const StrategyInfo& info() const final { return Info(); }
  StrandRun<W> run(const W& w, const StrandRunSettings& s) final {
    strand_detail::HostRun<W> h(w, s);
    execute(w, s, h);
    h.r.timing.ms = strand_detail::ms_since(h.t0);
    return std::move(h.r);
  }

 protected:
  virtual void execute(const W& w, const StrandRunSettings& s, strand_detail::HostRun<W>& h) = 0;
};

/// `sequential`: one CPU thread runs strand 0, 1, …, N−1 to completion with run_item.
template <class W>
class SequentialStrands final : public HostStrandStrategy<W, sequential_strategy_info> {
  void execute(const W& w, const StrandRunSettings& s, strand_detail::HostRun<W>& h) override {
    h.start_clock();
    constexpr uint32_t kProgressChunk = 4096;
    for (uint32_t first = 0; first < h.n; first += kProgressChunk) {
      const uint32_t last = h.n - first < kProgressChunk ? h.n : first + kProgressChunk;
      strand_detail::run_range(w, first, last, h.r, s.max_steps, h.ft);
      if (s.on_progress) s.on_progress(last, h.n);
    }
  }
};

/// `cpu-parallel`: BSP super-steps over blocks of `cpu_block` consecutive strands (TBB parallel_for, one
/// block per task). Each block keeps the indices of its active strands, compacted after every update,
/// and blocks without active strands leave the block list, so a super-step costs what its active
/// strands cost.
template <class W>
class CpuParallelStrands final : public HostStrandStrategy<W, cpu_parallel_strategy_info> {
  void execute(const W& w, const StrandRunSettings& s, strand_detail::HostRun<W>& h) override {
    const uint32_t n = h.n;
    StrandRun<W>& r = h.r;
    const FinishTickets ft = h.ft;
    const uint32_t block = s.cpu_block;
    const uint32_t nblocks = static_cast<uint32_t>((static_cast<uint64_t>(n) + block - 1) / block);
    std::vector<uint32_t> active(n), live(nblocks), blocks(nblocks);
    std::iota(blocks.begin(), blocks.end(), 0u);

    h.start_clock();
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, nblocks, 1), [&](const tbb::blocked_range<uint32_t>& br) {
      for (uint32_t b = br.begin(); b != br.end(); ++b) {
        const uint64_t first64 = static_cast<uint64_t>(b) * block;
        const uint32_t first = static_cast<uint32_t>(first64),
                       last = static_cast<uint32_t>(std::min<uint64_t>(n, first64 + block));
        for (uint32_t i = first; i < last; ++i) {
          r.state[i] = w.init(i);
          active[i] = i;
        }
        live[b] = last - first;
      }
    });
    // Progress, only with s.on_progress (the timed bench passes none: then a block costs one more test).
    // Where W bounds a strand's updates by B (strand_max_updates), the work is n · B updates, a finished strand
    // counting B: after k super-steps, finished · B + active · k, so it moves while every strand is still
    // active (as when all finish together); else the strands finished. Reported after every super-step, and
    // within a long one every 0.25 s from the calling thread as its blocks finish (a fraction of the blocks).
    const bool report = static_cast<bool>(s.on_progress);
    const uint64_t bound = report ? strand_detail::strand_max_updates<W>::of(w, s.max_steps) : 0;
    const uint64_t total = bound ? static_cast<uint64_t>(n) * bound : n;
    uint64_t finished = 0;  // at the start of the super-step
    std::atomic<uint64_t> blocks_done{0}, finished_in_step{0};
    const std::thread::id caller = std::this_thread::get_id();
    auto last_report = std::chrono::steady_clock::now();
    // Work done after k super-steps and `block_fraction` of the blocks of super-step k + 1.
    auto done_within = [&](uint64_t k, double block_fraction) {
      if (!bound) return finished + finished_in_step.load(std::memory_order_relaxed);
      const uint64_t active_now = n - finished;
      return finished * bound + active_now * k + static_cast<uint64_t>(block_fraction * static_cast<double>(active_now));
    };
    uint32_t super_steps = 0;
    while (!blocks.empty() && super_steps < s.max_steps) {
      const double step_blocks = static_cast<double>(blocks.size());
      tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<size_t>& br) {
        for (size_t k = br.begin(); k != br.end(); ++k) {
          const uint32_t b = blocks[k];
          uint32_t* list = active.data() + static_cast<size_t>(b) * block;
          const uint32_t kept = strand_detail::update_list(w, list, live[b], r, ft);
          if (report) {
            finished_in_step.fetch_add(live[b] - kept, std::memory_order_relaxed);
            const uint64_t d = blocks_done.fetch_add(1, std::memory_order_relaxed) + 1;
            const auto now = std::chrono::steady_clock::now();
            if (std::this_thread::get_id() == caller && now - last_report >= std::chrono::milliseconds(250)) {
              last_report = now;
              s.on_progress(std::min(done_within(super_steps, static_cast<double>(d) / step_blocks), total - 1), total);
            }
          }
          live[b] = kept;
        }
      });  // the barrier of the super-step
      ++super_steps;
      blocks.erase(std::remove_if(blocks.begin(), blocks.end(), [&](uint32_t b) { return live[b] == 0; }),
                   blocks.end());
      if (report) {
        uint64_t active_now = 0;
        for (uint32_t b : blocks) active_now += live[b];
        finished = n - active_now;
        finished_in_step = 0;
        blocks_done = 0;
        s.on_progress(std::min(done_within(super_steps, 0.0), total), total);
        last_report = std::chrono::steady_clock::now();
      }
    }
    r.timing.super_steps = super_steps;
  }
};

}  // namespace mv
