// The GPU executor of the deep-halo plan (sched/lattice/halo_plan.h): P partitions on G GPUs, any
// five-point rule `Rule` (a functor `MV_HD float operator()(float c, float n, float s, float w, float e)
// const`, e.g. render/lattice/jacobi.h's), bitwise equal to the CPU executor (sched/lattice/halo_cpu.h)
// and to the single-partition run (Valen 2023, §3.2–§3.4).
//
// Per GPU: a compute stream and a communication stream (higher priority, so that its small kernels are
// not starved by the inner compute — the document's §3.6.3 problem). Per partition: the field twice
// (in/out, swapped each iteration), a send and a receive buffer.
//
// One exchange, per phase (Async: one; Sync: west/east then north/south):
//   pack    one kernel per GPU copies every message's rectangle of every local partition into the send
//           buffers (§3.2.3);
//   move    messages between partitions on the same GPU: one device-copy kernel per GPU; between GPUs:
//           ncclSend/ncclRecv of all GPUs in one ncclGroupStart/ncclGroupEnd (one communicator per GPU,
//           made by ncclCommInitAll from this one process; rank = GPU index);
//   unpack  one kernel per GPU copies the receive buffers into the halos.
// Overlap off: the exchange runs on the compute stream, then the full region. Overlap on: pack (of the
// first phase) runs first, then the inner compute on the compute stream while the rest of the exchange
// runs on the communication stream; the outer ring waits for both (§3.4, Listing 10).
//
// Timing (CUDA events, per GPU; the result is each phase's largest sum over the GPUs): compute (full
// regions), inner, outer, pack, exchange, unpack, and wait (overlap: from the end of the inner compute to
// the end of the last unpack, when positive: the compute stream idles for the halo). NCCL's exchange time
// includes waiting for the slower peer (the document's message + desynchronisation, §3.5).
//
// Errors: every CUDA and NCCL call is checked; CudaError / InputError name the call and the rank (GPU).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/common.h"
#include "base/cuda_check.h"
#include "base/errors.h"
#include "sched/lattice/halo_plan.h"
#include "sched/lattice/nccl_api.h"

namespace mv {

namespace halo_detail {

[[noreturn]] inline void throw_rank_error(cudaError_t err, const char* call, int rank, const char* file, int line) {
  throw CudaError("rank " + std::to_string(rank) + " (GPU " + std::to_string(rank) + "): " + call +
                  " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") at " + file + ":" +
                  std::to_string(line));
}

}  // namespace halo_detail

/// A checked CUDA call on the GPU of rank `rank`: the error names the call and the rank.
#define MV_HALO_CUDA(call, rank)                                                                     \
  do {                                                                                               \
    const cudaError_t mv_e_ = (call);                                                                \
    if (mv_e_ != cudaSuccess) ::mv::halo_detail::throw_rank_error(mv_e_, #call, (rank), __FILE__, __LINE__); \
  } while (0)
#define MV_HALO_LAUNCH(rank) MV_HALO_CUDA(cudaGetLastError(), rank)

#if MV_HAVE_NCCL
/// A checked NCCL call of rank `rank`: CudaError("rank r: ncclX(...) failed: <NCCL's text>").
#define MV_HALO_NCCL(api, call, rank)                                                                     \
  do {                                                                                                    \
    const ncclResult_t mv_r_ = (call);                                                                    \
    if (mv_r_ != ncclSuccess)                                                                             \
      throw ::mv::CudaError("rank " + std::to_string(rank) + ": " + #call + " failed: " +                 \
                            (api).error_string(mv_r_) + " at " + __FILE__ + ":" + std::to_string(__LINE__)); \
  } while (0)
#endif

/// One rectangle copy between two pitched arrays (pack, device move, unpack).
struct HaloCopy {
  const float* src = nullptr;
  float* dst = nullptr;
  int src_pitch = 0, dst_pitch = 0, w = 0, h = 0;
};

/// Up to four rectangles (the overlap's outer ring), each computed by its own launch.
struct HaloRectSet {
  HaloRect r[4];
  int count = 0;
};

/// Row alignment of the GPU arrays, in floats (one 128-byte line).
inline constexpr int kHaloAlign = 32;

/// `rule` over rectangle r: thread (x, y) of the grid computes column r.x0 − lead + x (skipped outside r,
/// so that each warp covers whole 128-byte lines) for ROWS consecutive rows, keeping the north and
/// centre values in registers.
template <class Rule, int BX, int BY, int ROWS>
__global__ void __launch_bounds__(BX* BY)
    halo_compute_kernel(const float* __restrict__ in, float* __restrict__ out, int pitch, HaloRect r, int lead, Rule rule) {
  const int x = int(blockIdx.x) * BX + int(threadIdx.x) - lead;
  const int y0 = (int(blockIdx.y) * BY + int(threadIdx.y)) * ROWS;
  if (x < 0 || x >= r.w || y0 >= r.h) return;
  size_t i = size_t(r.y0 + y0) * size_t(pitch) + size_t(r.x0 + x);
  float n = in[i - pitch], c = in[i];
  if (y0 + ROWS <= r.h) {
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
      const float s = in[i + pitch];
      out[i] = rule(c, n, s, in[i - 1], in[i + 1]);
      n = c;
      c = s;
      i += pitch;
    }
  } else {
    for (int k = y0; k < r.h; ++k) {
      const float s = in[i + pitch];
      out[i] = rule(c, n, s, in[i - 1], in[i + 1]);
      n = c;
      c = s;
      i += pitch;
    }
  }
}

