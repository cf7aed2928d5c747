// What Lehmann 2023's GPU strand strategies share (§3.1–§3.4 and the unified-memory variants of §4.2.3):
// the strand arrays and the thread → slot → strand mapping, the run-to-completion of one strand, the grid,
// the memory of a run (device or managed), its timed region and the finish record. The strategies, one file
// per family:
//   BSP (cuda, cuda-permute, cuda-unified-memory; §3.1, Algorithm 1)  sched/gpu/strand_bsp.cuh
//   batch (cuda-batch, cuda-batch-permute; §3.3, Algorithm 2)         sched/gpu/strand_batch.cuh
//   global queue (cuda-global-queue[-unified-memory]; §3.4, Alg. 3)  sched/gpu/strand_global_queue.cuh
//
// Mapping onto threads. A launch has T = n·b threads; thread t = blockIdx.x·b + threadIdx.x. The BSP and
// batch kernels give thread t the slots k = t, t + T, t + 2T, … < N (a grid-stride loop). The slot → strand
// map is the identity, or with *-permute the permutation perm of §3.2: slot k holds strand perm[k]
// (sched/strand_stats.h; thread t works on perm[t], perm[t + T], …).
//
// Deviation from the paper, on purpose: Algorithms 1 and 2 give thread t a contiguous chunk of
// N/T strands; here the slots are strided by T, so a warp's 32 lanes work on 32 consecutive slots
// (coalesced state loads, and neighbouring strands, which behave alike, share a warp). The strategies
// differ from each other only in what the paper varies (super-steps vs completion, order, queue, memory).
//
// Memory. State, status and step count live in three arrays of N entries (Diderot's strand array,
// §3.1). Batch and queue kernels keep a strand's state in registers from init to its end and store it
// once; BSP kernels load and store it every super-step. The unified-memory variants allocate the arrays
// with cudaMallocManaged, advise their preferred location to the GPU and, with
// StrandRunSettings::prefetch, prefetch them to the GPU before the first kernel. The counter is device
// memory unless StrandRunSettings::managed_counter: then the host resets and reads it through its page,
// which migrates between host and GPU twice per BSP super-step. The results reach the host by page
// faults when it reads them. On a
// device without concurrent managed access the hints and the prefetch are skipped (StrandTimings::notes).
//
// Timed region (StrandTimings): CUDA events on the default stream, from before the prefetch / counter
// reset / first kernel to after the last kernel or, for BSP, the last active-count read-back; so the
// BSP host loop's gaps (read-back, reset, next launch) are inside. Outside: allocation, hints, the
// permutation's generation and upload, the download of the results and the image.
//
// Grid: an explicit n, b, c, or `auto`: b and n from cudaOccupancyMaxPotentialBlockSize for the
// strategy's main kernel (n = the blocks of one full wave of resident blocks), c = 1.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "base/managed_buffer.h"
#include "sched/gpu/gpu_common.cuh"
#include "sched/strand_stats.h"
#include "sched/strand_strategy.h"

namespace mv {

/// The slot → strand map of a GPU strand strategy: the identity, or the random permutation of §3.2.
enum class StrandOrder { Index, Permuted };

/// Where a GPU strand strategy keeps its strand arrays: device memory, or managed memory (§4.2.3).
enum class StrandMemory { Device, Managed };

/// The device side of a run's finish order (StrandRun::finish_order): one ticket per strand and their
/// counter, shared by the GPU strand strategies and the task strategies on strands.
class DeviceFinishRecord {
 public:
  /// Allocates tickets for n strands (untimed: before the run) and returns where kernels stamp them.
  FinishTickets allocate(uint32_t n) {
    ticket_.resize(n);
    next_.resize(1);
    n_ = n;
    return FinishTickets{ticket_.data(), next_.data()};
  }
  /// Every ticket kStrandNotFinished and the counter 0, asynchronously on the default stream.
  void reset() {
    if (n_ == 0) return;
    MV_CUDA_CHECK(cudaMemsetAsync(ticket_.data(), 0xff, sizeof(uint32_t) * n_, nullptr));
    MV_CUDA_CHECK(cudaMemsetAsync(next_.data(), 0, sizeof(unsigned int), nullptr));
  }
  /// Copies the n tickets into `out` (resized) and waits for the copy.
  void download(std::vector<uint32_t>& out) const {
    out.resize(n_);
    ticket_.download(out.data(), n_);
    MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }

 private:
  DeviceBuffer<uint32_t> ticket_;
  DeviceBuffer<unsigned int> next_;
  uint32_t n_ = 0;
};

namespace strand_detail {

template <class W>
struct StrandArrays {
  typename W::State* state;
  WorkStatus* status;
  uint32_t* steps;
  FinishTickets finish;  ///< null unless StrandRunSettings::record_finish_order
};

__device__ __forceinline__ uint64_t thread_index() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ uint64_t grid_threads() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }
__device__ __forceinline__ uint32_t slot_strand(const uint32_t* perm, uint64_t k) {
  return perm ? perm[k] : static_cast<uint32_t>(k);
}

/// Strand i from init to completion (run_item, the reference), stored once.
template <class W>
__device__ __forceinline__ void run_to_completion(const W& w, const StrandArrays<W>& a, uint32_t i, uint32_t max_steps) {
  typename W::State s;
  uint32_t steps = 0;
  const WorkStatus st = run_item(w, i, s, steps, max_steps);
  a.state[i] = s;
  a.status[i] = st;
  a.steps[i] = steps;
  if (st != WorkStatus::Active) a.finish.stamp(i);
}

/// `g` with `auto` resolved for `kernel` (occupancy API), checked against the kernel's own block limit.
template <class Kernel>
GridConfig resolve_strand_grid(const GridConfig& g, Kernel kernel, const char* kernel_name) {
  cudaFuncAttributes attr{};
  MV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  GridConfig r = g;
  if (g.automatic) {
    int min_grid = 0, block = 0;
    MV_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 0));
    block = std::max(32, block / 32 * 32);
    r.automatic = false;
    r.blocks = static_cast<uint32_t>(std::max(1, min_grid));
    r.threads = static_cast<uint32_t>(block);
    r.work_unit = g.work_unit;
  } else if (static_cast<int>(g.threads) > attr.maxThreadsPerBlock) {
    throw InputError("", "--grid",
                     "threads per block b = " + std::to_string(g.threads) + " exceeds the " +
                         std::to_string(attr.maxThreadsPerBlock) + " that the " + kernel_name +
                         " kernel can run with on this GPU (its register use); use a smaller b or auto");
  }
  return r;
}

/// The info record every GPU strand strategy starts from: needs a GPU, reads the grid, and the knobs of
/// its order (permute-seed) and memory (prefetch, managed-counter).
inline StrategyInfo gpu_strand_info(StrandOrder order, StrandMemory memory, std::string name, std::string description,
                                    std::string section) {
  StrategyInfo i;
  i.name = std::move(name);
  i.description = std::move(description);
  i.section = std::move(section);
  i.side = Side::Device;
  i.uses_grid = true;
  if (order == StrandOrder::Permuted) i.knobs.push_back("permute-seed");
  if (memory == StrandMemory::Managed) i.knobs.insert(i.knobs.end(), {"prefetch", "managed-counter"});
  return i;
}

/// The memory of one GPU strand run (untimed to set up): the strand arrays in device or managed memory
/// (with the hints), the counter, the finish record and the permutation. The timed region's pieces
/// (prefetch, counter reset and read-back) and the download of the results are its methods.
template <class W>
class StrandGpuMemory {
 public:
  using State = typename W::State;

