// GPU strand strategies (Lehmann 2023, §3.1–§3.4 and the unified-memory variants of §4.2.3).
//
// Mapping onto threads. A launch has T = n·b threads; thread t = blockIdx.x·b + threadIdx.x.
//   BSP (cuda, cuda-permute, cuda-unified-memory; §3.1, Algorithm 1): one launch per super-step. Thread
//     t visits the slots k = t, t + T, t + 2T, … < N (a grid-stride loop) and gives the strand at slot k
//     one update if it is still Active. Each warp adds its count of strands left Active to a counter;
//     the host reads it after every super-step and stops at 0 (or after max_steps super-steps).
//   batch (cuda-batch, cuda-batch-permute; §3.3, Algorithm 2): one launch; thread t takes the same
//     slots and runs each strand from init to completion before the next.
//   global queue (cuda-global-queue[-unified-memory]; §3.4, Algorithm 3): one launch; work unit u is
//     the strands [u·c, min(N, (u+1)·c)). Thread t first runs unit t (the pre-assignment of §3.4: the
//     first T units cost no atomic), then takes unit T + atomicAdd(counter, 1) until the units run out,
//     each unit's strands to completion in order.
// The slot → strand map is the identity, or with *-permute the permutation perm of §3.2: slot k holds
// strand perm[k] (sched/strand_stats.h; thread t works on perm[t], perm[t + T], …).
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
#include <stdexcept>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "base/managed_buffer.h"
#include "sched/gpu/gpu_common.cuh"
#include "sched/strand_stats.h"
#include "sched/strand_strategy.h"

namespace mv {

enum class StrandGpuMode { Bsp, Batch, GlobalQueue };

/// Which of Lehmann's GPU strategies: the mode, the §3.2 permutation, managed memory.
struct StrandGpuVariant {
  StrandGpuMode mode = StrandGpuMode::Bsp;
  bool permute = false;
  bool managed = false;
};

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

/// BSP init: every strand's state from init(i), Active, 0 steps (same slot mapping as the steps).
template <class W>
__global__ void strand_init_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n) {
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) {
    const uint32_t i = slot_strand(perm, k);
    a.state[i] = w.init(i);
    a.status[i] = WorkStatus::Active;
    a.steps[i] = 0;
  }
}

/// One BSP super-step: one update of every Active strand; adds the strands left Active to *active.
/// blockDim.x is a multiple of 32, so every warp is full for the reduction.
template <class W>
__global__ void strand_bsp_step_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n,
                                       unsigned long long* active) {
  uint32_t still = 0;
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) {
    const uint32_t i = slot_strand(perm, k);
    if (a.status[i] != WorkStatus::Active) continue;
    typename W::State s = a.state[i];
    const WorkStatus st = w.update(s);
    a.state[i] = s;
    a.steps[i] += 1;
    a.status[i] = st;
    if (st != WorkStatus::Active) a.finish.stamp(i);
    still += st == WorkStatus::Active ? 1u : 0u;
  }
  for (int offset = 16; offset > 0; offset >>= 1) still += __shfl_down_sync(0xffffffffu, still, offset);
  if ((threadIdx.x & 31u) == 0 && still) atomicAdd(active, static_cast<unsigned long long>(still));
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

/// Batching (§3.3): each thread runs its slots' strands to completion, one after the other.
template <class W>
__global__ void strand_batch_kernel(W w, StrandArrays<W> a, const uint32_t* __restrict__ perm, uint32_t n,
                                    uint32_t max_steps) {
  for (uint64_t k = thread_index(); k < n; k += grid_threads()) run_to_completion(w, a, slot_strand(perm, k), max_steps);
}

/// Global queue (§3.4, Algorithm 3): units of c strands; unit t pre-assigned, then T + atomicAdd(next, 1).
/// *next starts at 0.
template <class W>
__global__ void strand_queue_kernel(W w, StrandArrays<W> a, uint32_t n, uint32_t c, unsigned long long* next,
                                    uint32_t max_steps) {
  const uint64_t units = (static_cast<uint64_t>(n) + c - 1) / c;
  const uint64_t threads = grid_threads();
  uint64_t u = thread_index();
  while (u < units) {
    const uint64_t first = u * c;
    const uint64_t last = first + c < n ? first + c : n;
    for (uint64_t i = first; i < last; ++i) run_to_completion(w, a, static_cast<uint32_t>(i), max_steps);
    u = threads + atomicAdd(next, 1ull);
  }
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

}  // namespace strand_detail