/// The vectorised form of halo_compute_kernel: each thread computes 4 consecutive columns with 16-byte
/// loads and stores, taking its west and east neighbours from the adjacent lanes (__shfl) and, at the
/// warp's ends, from one extra load. Same rule, same order: the same bits. BX must be a multiple of 32.
template <class Rule, int BX, int BY, int ROWS>
__global__ void __launch_bounds__(BX* BY)
    halo_compute_kernel_v4(const float* __restrict__ in, float* __restrict__ out, int pitch, HaloRect r, int lead, Rule rule) {
  static_assert(BX % 32 == 0, "a warp must share one row");
  const int y0 = (int(blockIdx.y) * BY + int(threadIdx.y)) * ROWS;
  if (y0 >= r.h) return;  // the same for the whole warp
  const int col = 4 * (int(blockIdx.x) * BX + int(threadIdx.x)) - lead;  // of the first of the 4, relative to r.x0
  const bool load = col + 4 > -1 && col <= r.w;  // holds a site of r or one of its west/east neighbours
  const int lane = int(threadIdx.x) & 31;
  ptrdiff_t i = ptrdiff_t(r.y0 + y0) * pitch + r.x0 + col;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 n = load ? *reinterpret_cast<const float4*>(in + i - pitch) : zero;
  float4 c = load ? *reinterpret_cast<const float4*>(in + i) : zero;
  const int rows = min(ROWS, r.h - y0);
  const bool whole = col >= 0 && col + 4 <= r.w;
  auto row = [&](float4 s) {
    float w = __shfl_up_sync(0xffffffffu, c.w, 1), e = __shfl_down_sync(0xffffffffu, c.x, 1);
    if (load && lane == 0) w = in[i - 1];
    if (load && lane == 31) e = in[i + 4];
    const float4 o = make_float4(rule(c.x, n.x, s.x, w, c.y), rule(c.y, n.y, s.y, c.x, c.z),
                                 rule(c.z, n.z, s.z, c.y, c.w), rule(c.w, n.w, s.w, c.z, e));
    if (whole) {
      *reinterpret_cast<float4*>(out + i) = o;
    } else if (load) {
      if (col >= 0 && col < r.w) out[i] = o.x;
      if (col + 1 >= 0 && col + 1 < r.w) out[i + 1] = o.y;
      if (col + 2 >= 0 && col + 2 < r.w) out[i + 2] = o.z;
      if (col + 3 >= 0 && col + 3 < r.w) out[i + 3] = o.w;
    }
  };
  auto next_row = [&] {  // the row at i, its south neighbours loaded here; then the window moves one row down
    const float4 s = load ? *reinterpret_cast<const float4*>(in + i + pitch) : zero;
    row(s);
    n = c;
    c = s;
    i += pitch;
  };
  if (rows == ROWS) {  // a whole strip: unrolled
#pragma unroll
    for (int k = 0; k < ROWS; ++k) next_row();
  } else {
    for (int k = 0; k < rows; ++k) next_row();
  }
}