  /// Allocates for n > 0 strands; appends what changes the meaning of the timings to `notes`.
  StrandGpuMemory(uint32_t n, const StrandRunSettings& s, StrandOrder order, StrandMemory memory, std::string& notes)
      : n_(n), managed_(memory == StrandMemory::Managed), host_counter_(managed_ && s.managed_counter) {
    MV_CUDA_CHECK(cudaGetDevice(&device_));
    if (managed_) {
      int cma = 0;
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, device_));
      concurrent_managed_ = cma != 0;
      m_state_ = ManagedBuffer<State>(n);
      m_status_ = ManagedBuffer<WorkStatus>(n);
      m_steps_ = ManagedBuffer<uint32_t>(n);
      a_ = {m_state_.data(), m_status_.data(), m_steps_.data()};
      if (s.managed_counter) {
        m_counter_ = ManagedBuffer<unsigned long long>(1);
        counter_ = m_counter_.data();
      } else {
        d_counter_.resize(1);
        counter_ = d_counter_.data();
      }
      if (concurrent_managed_) {
        managed_advise(m_state_.data(), m_state_.bytes(), cudaMemAdviseSetPreferredLocation, device_);
        managed_advise(m_status_.data(), m_status_.bytes(), cudaMemAdviseSetPreferredLocation, device_);
        managed_advise(m_steps_.data(), m_steps_.bytes(), cudaMemAdviseSetPreferredLocation, device_);
        notes = std::string(s.prefetch ? "managed memory, prefetched to the GPU" : "managed memory, no prefetch") +
                (s.managed_counter ? ", managed counter" : "");
      } else {
        notes = "managed memory; no concurrent managed access on this device: hints and prefetch skipped";
      }
    } else {
      d_state_.resize(n);
      d_status_.resize(n);
      d_steps_.resize(n);
      d_counter_.resize(1);
      a_ = {d_state_.data(), d_status_.data(), d_steps_.data()};
      counter_ = d_counter_.data();
    }
    // Finish order (the viewer's replay): device memory for every variant, all "not finished" at first.
    if (s.record_finish_order) {
      a_.finish = finish_.allocate(n);
      finish_.reset();
      notes += std::string(notes.empty() ? "" : "; ") + "finish order recorded";
    }
    if (order == StrandOrder::Permuted) {
      d_perm_.upload(strand_permutation(n, s.permute_seed));
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    perm_ = order == StrandOrder::Permuted ? d_perm_.data() : nullptr;
  }
  StrandGpuMemory(const StrandGpuMemory&) = delete;
  StrandGpuMemory& operator=(const StrandGpuMemory&) = delete;

  const StrandArrays<W>& arrays() const { return a_; }
  /// The permutation on the device (StrandOrder::Permuted), else null.
  const uint32_t* perm() const { return perm_; }
  unsigned long long* counter() const { return counter_; }

  /// Timed: with managed memory, concurrent managed access and StrandRunSettings::prefetch, prefetches
  /// the strand arrays to the GPU.
  void prefetch(const StrandRunSettings& s) {
    if (!(managed_ && concurrent_managed_ && s.prefetch)) return;
    managed_prefetch(m_state_.data(), m_state_.bytes(), device_);
    managed_prefetch(m_status_.data(), m_status_.bytes(), device_);
    managed_prefetch(m_steps_.data(), m_steps_.bytes(), device_);
  }

  /// The counter at 0: stream-ordered on the device; through the page (after a sync) when managed.
  void reset_counter() {
    if (host_counter_) {
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      *counter_ = 0;
    } else {
      MV_CUDA_CHECK(cudaMemsetAsync(counter_, 0, sizeof(unsigned long long), nullptr));
    }
  }
  /// The counter's value after the work queued before (waits for it).
  unsigned long long read_counter() {
    unsigned long long h = 0;
    if (host_counter_) {
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      h = *counter_;
    } else {
      MV_CUDA_CHECK(cudaMemcpyAsync(&h, counter_, sizeof(h), cudaMemcpyDeviceToHost, nullptr));
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    return h;
  }

  /// Untimed: waits for the device and copies the strand arrays (and the finish order when recorded)
  /// into r.
  void download(StrandRun<W>& r, const StrandRunSettings& s) const {
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    if (managed_) {
      std::copy(a_.state, a_.state + n_, r.state.begin());
      std::copy(a_.status, a_.status + n_, r.status.begin());
      std::copy(a_.steps, a_.steps + n_, r.steps.begin());
    } else {
      download_strand_arrays(d_state_, d_status_, d_steps_, n_, r.state, r.status, r.steps);
    }
    if (s.record_finish_order) finish_.download(r.finish_order);
  }

 private:
  uint32_t n_ = 0;
  int device_ = 0;
  bool managed_ = false, host_counter_ = false, concurrent_managed_ = false;
  DeviceBuffer<State> d_state_;
  DeviceBuffer<WorkStatus> d_status_;
  DeviceBuffer<uint32_t> d_steps_, d_perm_;
  DeviceBuffer<unsigned long long> d_counter_;
  ManagedBuffer<State> m_state_;
  ManagedBuffer<WorkStatus> m_status_;
  ManagedBuffer<uint32_t> m_steps_;
  ManagedBuffer<unsigned long long> m_counter_;
  StrandArrays<W> a_{};
  unsigned long long* counter_ = nullptr;
  const uint32_t* perm_ = nullptr;
  DeviceFinishRecord finish_;
};