/// The seven GPU strategies of Appendix A, one class; the variant picks the kernels and the memory.
template <class W>
class CudaStrands final : public StrandStrategy<W> {
 public:
  explicit CudaStrands(StrandGpuVariant v) : v_(v), info_(make_info(v)) {}
  const StrandStrategyInfo& info() const override { return info_; }

  static StrandStrategyInfo make_info(StrandGpuVariant v) {
    StrandStrategyInfo i;
    i.needs_gpu = true;
    i.uses_grid = true;
    if (v.permute) i.knobs.push_back("permute-seed");
    if (v.managed) i.knobs.insert(i.knobs.end(), {"prefetch", "managed-counter"});
    if (v.mode == StrandGpuMode::Bsp && !v.managed) {
      i.name = v.permute ? "cuda-permute" : "cuda";
      i.description = v.permute ? "GPU BSP over a random permutation: one launch per super-step, thread t updates "
                                  "strands perm[t], perm[t+nb], ... once each"
                                : "GPU BSP: one launch per super-step, thread t updates strands t, t+nb, ... once each";
      i.section = v.permute ? "Lehmann 2023 §3.2" : "Lehmann 2023 §3.1";
    } else if (v.mode == StrandGpuMode::Batch && !v.managed) {
      i.name = v.permute ? "cuda-batch-permute" : "cuda-batch";
      i.description = v.permute ? "GPU, one launch: thread t runs strands perm[t], perm[t+nb], ... each to completion"
                                : "GPU, one launch: thread t runs strands t, t+nb, ... each to completion";
      i.section = v.permute ? "Lehmann 2023 §3.2, §3.3" : "Lehmann 2023 §3.3";
    } else if (v.mode == StrandGpuMode::GlobalQueue && !v.permute) {
      i.name = v.managed ? "cuda-global-queue-unified-memory" : "cuda-global-queue";
      i.knobs.insert(i.knobs.begin(), "work-unit");
      i.description = std::string("GPU, one launch: units of c strands, unit t pre-assigned to thread t, then an "
                                  "atomic counter; each unit to completion") +
                      (v.managed ? "; managed memory" : "");
      i.section = v.managed ? "Lehmann 2023 §3.4, §4.2.3" : "Lehmann 2023 §3.4";
    } else if (v.mode == StrandGpuMode::Bsp && v.managed && !v.permute) {
      i.name = "cuda-unified-memory";
      i.description = "cuda with the strand arrays and the active counter in managed memory (hints, optional prefetch)";
      i.section = "Lehmann 2023 §3.1, §4.2.3";
    } else {
      throw std::invalid_argument("CudaStrands: not one of Lehmann's strategies");
    }
    return i;
  }