/// The copies in `copies` (blockIdx.z picks one), each a w × h rectangle. (A template only so that the
/// header can be included by several translation units.)
template <int kUnused = 0>
__global__ void halo_copy_kernel(const HaloCopy* __restrict__ copies) {
  const HaloCopy c = copies[blockIdx.z];
  const int64_t n = int64_t(c.w) * c.h;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int y = int(k / c.w), x = int(k % c.w);
    c.dst[size_t(y) * c.dst_pitch + x] = c.src[size_t(y) * c.src_pitch + x];
  }
}

/// Fills the interior of a tile from `init(gx, gy)` (global coordinates) and zeroes its halo.
template <class Init>
__global__ void halo_fill_kernel(float* a, int pitch, int width, int rows, int depth, HaloTile t, Init init) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= rows) return;
  const bool inside = x >= depth && x < depth + t.w && y >= depth && y < depth + t.h;
  a[size_t(y) * pitch + x] = inside ? init(t.gx0 + x - depth, t.gy0 + y - depth) : 0.0f;
}

/// The partitioned run on G GPUs.
template <class Rule>
class HaloGpu {
 public:
  /// Allocates the partitions on GPUs 0 … G−1 (plan.cfg.gpus; G > 1 loads NCCL, see sched/lattice/nccl_api.h).
  explicit HaloGpu(HaloPlan plan, Rule rule = {}) : plan_(std::move(plan)), rule_(rule) {
    const int G = plan_.cfg.gpus, d = plan_.depth();
    int present = 0;
    MV_HALO_CUDA(cudaGetDeviceCount(&present), 0);
    if (G > present)
      throw InputError("", "--gpus", "must be at most the " + std::to_string(present) + " GPU(s) present, got " + std::to_string(G));
    MV_HALO_CUDA(cudaGetDevice(&home_), 0);
    try {
      gpus_.resize(size_t(G));
      for (int g = 0; g < G; ++g) {
        Gpu& u = gpus_[size_t(g)];
        set_device(g);
        int lo = 0, hi = 0;
        MV_HALO_CUDA(cudaDeviceGetStreamPriorityRange(&lo, &hi), g);
        MV_HALO_CUDA(cudaStreamCreateWithPriority(&u.compute, cudaStreamNonBlocking, lo), g);
        MV_HALO_CUDA(cudaStreamCreateWithPriority(&u.comm, cudaStreamNonBlocking, hi), g);
      }
      const size_t P = plan_.tiles.size();
      tiles_.resize(P);
      for (size_t t = 0; t < P; ++t) {
        const HaloTile& T = plan_.tiles[t];
        Tile& x = tiles_[t];
        set_device(T.gpu);
        // Rows padded to 32 floats and the first interior column on a 128-byte line: every warp of the
        // compute kernel reads and writes whole lines.
        x.lead = (kHaloAlign - d % kHaloAlign) % kHaloAlign;
        x.pitch = (x.lead + T.pitch(d) + kHaloAlign - 1) / kHaloAlign * kHaloAlign;
        const size_t bytes = size_t(x.pitch) * size_t(T.rows(d)) * sizeof(float);
        for (int k = 0; k < 2; ++k) {
          MV_HALO_CUDA(cudaMalloc(&x.alloc[k], bytes), T.gpu);
          MV_HALO_CUDA(cudaMemset(x.alloc[k], 0, bytes), T.gpu);
          x.field[k] = x.alloc[k] + x.lead;
        }
        MV_HALO_CUDA(cudaMalloc(&x.send, std::max<size_t>(1, plan_.send_floats[t]) * sizeof(float)), T.gpu);
        MV_HALO_CUDA(cudaMalloc(&x.recv, std::max<size_t>(1, plan_.recv_floats[t]) * sizeof(float)), T.gpu);
      }
      build_copies();
      if (G > 1) {
  #if MV_HAVE_NCCL
        nccl_ = &nccl_api();
        comms_.resize(size_t(G));
        std::vector<int> devs(static_cast<size_t>(G));
        for (int g = 0; g < G; ++g) devs[size_t(g)] = g;
        MV_HALO_NCCL(*nccl_, nccl_->comm_init_all(comms_.data(), G, devs.data()), 0);
  #else
        nccl_api();  // throws: no NCCL in this build
  #endif
      }
    } catch (...) {
      release();  // what was made so far (the destructor does not run for a throwing constructor)
      throw;
    }
    restore_device();
  }

