// GPU strategy `megakernel`: the priority megakernel of Kerbl 2012 (§3–§5, §6.3), with three queue designs
// (MegakernelSettings::queue):
//  - `kerbl`: the paper's design: one segmented ring, sorted by controller blocks.
//  - `buckets` (default): K rings as a calendar queue over priority bands behind one ring of urgent tasks
//    (sched/megakernel/priority_table.h, claim_ring_warp in sched/megakernel/work_queue.cuh); workers serve the most urgent
//    non-empty band, so urgent tasks run again before the others' next turn. Block 0 only keeps house.
//  - `quanta`: one FIFO ring; each visit runs a priority-proportional number of sample batches drawn
//    from the task's credit and the rank of its priority (sched/megakernel/priority_table.h); block 0 keeps the
//    histogram's rank table current.
// Kerbl's ring turns over faster on an H100 than controllers can merge it, so under `kerbl` every live
// task still runs once per turn-over and the sample allocation stays uniform (docs/perf.md); the other two
// change where the samples go at the rate the GPU consumes tasks.
//
// This file holds the host side: MegakernelStrategy owns the queue's buffers, rebuilds the queue and
// launches one slice per step. The device side is in sched/megakernel/megakernel_device.cuh (the persistent
// kernel and the rebuild kernels), sched/megakernel/megakernel_controller.cuh (the controller blocks, §3.1,
// §4.3, §5) and sched/megakernel/megakernel_workers.cuh (the worker warps, §3.1, §5.3.1, §6.3).
//
// A persistent kernel runs one slice per step. Its grid holds as many blocks as can be resident at once
// (occupancy × SMs, launched cooperatively so that co-residency is guaranteed or the launch fails):
// blocks 0 … P−1 control, every other block's warps work. The kernel's block size is one uniform setting
// (ScheduleSettings::block_size): a controller is one block of that size (§6.1: the controller's size is
// the kernel's block size).
//
// Slices (a step): the queue, its counters and the per-task metadata live in device memory across
// steps. A slice ends when (a) its budget of dequeues is used up (workers stop fetching), (b) the host
// sets the stop flag in mapped pinned memory (request_stop(), or the host's slice time limit), or (c)
// every task is finished; in-flight tasks complete and re-enqueue first, so the next slice continues
// exactly where this one stopped. invalidate() drops the queue; the next step rebuilds it from all
// unfinished tasks in descending order of their current priorities (a CUB radix sort; under `buckets` one
// sort by ring, then priority), so a rebuilt queue starts fully sorted and its full segments are flagged
// sorted. The rebuild's launches are captured once as a CUDA graph and replayed (base/cuda_graph.h).
//
// Watchdog: every busy-wait is bounded by a clock64 budget (MegakernelSettings::watchdog_seconds at the
// device's clock rate) and a global abort flag; a timeout records an error in device memory, all blocks
// exit, and step() throws CudaError("megakernel watchdog: ...") and rebuilds the queue next time.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/cuda_graph.h"
#include "sched/gpu/gpu_common.cuh"
#include "sched/megakernel/megakernel_device.cuh"
#include "sched/megakernel/megakernel_probe.h"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/megakernel/priority_table.h"
#include "sched/megakernel/score.h"
#include "sched/strategy.h"
#include "sched/megakernel/work_queue.cuh"

namespace mv {

namespace mk {

/// RAII int in mapped pinned host memory: the host writes it while a kernel reads it (stop requests).
class MappedFlag {
 public:
  MappedFlag() {
    MV_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(int), cudaHostAllocMapped));
    set(0);
    MV_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  ~MappedFlag() {
    if (host_) cudaFreeHost(host_);  // destructor path: errors cannot be reported here
  }
  MappedFlag(const MappedFlag&) = delete;
  MappedFlag& operator=(const MappedFlag&) = delete;
  void set(int v) { __atomic_store_n(host_, v, __ATOMIC_SEQ_CST); }
  int get() const { return __atomic_load_n(host_, __ATOMIC_SEQ_CST); }
  const int* device() const { return device_; }

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

}  // namespace mk

template <class W>
class MegakernelStrategy final : public Strategy<W>, public MegakernelControl, public MegakernelProbeSource {
  using View = typename W::View;

 public:
  /// Touches no CUDA: the registry constructs a probe instance on machines without a GPU.
  MegakernelStrategy() = default;
  /// With profiling on, writes the per-task file (see profile_begin).
  ~MegakernelStrategy() override { profile_write_tasks(); }
  const StrategyInfo& info() const override { return info_; }
  void invalidate() override { valid_ = false; }

  MegakernelSettings& settings() override { return settings_; }
  const MegakernelSettings& settings() const override { return settings_; }
  Params* params() override { return &params_; }
  const MegakernelStats& stats() const override { return stats_; }