/// What a strategy's timed region launched.
struct StrandLaunches {
  uint32_t launches = 0;
  uint32_t super_steps = 0;
};

/// One GPU strand run, the frame every GPU strand strategy shares: validates the settings, resolves the
/// grid (`resolve(s.grid)` → GridConfig, for the strategy's main kernel), allocates (untimed), then, timed,
/// prefetches and calls `launch(memory, grid, block, g)` → StrandLaunches, and downloads the results
/// (untimed). Throws InputError for settings out of range, CudaError for a failed CUDA call.
template <class W, class Resolve, class Launch>
StrandRun<W> run_strands_on_gpu(const W& w, const StrandRunSettings& s, StrandOrder order, StrandMemory memory,
                                Resolve&& resolve, Launch&& launch) {
  validate_strand_settings(s);
  const uint32_t n = w.num_strands();
  StrandRun<W> r;
  r.state.resize(n);
  r.status.assign(n, WorkStatus::Active);
  r.steps.assign(n, 0u);
  r.timing.cuda_events = true;
  const GridConfig g = resolve(s.grid);
  r.timing.grid = g;
  if (n == 0) return r;

  StrandGpuMemory<W> m(n, s, order, memory, r.timing.notes);  // allocation, hints, permutation (untimed)
  GpuTimer timer;
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  timer.start();
  m.prefetch(s);
  const StrandLaunches l = launch(m, dim3(g.blocks), dim3(g.threads), g);
  timer.stop();
  r.timing.ms = timer.elapsed_ms();
  r.timing.launches = l.launches;
  r.timing.super_steps = l.super_steps;
  m.download(r, s);
  return r;
}

}  // namespace strand_detail

/// What Lehmann 2023's GPU strand strategies share: the info record their make_info gives, the strand order
/// and memory they run with, and run_on_gpu, the frame of strand_detail::run_strands_on_gpu over them. A
/// strategy adds its kernels: the grid they resolve to and their launches.
template <class W>
class GpuStrandStrategy : public StrandStrategy<W> {
 public:
  const StrategyInfo& info() const final { return info_; }

 protected:
  GpuStrandStrategy(StrandOrder order, StrandMemory memory, StrategyInfo info)
      : order_(order), memory_(memory), info_(std::move(info)) {}
  template <class Resolve, class Launch>
  StrandRun<W> run_on_gpu(const W& w, const StrandRunSettings& s, Resolve&& resolve, Launch&& launch) const {
    return strand_detail::run_strands_on_gpu(w, s, order_, memory_, std::forward<Resolve>(resolve),
                                             std::forward<Launch>(launch));
  }

 private:
  StrandOrder order_;
  StrandMemory memory_;
  StrategyInfo info_;
};

}  // namespace mv