  ~HaloGpu() { release(); }
  HaloGpu(const HaloGpu&) = delete;
  HaloGpu& operator=(const HaloGpu&) = delete;

 private:
  /// Frees every stream, event, buffer and communicator made (null handles are skipped).
  void release() {
    for (size_t g = 0; g < gpus_.size(); ++g) {
      cudaSetDevice(int(g));
      cudaDeviceSynchronize();
    }
#if MV_HAVE_NCCL
    for (ncclComm_t c : comms_)
      if (c && nccl_) nccl_->comm_destroy(c);
#endif
    for (size_t t = 0; t < tiles_.size(); ++t) {
      cudaSetDevice(plan_.tiles[t].gpu);
      cudaFree(tiles_[t].alloc[0]);
      cudaFree(tiles_[t].alloc[1]);
      cudaFree(tiles_[t].send);
      cudaFree(tiles_[t].recv);
    }
    for (size_t g = 0; g < gpus_.size(); ++g) {
      Gpu& u = gpus_[g];
      cudaSetDevice(int(g));
      for (cudaEvent_t e : u.events) cudaEventDestroy(e);
      for (HaloCopy* p : u.copy_tables) cudaFree(p);
      if (u.compute) cudaStreamDestroy(u.compute);
      if (u.comm) cudaStreamDestroy(u.comm);
    }
    gpus_.clear();
    tiles_.clear();
    cudaSetDevice(home_);
  }

 public:
  const HaloPlan& plan() const { return plan_; }
  /// NCCL's version (e.g. 22809) when G > 1, else 0.
  int nccl_version() const { return nccl_ ? nccl_->version : 0; }

  /// Fills every partition from `init(gx, gy)` (a __device__-callable functor) and restarts the period.
  template <class Init>
  void fill(Init init) {
    const int d = plan_.depth();
    for (size_t t = 0; t < tiles_.size(); ++t) {
      const HaloTile& T = plan_.tiles[t];
      set_device(T.gpu);
      const dim3 block(32, 8), grid(unsigned((T.pitch(d) + 31) / 32), unsigned((T.rows(d) + 7) / 8));
      halo_fill_kernel<<<grid, block, 0, gpus_[size_t(T.gpu)].compute>>>(tiles_[t].field[parity_], tiles_[t].pitch, T.pitch(d), T.rows(d), d, T, init);
      MV_HALO_LAUNCH(T.gpu);
    }
    sync();
    j_ = 0;
  }
  /// Sets the field from a global n × n row-major host array and restarts the exchange period.
  void set_field(const std::vector<float>& global) {
    const int n = plan_.cfg.n, d = plan_.depth();
    for (size_t t = 0; t < tiles_.size(); ++t) {
      const HaloTile& T = plan_.tiles[t];
      set_device(T.gpu);
      MV_HALO_CUDA(cudaMemcpy2D(tiles_[t].field[parity_] + size_t(d) * tiles_[t].pitch + d, size_t(tiles_[t].pitch) * sizeof(float),
                                global.data() + size_t(T.gy0) * n + size_t(T.gx0), size_t(n) * sizeof(float),
                                size_t(T.w) * sizeof(float), size_t(T.h), cudaMemcpyHostToDevice),
                   T.gpu);
    }
    restore_device();
    j_ = 0;
  }
  /// The field as a global n × n row-major host array.
  void get_field(std::vector<float>& global) {
    sync();
    const int n = plan_.cfg.n, d = plan_.depth();
    global.resize(size_t(n) * n);
    for (size_t t = 0; t < tiles_.size(); ++t) {
      const HaloTile& T = plan_.tiles[t];
      set_device(T.gpu);
      MV_HALO_CUDA(cudaMemcpy2D(global.data() + size_t(T.gy0) * n + size_t(T.gx0), size_t(n) * sizeof(float),
                                tiles_[t].field[parity_] + size_t(d) * tiles_[t].pitch + d, size_t(tiles_[t].pitch) * sizeof(float),
                                size_t(T.w) * sizeof(float), size_t(T.h), cudaMemcpyDeviceToHost),
                   T.gpu);
    }
    restore_device();
  }
  /// Partition t's current field on its GPU: site (x, y) of the tile's array (interior from (d, d)) at
  /// tile_field(t) + y · tile_pitch(t) + x.
  const float* tile_field(size_t t) const { return tiles_[t].field[parity_]; }
  int tile_pitch(size_t t) const { return tiles_[t].pitch; }