  /// The last slice's execution order when record_order is on (else empty), entry i the i-th visit:
  /// its priority key, its task and its ticket in its ring (QueueDesign::Buckets: each ring counts its
  /// own tickets). order_score(recorded_keys()) is stats().order_score.
  const std::vector<float>& recorded_keys() const { return order_keys_; }
  const std::vector<uint32_t>& recorded_tasks() const { return order_tasks_; }
  const std::vector<unsigned long long>& recorded_tickets() const { return order_tickets_; }

  /// Graphs of the queue rebuild captured so far: one for as long as the inputs a rebuild bakes in (the
  /// workload's view and parameters, the queue's shape, the rebuild settings) stay the same.
  uint64_t rebuild_captures() const { return rebuild_graph_.captures(); }

  bool probe_queue(MegakernelQueueProbe& out) const override {
    if (!valid_ || rings_ < 3) return false;
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    const uint64_t cap = queue_.capacity();
    std::vector<mk::QueueControl> ctl(rings_);
    MV_CUDA_CHECK(cudaMemcpy(ctl.data(), ctl_.data(), sizeof(mk::QueueControl) * rings_, cudaMemcpyDeviceToHost));
    std::vector<float> key(cap * rings_);
    std::vector<uint32_t> task(cap * rings_);
    key_.download(key.data(), key.size());
    task_.download(task.data(), task.size());
    const uint32_t n = num_tasks_;
    out.rings = rings_;
    out.cur_band = ctl[0].cur_band;
    out.primary_ring.assign(n, MegakernelQueueProbe::kNoRing);
    out.primary_entries.assign(n, 0u);
    out.primary_key.assign(n, 0.f);
    out.secondary_entries.assign(n, 0u);
    out.lane_extra.assign(n, 0u);
    if (shared_) lane_extra_.download(out.lane_extra.data(), n);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    for (uint32_t k = 0; k < rings_; ++k)
      for (unsigned long long t = ctl[k].head; t < ctl[k].tail; ++t) {
        const size_t i = k * cap + (t & (cap - 1));
        const uint32_t e = task[i], id = entry_task(e);
        if (id >= n) continue;
        if (entry_is_secondary(e)) {
          ++out.secondary_entries[id];
        } else {
          ++out.primary_entries[id];
          out.primary_ring[id] = k;
          out.primary_key[id] = key[i];
        }
      }
    return true;
  }

  /// Asks the running slice to stop early (any thread; no effect when no slice runs). The slice ends
  /// cleanly: in-flight tasks complete and re-enqueue.
  void request_stop() {
    if (mk::MappedFlag* f = stop_flag_ptr_.load()) f->set(1);
  }