  StrandRun<W> run(const W& w, const StrandRunSettings& s) override {
    using namespace strand_detail;
    using State = typename W::State;
    validate_strand_settings(s);
    const uint32_t n = w.num_strands();
    StrandRun<W> r;
    r.state.resize(n);
    r.status.assign(n, WorkStatus::Active);
    r.steps.assign(n, 0u);
    r.timing.cuda_events = true;

    // The grid, resolved for the strategy's main kernel (the BSP init kernel uses the step kernel's).
    GridConfig g;
    switch (v_.mode) {
      case StrandGpuMode::Bsp:
        g = resolve_strand_grid(s.grid, strand_bsp_step_kernel<W>, "BSP step");
        resolve_strand_grid(g, strand_init_kernel<W>, "BSP init");
        break;
      case StrandGpuMode::Batch: g = resolve_strand_grid(s.grid, strand_batch_kernel<W>, "batch"); break;
      case StrandGpuMode::GlobalQueue: g = resolve_strand_grid(s.grid, strand_queue_kernel<W>, "global-queue"); break;
    }
    r.timing.grid = g;
    if (n == 0) return r;

    // ---- allocation, hints, permutation (untimed) ----
    int device = 0;
    MV_CUDA_CHECK(cudaGetDevice(&device));
    DeviceBuffer<State> d_state;
    DeviceBuffer<WorkStatus> d_status;
    DeviceBuffer<uint32_t> d_steps, d_perm;
    DeviceBuffer<unsigned long long> d_counter;
    ManagedBuffer<State> m_state;
    ManagedBuffer<WorkStatus> m_status;
    ManagedBuffer<uint32_t> m_steps;
    ManagedBuffer<unsigned long long> m_counter;
    StrandArrays<W> a{};
    unsigned long long* counter = nullptr;
    bool concurrent_managed = false;
    if (v_.managed) {
      int cma = 0;
      MV_CUDA_CHECK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, device));
      concurrent_managed = cma != 0;
      m_state = ManagedBuffer<State>(n);
      m_status = ManagedBuffer<WorkStatus>(n);
      m_steps = ManagedBuffer<uint32_t>(n);
      a = {m_state.data(), m_status.data(), m_steps.data()};
      if (s.managed_counter) {
        m_counter = ManagedBuffer<unsigned long long>(1);
        counter = m_counter.data();
      } else {
        d_counter.resize(1);
        counter = d_counter.data();
      }
      if (concurrent_managed) {
        managed_advise(m_state.data(), m_state.bytes(), cudaMemAdviseSetPreferredLocation, device);
        managed_advise(m_status.data(), m_status.bytes(), cudaMemAdviseSetPreferredLocation, device);
        managed_advise(m_steps.data(), m_steps.bytes(), cudaMemAdviseSetPreferredLocation, device);
        r.timing.notes = std::string(s.prefetch ? "managed memory, prefetched to the GPU" : "managed memory, no prefetch") +
                         (s.managed_counter ? ", managed counter" : "");
      } else {
        r.timing.notes = "managed memory; no concurrent managed access on this device: hints and prefetch skipped";
      }
    } else {
      d_state.resize(n);
      d_status.resize(n);
      d_steps.resize(n);
      d_counter.resize(1);
      a = {d_state.data(), d_status.data(), d_steps.data()};
      counter = d_counter.data();
    }
    // Finish order (the viewer's replay): device memory for every variant, all "not finished" at first.
    DeviceFinishRecord finish;
    if (s.record_finish_order) {
      a.finish = finish.allocate(n);
      finish.reset();
      r.timing.notes += std::string(r.timing.notes.empty() ? "" : "; ") + "finish order recorded";
    }
    if (v_.permute) {
      d_perm.upload(strand_permutation(n, s.permute_seed));
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    const uint32_t* perm = v_.permute ? d_perm.data() : nullptr;

    // The counter at 0: stream-ordered on the device; through the page (after a sync) when managed.
    const bool host_counter = v_.managed && s.managed_counter;
    auto reset_counter = [&] {
      if (host_counter) {
        MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        *counter = 0;
      } else {
        MV_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), nullptr));
      }
    };
    auto read_counter = [&]() -> unsigned long long {
      unsigned long long h = 0;
      if (host_counter) {
        MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        h = *counter;
      } else {
        MV_CUDA_CHECK(cudaMemcpyAsync(&h, counter, sizeof(h), cudaMemcpyDeviceToHost, nullptr));
        MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      }
      return h;
    };

    // ---- timed region ----
    GpuTimer timer;
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    timer.start();
    if (v_.managed && concurrent_managed && s.prefetch) {
      managed_prefetch(m_state.data(), m_state.bytes(), device);
      managed_prefetch(m_status.data(), m_status.bytes(), device);
      managed_prefetch(m_steps.data(), m_steps.bytes(), device);
    }
    const dim3 grid(g.blocks), block(g.threads);
    uint32_t launches = 0, super_steps = 0;
    switch (v_.mode) {
      case StrandGpuMode::Bsp: {
        strand_init_kernel<W><<<grid, block>>>(w, a, perm, n);
        MV_CUDA_CHECK_LAUNCH();
        ++launches;
        while (super_steps < s.max_steps) {
          reset_counter();
          strand_bsp_step_kernel<W><<<grid, block>>>(w, a, perm, n, counter);
          MV_CUDA_CHECK_LAUNCH();
          ++launches;
          ++super_steps;
          if (read_counter() == 0) break;
        }
        break;
      }
      case StrandGpuMode::Batch:
        strand_batch_kernel<W><<<grid, block>>>(w, a, perm, n, s.max_steps);
        MV_CUDA_CHECK_LAUNCH();
        ++launches;
        break;
      case StrandGpuMode::GlobalQueue:
        reset_counter();
        strand_queue_kernel<W><<<grid, block>>>(w, a, n, g.work_unit, counter, s.max_steps);
        MV_CUDA_CHECK_LAUNCH();
        ++launches;
        break;
    }
    timer.stop();
    r.timing.ms = timer.elapsed_ms();
    r.timing.launches = launches;
    r.timing.super_steps = super_steps;

    // ---- results (untimed) ----
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    if (v_.managed) {
      std::copy(a.state, a.state + n, r.state.begin());
      std::copy(a.status, a.status + n, r.status.begin());
      std::copy(a.steps, a.steps + n, r.steps.begin());
    } else {
      d_state.download(r.state.data(), n);
      d_status.download(r.status.data(), n);
      d_steps.download(r.steps.data(), n);
      MV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    if (s.record_finish_order) finish.download(r.finish_order);
    return r;
  }

 private:
  StrandGpuVariant v_;
  StrandStrategyInfo info_;
};

}  // namespace mv