  /// Enqueues `k` iterations with their timing; collect() (or times()) waits for them.
  void step(uint64_t k) {
    Gpu& g0 = gpus_[0];
    set_device(0);
    cudaEvent_t start = event(0);
    MV_HALO_CUDA(cudaEventRecord(start, g0.compute), 0);
    for (uint64_t i = 0; i < k; ++i) {
      iterate();
      if (gpus_[0].next_event > 3000) {  // keep the event pool small: settle what ran so far
        cudaEvent_t mid = event(0);
        join_into_first(mid);
        collect_events();
        total_pending_.push_back({start, mid});
        settle_totals();
        start = event(0);
        set_device(0);
        MV_HALO_CUDA(cudaEventRecord(start, g0.compute), 0);
      }
    }
    cudaEvent_t end = event(0);
    join_into_first(end);
    total_pending_.push_back({start, end});
    restore_device();
  }

  /// Waits for everything enqueued and returns the accumulated phase times.
  const HaloPhaseTimes& times() {
    collect_events();
    settle_totals();
    return times_;
  }
  void reset_times() {
    times();
    times_ = {};
  }
  /// Waits for every GPU.
  void sync() {
    for (size_t g = 0; g < gpus_.size(); ++g) {
      set_device(int(g));
      MV_HALO_CUDA(cudaDeviceSynchronize(), int(g));
    }
    restore_device();
  }

 private:
  struct Tile {
    float* alloc[2] = {nullptr, nullptr};  // what cudaMalloc returned
    float* field[2] = {nullptr, nullptr};  // alloc + lead: site (x, y) at field + y·pitch + x
    int pitch = 0, lead = 0;
    float* send = nullptr;
    float* recv = nullptr;
  };
  enum Kind { kCompute, kInner, kOuter, kPack, kExchange, kUnpack, kWait, kKinds };
  struct Timed {
    Kind kind;
    cudaEvent_t a, b;
  };
  /// The copies of one (phase, parity) on one GPU: pack, same-GPU moves, unpack (device tables).
  struct CopySet {
    HaloCopy* pack = nullptr;
    int pack_count = 0;
    HaloCopy* move = nullptr;
    int move_count = 0;
    HaloCopy* unpack = nullptr;
    int unpack_count = 0;
    int max_sites = 0;
  };
  struct Gpu {
    cudaStream_t compute = nullptr, comm = nullptr;
    std::vector<cudaEvent_t> events;
    size_t next_event = 0;
    std::vector<Timed> timed;
    std::vector<std::vector<CopySet>> copies;  // [phase][parity]
    std::vector<HaloCopy*> copy_tables;
  };

  void set_device(int g) { MV_HALO_CUDA(cudaSetDevice(g), g); }
  void restore_device() { cudaSetDevice(home_); }

  cudaEvent_t event(int g) {
    Gpu& u = gpus_[size_t(g)];
    if (u.next_event == u.events.size()) {
      set_device(g);
      cudaEvent_t e;
      MV_HALO_CUDA(cudaEventCreate(&e), g);
      u.events.push_back(e);
    }
    return u.events[u.next_event++];
  }
  /// Records an event on stream `s` of GPU g (the current device must be g).
  cudaEvent_t mark(int g, cudaStream_t s) {
    cudaEvent_t e = event(g);
    MV_HALO_CUDA(cudaEventRecord(e, s), g);
    return e;
  }

  /// Makes GPU 0's compute stream wait for every GPU's streams and records `e` there.
  void join_into_first(cudaEvent_t e) {
    for (size_t g = 0; g < gpus_.size(); ++g) {
      set_device(int(g));
      cudaEvent_t c = mark(int(g), gpus_[g].comm);
      MV_HALO_CUDA(cudaStreamWaitEvent(gpus_[g].compute, c, 0), int(g));
      if (g > 0) {
        cudaEvent_t done = mark(int(g), gpus_[g].compute);
        set_device(0);
        MV_HALO_CUDA(cudaStreamWaitEvent(gpus_[0].compute, done, 0), 0);
      }
    }
    set_device(0);
    MV_HALO_CUDA(cudaEventRecord(e, gpus_[0].compute), 0);
  }