  StepStats step(W& w, uint64_t budget_work, const ScheduleSettings& s) override {
    settings_.validate();
    if (s.block_size < 32 || s.block_size > 1024 || s.block_size % 32)
      throw InputError("", "block_size", std::to_string(s.block_size) + " is not a multiple of 32 in [32, 1024]");
    configure(w.num_tasks(), s.block_size);
    View v = w.view(Side::Device);
    // The slice's busy time starts before a rebuild of the queue, as a GPU strategy's step times the task
    // list it builds (sched/gpu/gpu_strategies.cuh), so that a render from an empty film pays for its queue.
    GpuTimer timer;
    timer.start();
    if (!valid_) rebuild(w, v);
    if (live_ == 0) return StepStats{};

    const uint64_t per_task = w.work_per_task();
    const uint64_t budget_tasks = std::max<uint64_t>(1, (budget_work + per_task - 1) / per_task);
    mk::SliceParams sp;
    sp.budget = budget_tasks;
    sp.watchdog_cycles = static_cast<long long>(settings_.watchdog_seconds * clock_khz_ * 1000.0);
    sp.host_poll_cycles = static_cast<long long>(20e-6 * clock_khz_ * 1000.0);  // every ~20 µs
    sp.host_stop = stop_flag_->device();
    const bool kerbl = settings_.queue == QueueDesign::Kerbl;
    sp.controllers = kerbl && settings_.controller ? settings_.controllers : 1u;
    if (sp.controllers >= grid_)
      throw InputError("", "controllers",
                       std::to_string(sp.controllers) + " controller blocks leave no worker in a grid of " +
                           std::to_string(grid_) + " blocks");
    // The grid this slice launches: every resident block, or the controllers and worker_blocks workers.
    launch_grid_ = settings_.worker_blocks > 0 ? std::min<uint32_t>(grid_, sp.controllers + settings_.worker_blocks)
                                               : grid_;
    worker_warps_ = (launch_grid_ - sp.controllers) * (block_ / 32);
    sp.worker_warps = worker_warps_;
    sp.controller = kerbl && settings_.controller;
    sp.design = static_cast<int>(settings_.queue);
    sp.age_period = settings_.age_period;
    sp.band_repeat = settings_.band_repeat;
    sp.band_slack = settings_.band_slack;
    sp.stay_leading = settings_.stay_leading;
    sp.patch_lanes = shared_ ? settings_.patch_lanes : 1u;
    sp.lane_extra = lane_extra_.data();
    sp.lane_extra_sum = lane_extra_sum_.data();
    sp.lane_spawns = lane_spawns_.data();
    sp.lane_extra_cap = lane_extra_cap_;
    sp.lane_lock = lane_lock_.data();
    sp.far_drain_batches = shared_ ? static_cast<unsigned long long>(settings_.far_drain) * worker_warps_ : 0ull;
    sp.quantum_max = settings_.quantum_max;
    sp.hist = hist_.data();
    sp.bin_quantum = bin_quantum_.data();
    sp.credit = credit_.data();
    sp.table_cycles = static_cast<long long>(2e-6 * clock_khz_ * 1000.0);  // every ~2 µs
    sp.time_management = settings_.time_management;
    sp.collect_metadata = settings_.collect_metadata;
    sp.wave_aware = settings_.wave_aware_buffer;
    sp.pull_forward = settings_.pull_forward;
    sp.pull_distance = settings_.pull_distance;
    sp.static_task_cycles = settings_.static_task_cycles;
    sp.constant_segment_cycles = settings_.constant_segment_cycles;
    sp.buffer_multiplier = settings_.buffer_multiplier;
    if (settings_.record_order) {
      record_.resize(settings_.record_capacity);
      record_task_.resize(settings_.record_capacity);
      record_ticket_.resize(settings_.record_capacity);
      sp.record.key = record_.data();
      sp.record.task = record_task_.data();
      sp.record.ticket = record_ticket_.data();
      sp.record.cap = settings_.record_capacity;
      sp.record.base = rings_ == 1 ? head_ : 0;
    }

    sp.prof = profile_begin(w.num_tasks());
    WorkCounters* counters = w.device_counters();
    MV_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(WorkCounters)));
    mk::begin_slice_kernel<<<1, 1>>>(ctl_.data());
    MV_CUDA_CHECK_LAUNCH();
    stop_flag_->set(0);
    mk::QueueView q = queue_;
    void* args[] = {&v, &q, &sp};
    const cudaError_t err = cudaLaunchCooperativeKernel(kernel_,
                                                        dim3(launch_grid_), dim3(block_), args, smem_bytes_, nullptr);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
      (void)cudaGetLastError();
      valid_ = false;
      throw CudaError("megakernel: the persistent grid of " + std::to_string(launch_grid_) + " blocks of " +
                      std::to_string(block_) + " threads cannot be co-resident on this GPU (another context, "
                      "MPS or a smaller partition?); lower blocks_per_sm");
    }
    MV_CUDA_CHECK(err);
    timer.stop();
    const bool stopped_by_host = wait_for_slice(timer);
    StepStats st;
    st.busy_ms = timer.elapsed_ms();
    WorkCounters tc;
    MV_CUDA_CHECK(cudaMemcpy(&tc, counters, sizeof(tc), cudaMemcpyDeviceToHost));
    std::vector<mk::QueueControl> rings(rings_);
    MV_CUDA_CHECK(cudaMemcpy(rings.data(), ctl_.data(), sizeof(mk::QueueControl) * rings_, cudaMemcpyDeviceToHost));
    mk::QueueControl c = rings[0];  // the shared words; head, tail and avail summed over the rings below
    for (uint32_t k = 1; k < rings_; ++k) {
      c.head += rings[k].head;
      c.tail += rings[k].tail;
      c.avail += rings[k].avail;
    }
    // patch_lanes > 1: the queue also holds the tasks' secondary tokens (sched/megakernel/lane_tokens.h).
    int extra = 0;
    unsigned long long spawns = 0;
    if (shared_) {
      MV_CUDA_CHECK(cudaMemcpy(&extra, lane_extra_sum_.data(), sizeof(int), cudaMemcpyDeviceToHost));
      MV_CUDA_CHECK(cudaMemcpy(&spawns, lane_spawns_.data(), sizeof(spawns), cudaMemcpyDeviceToHost));
    }
    if (c.error != mk::kErrNone) {
      valid_ = false;  // the queue may be inconsistent: rebuild from the film at the next step
      throw CudaError("megakernel watchdog: " + std::string(mk::megakernel_error_name(c.error)) + " (block " +
                      std::to_string(c.error_block) + ", ticket/segment " + std::to_string(c.error_detail) +
                      ", head " + std::to_string(c.head) + ", tail " + std::to_string(c.tail) + ", live " +
                      std::to_string(c.live) + ")");
    }
    // At the end of a slice every dequeued task has finished or re-entered the queue.
    if (c.tail - c.head != static_cast<unsigned long long>(c.live) + extra || c.avail != c.live + extra ||
        c.live < 0 || extra < 0) {
      valid_ = false;
      throw CudaError("megakernel: queue invariant broken after a slice: head " + std::to_string(c.head) + ", tail " +
                      std::to_string(c.tail) + ", avail " + std::to_string(c.avail) + ", live " +
                      std::to_string(c.live) + ", secondary tokens " + std::to_string(extra));
    }
    st.work = tc.work;
    st.tasks = tc.tasks;
    st.finished = tc.finished;
    profile_end(st);
    update_stats(c, st, stopped_by_host);
    stats_.lane_spawns = spawns;
    head_ = c.head;
    live_ = static_cast<uint32_t>(c.live);
    return st;
  }

 private:
  // ---- Measurement (development): with the environment variable MEGAVIEW_MK_PROFILE=PREFIX, the `buckets`
  // design runs its measured kernel variant (mk::WorkerProfile) and each strategy instance (numbered in
  // construction order from 0, per process) writes PREFIX-<instance>-slices.csv (one row per slice: busy
  // time, the workers' cycles by activity, the spread of their start and exit times) and, when destroyed,
  // PREFIX-<instance>-tasks.csv (per task: executions and their summed cycles since the instance's start).
  static const char* profile_prefix() {
    const char* p = std::getenv("MEGAVIEW_MK_PROFILE");
    return p && *p ? p : nullptr;
  }
  bool profile_on() const { return profile_prefix() != nullptr && settings_.queue == QueueDesign::Buckets; }
  std::string profile_path(const char* what) const {
    return std::string(profile_prefix()) + "-" + std::to_string(profile_id_) + "-" + what + ".csv";
  }
  mk::WorkerProfile* profile_begin(uint32_t num_tasks) {
    if (!profile_on()) return nullptr;
    if (profile_id_ < 0) {
      static std::atomic<int> next{0};
      profile_id_ = next++;
    }
    if (prof_task_cycles_.size() != num_tasks) {
      prof_task_cycles_.resize(num_tasks);
      prof_task_execs_.resize(num_tasks);
      prof_task_cycles_.zero();
      prof_task_execs_.zero();
    }
    mk::WorkerProfile h{};
    h.first_start = h.first_exit = ~0ull;
    h.task_cycles = prof_task_cycles_.data();
    h.task_execs = prof_task_execs_.data();
    prof_.upload(&h, 1);
    return prof_.data();
  }
  void profile_end(const StepStats& st) {
    if (!profile_on()) return;
    mk::WorkerProfile h{};
    prof_.download(&h, 1);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    const std::string path = profile_path("slices");
    FILE* f = std::fopen(path.c_str(), prof_slices_++ == 0 ? "w" : "a");
    if (!f) return;
    if (prof_slices_ == 1)
      std::fprintf(f, "slice,busy_ms,work,tasks,clock_khz,warps,life_cycles,exec_cycles,claim_cycles,execs,"
                      "start_spread_us,exit_spread_us,span_us,take_cycles,claims,rounds,lost,empty\n");
    const double us = 1e-3;
    std::fprintf(f, "%d,%.4f,%llu,%llu,%d,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.2f,%llu,%llu,%llu,%llu,%llu\n",
                 prof_slices_ - 1, st.busy_ms,
                 static_cast<unsigned long long>(st.work), static_cast<unsigned long long>(st.tasks), clock_khz_,
                 h.warps, h.life_cycles, h.exec_cycles, h.claim_cycles, h.execs,
                 (h.last_start - h.first_start) * us, (h.last_exit - h.first_exit) * us,
                 (h.last_exit - h.first_start) * us, h.take_cycles, h.claims, h.rounds, h.lost, h.empty);
    std::fclose(f);
  }
  void profile_write_tasks() noexcept {
    if (profile_id_ < 0 || prof_task_cycles_.size() == 0) return;
    const size_t n = prof_task_cycles_.size();
    std::vector<unsigned long long> c(n);
    std::vector<unsigned int> e(n);
    if (cudaMemcpy(c.data(), prof_task_cycles_.data(), n * sizeof(c[0]), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(e.data(), prof_task_execs_.data(), n * sizeof(e[0]), cudaMemcpyDeviceToHost) != cudaSuccess)
      return;
    FILE* f = std::fopen(profile_path("tasks").c_str(), "w");
    if (!f) return;
    std::fprintf(f, "task,execs,cycles\n");
    for (size_t i = 0; i < n; ++i) std::fprintf(f, "%zu,%u,%llu\n", i, e[i], c[i]);
    std::fclose(f);
  }

  /// Device properties, allocations and the launch configuration for (num_tasks, S, block size).
  void configure(uint32_t num_tasks, uint32_t block) {
    if (clock_khz_ == 0) {
      int dev = 0, coop = 0;
      MV_CUDA_CHECK(cudaGetDevice(&dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, dev));
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
      if (!coop) throw CudaError("megakernel: this GPU does not support cooperative launches (co-residency)");
      if (clock_khz_ <= 0) clock_khz_ = 1000000;  // 1 GHz if the driver reports nothing
      stop_flag_ = std::make_unique<mk::MappedFlag>();
      stop_flag_ptr_.store(stop_flag_.get());
    }
    const uint32_t S = settings_.segment_size;
    const uint32_t rings = settings_.queue == QueueDesign::Buckets ? settings_.buckets : 1u;
    // The Buckets kernel variant (megakernel_entry): stay_leading and patch_lanes pick a compile-time variant
    // of the worker loop, so the default kernel carries neither.
    const bool buckets = settings_.queue == QueueDesign::Buckets, profiled = profile_on();
    const bool shared = buckets && !profiled && settings_.patch_lanes > 1;
    const bool stay = buckets && !profiled && settings_.stay_leading;
    const bool same_queue = num_tasks == num_tasks_ && S == segment_size_ && block == block_ &&
                            settings_.blocks_per_sm == blocks_per_sm_set_ && settings_.queue == design_ &&
                            rings == rings_ && shared == shared_;
    if (same_queue && stay == stay_leading_) return;
    // Resolve the kernel first: an InputError (patch_lanes on a workload that does not allow it) leaves the
    // strategy as it was.
    const void* kernel = mk::megakernel_entry<View>(settings_.queue, profiled, stay, shared ? settings_.patch_lanes : 1u);
    stay_leading_ = stay;
    if (same_queue) {  // only the stay_leading variant changed: the queue stays, the next slice runs the new kernel
      select_kernel(kernel);
      return;
    }
    valid_ = false;
    shared_ = shared;  // switching between 1 and more patch lanes rebuilds: the queue may hold secondary tokens
    design_ = settings_.queue;
    rings_ = rings;
    num_tasks_ = num_tasks;
    segment_size_ = S;
    block_ = block;
    blocks_per_sm_set_ = settings_.blocks_per_sm;
    // Capacity C: a power of two ≥ num_tasks + 2S and ≥ 4S. Since tail − head ≤ num_tasks ≤ C − 2S, the
    // last full segment is at most R − 2 segments behind the head's (R = C / S), so the pair the
    // controller locks never shares a segment slot (state word) with the segment in execution.
    // patch_lanes > 1: room for as many extra entries as there are tasks (SliceParams::lane_extra_cap).
    uint64_t cap = 4ull * S;
    while (cap < uint64_t(num_tasks) * (shared ? 2u : 1u) + 2ull * S) cap <<= 1;
    if (cap > (1ull << 31)) throw InputError("", "tasks", "too many tasks for the megakernel queue");
    lane_extra_cap_ = shared ? static_cast<int>(std::min<uint64_t>(cap - num_tasks - 2ull * S, 1u << 30)) : 0;
    uint32_t cap_log2 = 0, s_log2 = 0;
    while ((1ull << cap_log2) < cap) ++cap_log2;
    while ((1u << s_log2) < S) ++s_log2;
    // One ring, or K of the same shape back to back (QueueView::ring).
    key_.resize(cap * rings);
    task_.resize(cap * rings);
    seq_.resize(cap * rings);
    const uint32_t segs = static_cast<uint32_t>(cap >> s_log2);
    seg_state_.resize(size_t(segs) * rings);
    seg_sorted_.resize(size_t(segs) * rings);
    seg_estimate_.resize(size_t(segs) * rings);
    task_min_.resize(num_tasks);
    ctl_.resize(rings);
    hist_.resize(kPriorityBins);
    bin_quantum_.resize(kPriorityBins);
    credit_.resize(num_tasks);
    lane_extra_.resize(shared ? num_tasks : 0);
    lane_extra_sum_.resize(shared ? 1 : 0);
    lane_spawns_.resize(shared ? 1 : 0);
    lane_lock_.resize(shared ? num_tasks : 0);
    queue_ = mk::QueueView{key_.data(),        task_.data(),     seq_.data(), seg_state_.data(),
                           seg_sorted_.data(), seg_estimate_.data(), task_min_.data(), ctl_.data(),
                           cap_log2,           s_log2,           num_tasks};
    queue_.main = ctl_.data();
    queue_.rings = rings;
    queue_.locking = design_ == QueueDesign::Kerbl;
    // Grid: everything that fits at once (co-residency is what lets warps spin on each other).
    smem_bytes_ = design_ == QueueDesign::Kerbl ? size_t(2) * S * (sizeof(float) + sizeof(uint32_t)) : 0;
    select_kernel(kernel);
  }

  /// Makes `kernel` the persistent kernel: its registers, the resident blocks per SM and the grid (block_,
  /// smem_bytes_ and the blocks_per_sm setting as configured).
  void select_kernel(const void* kernel) {
    const uint32_t block = block_;
    kernel_ = kernel;
    cudaFuncAttributes fa{};
    MV_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    registers_ = static_cast<uint32_t>(fa.numRegs);
    int per_sm = 0;
    MV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block), smem_bytes_));
    if (per_sm <= 0)
      throw CudaError("megakernel: a block of " + std::to_string(block) + " threads does not fit an SM (" +
                      std::to_string(fa.numRegs) + " registers per thread, " + std::to_string(smem_bytes_) +
                      " bytes of shared memory); lower block_size");
    if (settings_.blocks_per_sm > 0) per_sm = std::min<int>(per_sm, static_cast<int>(settings_.blocks_per_sm));
    blocks_per_sm_ = static_cast<uint32_t>(per_sm);
    grid_ = static_cast<uint32_t>(per_sm * sm_count_);
    if (grid_ < 2) throw CudaError("megakernel: needs at least two co-resident blocks (controller + a worker)");
  }

  /// Rebuilds the queue from all unfinished tasks in descending order of their current priorities: the
  /// launches of enqueue_rebuild, replayed as one captured graph (captured anew when an input it bakes in
  /// changes), so that a rebuild costs the host one launch instead of some twenty.
  void rebuild(W& w, const View& v) {
    const uint32_t n = num_tasks_;
    if (iota_.size() != n) {
      device_iota(iota_, n);
      sorted_keys_.resize(n);
      order_.resize(n);
      list_.resize(n);
      flags_.resize(n);
      count_.resize(1);
      size_t a = 0, b = 0;
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, a, static_cast<const float*>(nullptr),
                                                              sorted_keys_.data(), iota_.data(), order_.data(),
                                                              static_cast<int>(n)));
      MV_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, b, order_.data(), flags_.data(), list_.data(),
                                               count_.data(), static_cast<int>(n)));
      // Buckets: the tasks sorted by ring (every design sizes it: the design may change at the same n).
      ring_list_.resize(n);
      ring_key_.resize(n);
      ring_key_sorted_.resize(n);
      size_t c = 0;
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, c, ring_key_.data(), ring_key_sorted_.data(),
                                                    iota_.data(), ring_list_.data(), static_cast<int>(n), 0,
                                                    mk::kRingKeyShift + kRingKeyBits));
      temp_.resize(std::max<size_t>({a, b, c, 1}));
    }
    ring_count_.resize(rings_);
    // Everything the graph bakes in: the view, the settings it reads, the buffers' addresses and sizes.
    rebuild_key_.clear();
    rebuild_key_.add(v).add(queue_).add(n).add(rings_).add(shared_).add(design_);
    rebuild_key_.add(settings_.rebuild_sorted).add(settings_.quantum_max);
    const auto add_buffers = [this](const auto&... b) { (rebuild_key_.add(b.data()).add(b.size()), ...); };
    add_buffers(iota_, order_, list_, flags_, count_, sorted_keys_, temp_, ring_list_, ring_key_, ring_key_sorted_,
                ring_count_, ctl_, task_min_, hist_, credit_, bin_quantum_, lane_extra_, lane_extra_sum_, lane_spawns_,
                lane_lock_);
    rebuild_graph_.launch(rebuild_key_, [&](cudaStream_t s) { enqueue_rebuild(v, s); });
    int live = 0;
    if (rings_ == 1) {
      MV_CUDA_CHECK(cudaMemcpy(&live, count_.data(), sizeof(int), cudaMemcpyDeviceToHost));
    } else {
      // Not read back, which would wait for the rebuild inside the slice's busy time: the slice's end reads
      // the real count, and a slice over an empty queue ends at once (its workers see live = 0).
      live = static_cast<int>(n);
    }
    live_ = static_cast<uint32_t>(live);
    head_ = 0;
    valid_ = true;
    stats_ = MegakernelStats{};
    (void)w;
  }

  /// The rebuild's device work, enqueued on `s` (sizes from the block at the top of rebuild).
  void enqueue_rebuild(const View& v, cudaStream_t s) {
    const uint32_t n = num_tasks_;
    const uint32_t ctl_words = rings_ * static_cast<uint32_t>(sizeof(mk::QueueControl) / sizeof(uint32_t));
    mk::RebuildReset r;
    r.ctl = ctl_.data();
    r.rings = rings_;
    r.ring_counts = rings_ > 1 ? ring_count_.data() : nullptr;
    // §5.3: measurements start over (durations change with the camera, paths per pixel, ...).
    r.task_min = task_min_.data();
    r.n = n;
    if (shared_) {  // the rebuilt queue holds each live task's primary token, no secondary one
      r.lane_extra = lane_extra_.data();
      r.lane_extra_sum = lane_extra_sum_.data();
      r.lane_spawns = lane_spawns_.data();
      r.lane_lock = lane_lock_.data();
    }
    mk::reset_rebuild_kernel<<<(std::max(n, ctl_words) + 255) / 256, 256, 0, s>>>(r);
    MV_CUDA_CHECK_LAUNCH();
    size_t bytes = temp_.size();
    if (rings_ > 1) {
      // Buckets: each unfinished task enters the ring of its priority's band (bucket_ring, the window opening
      // at the most urgent ranked band), each ring in descending priority when rebuild_sorted (else in task
      // order): one stable radix sort by (ring, priority), then every ring in one launch. A fixed number of
      // launches, whatever the number of rings.
      const uint32_t blocks = (n + 255) / 256;
      mk::first_band_kernel<<<blocks, 256, 0, s>>>(v, ctl_.data(), n);
      MV_CUDA_CHECK_LAUNCH();
      mk::ring_keys_kernel<<<blocks, 256, 0, s>>>(v, ctl_.data(), rings_, settings_.rebuild_sorted, ring_key_.data(),
                                                  ring_count_.data(), n);
      MV_CUDA_CHECK_LAUNCH();
      const int begin_bit = settings_.rebuild_sorted ? 0 : mk::kRingKeyShift;
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, ring_key_.data(), ring_key_sorted_.data(),
                                                    iota_.data(), ring_list_.data(), static_cast<int>(n), begin_bit,
                                                    mk::kRingKeyShift + kRingKeyBits, s));
      fill_rings(v, ring_list_.data(), ring_count_.data(), s);
      return;
    }
    if (settings_.rebuild_sorted) {
      MV_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp_.data(), bytes, v.priority, sorted_keys_.data(),
                                                              iota_.data(), order_.data(), static_cast<int>(n), 0,
                                                              static_cast<int>(sizeof(float) * 8), s));
    } else {
      MV_CUDA_CHECK(cudaMemcpyAsync(order_.data(), iota_.data(), iota_.bytes(), cudaMemcpyDeviceToDevice, s));
    }
    mk::unfinished_in_order_kernel<<<(n + 255) / 256, 256, 0, s>>>(v, order_.data(), flags_.data(), n);
    MV_CUDA_CHECK_LAUNCH();
    bytes = temp_.size();
    MV_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, order_.data(), flags_.data(), list_.data(),
                                             count_.data(), static_cast<int>(n), s));
    if (design_ == QueueDesign::Quanta) {
      // The live priority distribution and its table, from the controller's own code.
      hist_.zero(s);
      credit_.zero(s);
      mk::priority_hist_kernel<<<(n + 255) / 256, 256, 0, s>>>(v.priority, list_.data(), count_.data(), hist_.data());
      MV_CUDA_CHECK_LAUNCH();
      mk::priority_table_kernel<<<1, 256, 0, s>>>(hist_.data(), bin_quantum_.data(), settings_.quantum_max);
      MV_CUDA_CHECK_LAUNCH();
    }
    fill_rings(v, list_.data(), count_.data(), s);
  }

  /// The rebuild's last launch (mk::init_rings_kernel): every ring filled from `by_ring` and `counts`, each
  /// block 2048 slots of its ring (8 a thread).
  void fill_rings(const View& v, const uint32_t* by_ring, const int* counts, cudaStream_t s) {
    const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(1024, (queue_.capacity() + 2047) / 2048));
    mk::init_rings_kernel<<<dim3(blocks, rings_), 256, 0, s>>>(queue_, v.priority, by_ring, counts,
                                                              settings_.rebuild_sorted);
    MV_CUDA_CHECK_LAUNCH();
  }

  /// Waits for the slice; past the watchdog time it raises the host stop flag once (the slice then ends
  /// cleanly). Returns whether it did.
  bool wait_for_slice(GpuTimer& timer) {
    (void)timer;
    const auto t0 = std::chrono::steady_clock::now();
    bool stopped = false;
    for (;;) {
      const cudaError_t q = cudaStreamQuery(nullptr);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) MV_CUDA_CHECK(q);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!stopped && s > settings_.watchdog_seconds) {
        stop_flag_->set(1);
        stopped = true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return stopped || stop_flag_->get() != 0;
  }

  void update_stats(const mk::QueueControl& c, const StepStats& st, bool stopped_by_host) {
    MegakernelStats& s = stats_;
    s.grid_blocks = launch_grid_;
    s.controllers = launch_grid_ - worker_warps_ / (block_ / 32);
    s.blocks_per_sm = blocks_per_sm_;
    s.worker_warps = worker_warps_;
    s.registers = registers_;
    s.capacity = static_cast<uint32_t>(queue_.capacity());
    s.queue_length = c.tail - c.head;
    s.dequeues = c.head - head_;  // head summed over the rings (step)
    s.tasks_per_second = st.busy_ms > 0 ? st.tasks / st.busy_ms * 1000.0 : 0.0;
    s.stopped_by_host = stopped_by_host;
    ++s.slices;
    for (int m = 0; m < 3; ++m) {
      s.sort_passes[m] = c.sort_passes[m];
      s.sort_cycles_max[m] = c.sort_cycles_max[m];
    }
    s.lock_collisions = c.lock_collisions;
    s.wait_cycles = c.wait_cycles;
    s.ctrl_lock_failures = c.ctrl_lock_failures;
    s.ctrl_time_refusals = c.ctrl_time_refusals;
    s.ctrl_restarts = c.ctrl_restarts;
    s.ctrl_not_full = c.ctrl_not_full;
    s.empty_executions = c.empty_executions;
    s.yields = c.yields;
    s.aged_claims = c.aged_claims;
    s.table_passes = c.table_passes;
    s.order_score = -1.0;
    s.recorded = 0;
    order_keys_.clear();
    order_tasks_.clear();
    order_tickets_.clear();
    if (settings_.record_order && s.dequeues > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(s.dequeues, settings_.record_capacity));
      record_.download(order_keys_, n);
      record_task_.download(order_tasks_, n);
      record_ticket_.download(order_tickets_, n);
      MV_CUDA_CHECK(cudaDeviceSynchronize());
      s.order_score = order_score(order_keys_);
      s.recorded = n;
    }
  }

  StrategyInfo info_{"megakernel",
                     "GPU: persistent priority megakernel, a controller block sorts the queue's segments "
                     "(Kerbl 2012); optionally several controller blocks",
                     "Kerbl 2012 §3–5 (priority megakernel)", Side::Device, false, {}, true};
  MegakernelSettings settings_;
  BoundParams<MegakernelSettings> params_{megakernel_params(), settings_};
  MegakernelStats stats_;
  bool valid_ = false;
  // launch configuration
  int sm_count_ = 0, clock_khz_ = 0;
  uint32_t num_tasks_ = 0, segment_size_ = 0, block_ = 0, blocks_per_sm_set_ = ~0u;
  uint32_t grid_ = 0, blocks_per_sm_ = 0, worker_warps_ = 0, registers_ = 0;
  uint32_t launch_grid_ = 0;  // the slice's grid: grid_, or the controllers and MegakernelSettings::worker_blocks
  size_t smem_bytes_ = 0;
  const void* kernel_ = nullptr;  ///< the persistent kernel of design_ (and its Buckets variant)
  bool shared_ = false;           ///< kernel_ is the patch_lanes > 1 variant (lane_extra_ in use)
  bool stay_leading_ = false;     ///< kernel_ is the stay_leading variant
  int lane_extra_cap_ = 0;        ///< patch_lanes > 1: extra entries the rings have room for
  // queue (device)
  mk::QueueView queue_{};
  DeviceBuffer<float> key_;
  DeviceBuffer<uint32_t> task_;
  DeviceBuffer<unsigned long long> seq_;
  DeviceBuffer<int> seg_state_;
  DeviceBuffer<uint32_t> seg_sorted_;
  DeviceBuffer<unsigned long long> seg_estimate_;
  DeviceBuffer<uint32_t> task_min_;
  DeviceBuffer<mk::QueueControl> ctl_;
  DeviceBuffer<float> record_;
  DeviceBuffer<uint32_t> record_task_;
  DeviceBuffer<unsigned long long> record_ticket_;
  std::vector<float> order_keys_;
  std::vector<uint32_t> order_tasks_;
  std::vector<unsigned long long> order_tickets_;
  // QueueDesign::Buckets and ::Quanta
  QueueDesign design_ = QueueDesign::Kerbl;
  uint32_t rings_ = 1;
  DeviceBuffer<int> hist_;
  DeviceBuffer<float> bin_quantum_;
  DeviceBuffer<float> credit_;
  DeviceBuffer<uint32_t> ring_list_;   ///< rebuild (Buckets): the unfinished tasks grouped by ring
  DeviceBuffer<unsigned long long> ring_key_, ring_key_sorted_;  ///< rebuild (Buckets): mk::ring_sort_key
  /// Bits of a ring in mk::ring_sort_key: rings up to `buckets` (at most 32, the finished tasks' ring) < 2^6.
  static constexpr int kRingKeyBits = 6;
  DeviceBuffer<int> ring_count_;
  DeviceBuffer<uint32_t> lane_extra_;  ///< patch_lanes > 1: [num tasks] secondary tokens
  DeviceBuffer<int> lane_extra_sum_;   ///< patch_lanes > 1: their sum
  DeviceBuffer<unsigned long long> lane_spawns_;  ///< patch_lanes > 1: secondary tokens added since the rebuild
  DeviceBuffer<uint32_t> lane_lock_;   ///< patch_lanes > 1: [num tasks] commit locks, free between slices
  uint64_t head_ = 0;  ///< head after the last slice (record base)
  uint32_t live_ = 0;  ///< unfinished tasks after the last slice (after a `buckets` rebuild: all tasks, a bound)
  // rebuild scratch
  DeviceBuffer<uint32_t> iota_, order_, list_;
  DeviceBuffer<float> sorted_keys_;
  DeviceBuffer<uint8_t> flags_, temp_;
  DeviceBuffer<int> count_;
  GraphReplay rebuild_graph_;  ///< enqueue_rebuild's launches, captured for rebuild_key_
  GraphKey rebuild_key_;
  // measurement (profile_begin)
  int profile_id_ = -1, prof_slices_ = 0;
  DeviceBuffer<mk::WorkerProfile> prof_;
  DeviceBuffer<unsigned long long> prof_task_cycles_;
  DeviceBuffer<unsigned int> prof_task_execs_;
  // host stop flag (b)
  std::unique_ptr<mk::MappedFlag> stop_flag_;
  std::atomic<mk::MappedFlag*> stop_flag_ptr_{nullptr};
};

}  // namespace mv