  void build_copies() {
    const int d = plan_.depth();
    for (size_t g = 0; g < gpus_.size(); ++g) gpus_[g].copies.assign(plan_.phases.size(), std::vector<CopySet>(2));
    for (size_t ph = 0; ph < plan_.phases.size(); ++ph)
      for (int parity = 0; parity < 2; ++parity) {
        std::vector<std::vector<HaloCopy>> pack(gpus_.size()), move(gpus_.size()), unpack(gpus_.size());
        std::vector<int> max_sites(gpus_.size(), 0);
        for (const HaloMessage& m : plan_.phases[ph]) {
          const HaloTile &S = plan_.tiles[size_t(m.src)], &R = plan_.tiles[size_t(m.dst)];
          const Tile &s = tiles_[size_t(m.src)], &r = tiles_[size_t(m.dst)];
          const int w = m.from.w, h = m.from.h;
          pack[size_t(S.gpu)].push_back({s.field[parity] + size_t(m.from.y0) * s.pitch + m.from.x0, s.send + m.send_offset,
                                         s.pitch, w, w, h});
          unpack[size_t(R.gpu)].push_back({r.recv + m.recv_offset, r.field[parity] + size_t(m.to.y0) * r.pitch + m.to.x0,
                                           w, r.pitch, w, h});
          if (S.gpu == R.gpu) move[size_t(S.gpu)].push_back({s.send + m.send_offset, r.recv + m.recv_offset, w * h, w * h, w * h, 1});
          max_sites[size_t(S.gpu)] = std::max(max_sites[size_t(S.gpu)], w * h);
          max_sites[size_t(R.gpu)] = std::max(max_sites[size_t(R.gpu)], w * h);
        }
        for (size_t g = 0; g < gpus_.size(); ++g) {
          set_device(int(g));
          CopySet& c = gpus_[g].copies[ph][size_t(parity)];
          auto upload = [&](const std::vector<HaloCopy>& v, HaloCopy*& dst, int& count) {
            count = int(v.size());
            if (v.empty()) return;
            MV_HALO_CUDA(cudaMalloc(&dst, v.size() * sizeof(HaloCopy)), int(g));
            gpus_[g].copy_tables.push_back(dst);
            MV_HALO_CUDA(cudaMemcpy(dst, v.data(), v.size() * sizeof(HaloCopy), cudaMemcpyHostToDevice), int(g));
          };
          upload(pack[g], c.pack, c.pack_count);
          upload(move[g], c.move, c.move_count);
          upload(unpack[g], c.unpack, c.unpack_count);
          c.max_sites = max_sites[g];
        }
      }
  }

  void copy(int g, cudaStream_t s, const HaloCopy* table, int count, int max_sites) {
    if (count == 0) return;
    const int threads = 256;
    const int blocks = std::max(1, std::min(1024, (max_sites + threads - 1) / threads));
    halo_copy_kernel<><<<dim3(unsigned(blocks), 1, unsigned(count)), threads, 0, s>>>(table);
    MV_HALO_LAUNCH(g);
  }

  /// Moves phase `ph` between GPUs: every cross-GPU message of the global list, in list order, as an
  /// ncclSend on the sender's communicator and an ncclRecv on the receiver's, in one group.
  void nccl_move(size_t ph, const std::vector<cudaStream_t>& streams) {
#if MV_HAVE_NCCL
    if (gpus_.size() < 2) return;
    const NcclApi& api = *nccl_;
    MV_HALO_NCCL(api, api.group_start(), 0);
    for (const HaloMessage& m : plan_.phases[ph]) {
      const int sg = plan_.tiles[size_t(m.src)].gpu, rg = plan_.tiles[size_t(m.dst)].gpu;
      if (sg == rg) continue;
      const size_t count = size_t(m.from.sites());
      MV_HALO_NCCL(api, api.send(tiles_[size_t(m.src)].send + m.send_offset, count, ncclFloat, rg, comms_[size_t(sg)], streams[size_t(sg)]), sg);
      MV_HALO_NCCL(api, api.recv(tiles_[size_t(m.dst)].recv + m.recv_offset, count, ncclFloat, sg, comms_[size_t(rg)], streams[size_t(rg)]), rg);
    }
    MV_HALO_NCCL(api, api.group_end(), 0);
#else
    (void)ph;
    (void)streams;
#endif
  }

  /// Runs the exchange on stream `comm_of(g)`; with overlap, calls `after_first_pack(g)` once the first
  /// phase's pack is enqueued on GPU g. Returns, per GPU, the event at the end of the last unpack.
  template <class AfterPack>
  std::vector<cudaEvent_t> exchange(bool on_comm, AfterPack after_first_pack) {
    const size_t G = gpus_.size();
    std::vector<cudaStream_t> streams(G);
    for (size_t g = 0; g < G; ++g) streams[g] = on_comm ? gpus_[g].comm : gpus_[g].compute;
    std::vector<cudaEvent_t> last(G);
    for (size_t ph = 0; ph < plan_.phases.size(); ++ph) {
      std::vector<cudaEvent_t> packed(G);
      for (size_t g = 0; g < G; ++g) {
        set_device(int(g));
        const CopySet& c = gpus_[g].copies[ph][size_t(parity_)];
        cudaEvent_t a = mark(int(g), streams[g]);
        copy(int(g), streams[g], c.pack, c.pack_count, c.max_sites);
        packed[g] = mark(int(g), streams[g]);
        gpus_[g].timed.push_back({kPack, a, packed[g]});
        if (ph == 0) after_first_pack(int(g), packed[g]);
        copy(int(g), streams[g], c.move, c.move_count, c.max_sites);
      }
      nccl_move(ph, streams);
      for (size_t g = 0; g < G; ++g) {
        set_device(int(g));
        const CopySet& c = gpus_[g].copies[ph][size_t(parity_)];
        cudaEvent_t moved = mark(int(g), streams[g]);
        gpus_[g].timed.push_back({kExchange, packed[g], moved});
        copy(int(g), streams[g], c.unpack, c.unpack_count, c.max_sites);
        last[g] = mark(int(g), streams[g]);
        gpus_[g].timed.push_back({kUnpack, moved, last[g]});
      }
    }
    return last;
  }

  void compute(int g, size_t t, const HaloRectSet& set) {
    for (int i = 0; i < set.count; ++i) compute(g, t, set.r[i]);
  }
  void compute(int g, size_t t, const HaloRect& r) {
    switch (plan_.cfg.kernel) {
      case 1: return launch<128, 2, 8>(g, t, r);
      case 2: return launch<256, 1, 16>(g, t, r);
      case 3: return launch<32, 8, 4>(g, t, r);
      case 4: return launch<512, 1, 16>(g, t, r);
      case 5: return launch<256, 1, 32>(g, t, r);
      case 6: return launch<128, 1, 16, true>(g, t, r);
      case 7: return launch<64, 2, 16, true>(g, t, r);
      default: return launch<64, 4, 8>(g, t, r);
    }
  }
  /// `rule` over r (one launch): blocks of BX × BY threads, each thread ROWS rows; the x range starts at
  /// the 32-float line holding r.x0.
  template <int BX, int BY, int ROWS, bool kVec4 = false>
  void launch(int g, size_t t, const HaloRect& r) {
    if (r.w <= 0 || r.h <= 0) return;
    const int lead = (tiles_[t].lead + r.x0) % kHaloAlign;
    const int per_block = kVec4 ? 4 * BX : BX;
    const dim3 grid(unsigned((r.w + lead + per_block - 1) / per_block), unsigned((r.h + BY * ROWS - 1) / (BY * ROWS)));
    const cudaStream_t s = gpus_[size_t(g)].compute;
    if constexpr (kVec4)
      halo_compute_kernel_v4<Rule, BX, BY, ROWS><<<grid, dim3(BX, BY), 0, s>>>(
          tiles_[t].field[parity_], tiles_[t].field[1 - parity_], tiles_[t].pitch, r, lead, rule_);
    else
      halo_compute_kernel<Rule, BX, BY, ROWS><<<grid, dim3(BX, BY), 0, s>>>(
          tiles_[t].field[parity_], tiles_[t].field[1 - parity_], tiles_[t].pitch, r, lead, rule_);
    MV_HALO_LAUNCH(g);
  }
  static HaloRectSet one(HaloRect r) {
    HaloRectSet s;
    s.r[0] = r;
    s.count = 1;
    return s;
  }
  /// Computes region `region(t)` of every partition on each GPU's compute stream, timed as `kind`.
  template <class Region>
  void compute_all(Kind kind, Region region) {
    for (size_t g = 0; g < gpus_.size(); ++g) {
      set_device(int(g));
      cudaEvent_t a = mark(int(g), gpus_[g].compute);
      for (size_t t = 0; t < tiles_.size(); ++t)
        if (plan_.tiles[t].gpu == int(g)) compute(int(g), t, region(t));
      gpus_[g].timed.push_back({kind, a, mark(int(g), gpus_[g].compute)});
    }
  }

  void iterate() {
    const size_t G = gpus_.size();
    if (j_ == 0) {
      ++times_.exchanges;
      if (plan_.cfg.overlap) {
        // The exchange on the comm stream after the previous iteration; the inner compute after the pack.
        for (size_t g = 0; g < G; ++g) {
          set_device(int(g));
          MV_HALO_CUDA(cudaStreamWaitEvent(gpus_[g].comm, mark(int(g), gpus_[g].compute), 0), int(g));
        }
        std::vector<cudaEvent_t> inner_end(G);
        const std::vector<cudaEvent_t> last = exchange(true, [&](int g, cudaEvent_t packed) {
          Gpu& u = gpus_[size_t(g)];
          MV_HALO_CUDA(cudaStreamWaitEvent(u.compute, packed, 0), g);
          cudaEvent_t a = mark(g, u.compute);
          for (size_t t = 0; t < tiles_.size(); ++t)
            if (plan_.tiles[t].gpu == g) compute(g, t, one(plan_.inner_rect(int(t))));
          inner_end[size_t(g)] = mark(g, u.compute);
          u.timed.push_back({kInner, a, inner_end[size_t(g)]});
        });
        for (size_t g = 0; g < G; ++g) {
          set_device(int(g));
          gpus_[g].timed.push_back({kWait, inner_end[g], last[g]});
          MV_HALO_CUDA(cudaStreamWaitEvent(gpus_[g].compute, last[g], 0), int(g));
        }
        compute_all(kOuter, [&](size_t t) {
          HaloRectSet s;
          for (const HaloRect& r : plan_.outer_rects(int(t))) s.r[s.count++] = r;
          return s;
        });
      } else {
        exchange(false, [](int, cudaEvent_t) {});
        compute_all(kCompute, [&](size_t t) { return one(plan_.compute_rect(int(t), 0)); });
      }
    } else {
      compute_all(kCompute, [&](size_t t) { return one(plan_.compute_rect(int(t), j_)); });
    }
    parity_ = 1 - parity_;
    j_ = (j_ + 1) % plan_.depth();
    ++times_.iterations;
  }

  /// Waits for the timed events and adds them (per kind, the largest sum over the GPUs).
  void collect_events() {
    sync();
    double best[kKinds] = {};
    for (size_t g = 0; g < gpus_.size(); ++g) {
      double sum[kKinds] = {};
      set_device(int(g));
      for (const Timed& t : gpus_[g].timed) {
        float ms = 0;
        MV_HALO_CUDA(cudaEventElapsedTime(&ms, t.a, t.b), int(g));
        sum[t.kind] += std::max(0.0f, ms);
      }
      gpus_[g].timed.clear();
      for (int k = 0; k < kKinds; ++k) best[k] = std::max(best[k], sum[k]);
    }
    times_.compute_ms += best[kCompute];
    times_.inner_ms += best[kInner];
    times_.outer_ms += best[kOuter];
    times_.pack_ms += best[kPack];
    times_.exchange_ms += best[kExchange];
    times_.unpack_ms += best[kUnpack];
    times_.wait_ms += best[kWait];
  }
  /// Adds the pending end-to-end intervals (after collect_events) and recycles every event.
  void settle_totals() {
    set_device(0);
    for (const auto& [a, b] : total_pending_) {
      float ms = 0;
      MV_HALO_CUDA(cudaEventElapsedTime(&ms, a, b), 0);
      times_.total_ms += ms;
    }
    total_pending_.clear();
    for (Gpu& u : gpus_) u.next_event = 0;
    restore_device();
  }

  HaloPlan plan_;
  Rule rule_;
  int home_ = 0;
  std::vector<Gpu> gpus_;
  std::vector<Tile> tiles_;
  int parity_ = 0;  // tiles_[t].field[parity_] is the current field
  int j_ = 0;       // iterations since the last exchange
  HaloPhaseTimes times_;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> total_pending_;
  const NcclApi* nccl_ = nullptr;
#if MV_HAVE_NCCL
  std::vector<ncclComm_t> comms_;
#endif
};

}  // namespace mv
