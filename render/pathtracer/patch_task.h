// The patch task: megaview's unit of path-tracing work (Kerbl 2012, §6.3).
//
// A task is one 4×4 pixel patch. One execution traces `paths_per_pixel` new paths for each pixel of the
// patch (2 by default, as in the paper), adds them to the film, and computes the patch's new priority
// (render/pathtracer/priority.h); a patch is finished once its pixels reach the target spp, or, under the priority
// function `adaptive`, once it and its one-pixel ring have converged (render/pathtracer/priority.h). The per-pixel work
// (`pixel_sample`) and the per-pixel priority term are shared, and two mappings run them:
//  - `run_task`: the calling thread executes the whole task (CPU strategies, tests);
//  - `run_task_warp`: the calling warp executes it, lane l tracing pixel l mod 16 and every second
//    sample starting at l / 16 (a full patch at 2 paths per pixel is exactly 32 paths: one warp).
// Both add the same samples (sample index = samples done before + j) and so give the same film up to
// float summation order. No two executions of one task may run at once under these two: strategies
// guarantee that. A third mapping lets several warps execute one task at the same time:
//  - `run_task_warp_shared`: like run_task_warp, but the batch's sample indices are reserved atomically
//    on the patch's spp (shared_batch_samples: each index once, the patch ends exactly at the target) and
//    the batch is added to the film under a per-patch lock, as run_task_warp adds it, so that every
//    priority is computed from a consistent film (all earlier commits, none half-done). The samples are the
//    same; their summation order, and which batches a priority sees, depend on the order in which the
//    warps finish tracing, so results equal run_task_warp's statistically, not bitwise.
#pragma once

#include "render/film.h"
#include "render/pathtracer/integrator.h"
#include "render/pathtracer/priority.h"
#include "render/pathtracer/scene.h"

namespace mv {

struct PatchTaskParams {
  uint32_t paths_per_pixel = 2;  ///< new samples per pixel per execution, [1, 64]
  uint32_t target_spp = 512;     ///< a patch is finished at this many samples per pixel, [1, kMaxTargetSpp]
  uint32_t seed = 0;             ///< selects the random streams; same seed, same image
  PriorityFunction priority = PriorityFunction::Convergence;
  /// Noise threshold t of PriorityFunction::Adaptive (dimensionless, (0, 1]; Cycles' "Noise Threshold"):
  /// a pixel converges when its error is below 5·t; the min samples follow from t (render/pathtracer/priority.h).
  float noise_threshold = kDefaultNoiseThreshold;
};

/// True if a patch with `spp` samples per pixel and adaptive-sampling state `state` (FilmView::patch_state)
/// is finished under `p`: at the target, or stopped by PriorityFunction::Adaptive's rule while that is the
/// priority function (under the others a stopped patch samples on to the target).
MV_HD MV_INLINE bool patch_finished(uint32_t spp, uint32_t state, const PatchTaskParams& p) {
  return spp >= p.target_spp || (p.priority == PriorityFunction::Adaptive && (state & kPatchStopped) != 0);
}

/// Samples per pixel that the next batch of a patch with `spp` samples per pixel (reserved, for
/// run_task_warp_shared) and adaptive-sampling state `state` adds under `p`: paths_per_pixel, fewer at the
/// end so that the patch stops exactly at the target, 0 once it is finished (patch_finished).
MV_HD MV_INLINE uint32_t shared_batch_samples(uint32_t spp, uint32_t state, const PatchTaskParams& p) {
  if (patch_finished(spp, state, p)) return 0;
  const uint32_t left = p.target_spp - spp;
  return p.paths_per_pixel < left ? p.paths_per_pixel : left;
}

/// A radiance sample as the film takes it: a non-finite sample (±inf or NaN in any channel) becomes black,
/// since it would poison the pixel's sum forever; a finite one is returned unchanged.
MV_HD MV_INLINE Vec3 sanitize_sample(Vec3 l) {
  // x - x is 0 for finite x and NaN for ±inf and NaN (no fast-math in this project).
  return ((l.x - l.x) == 0.f && (l.y - l.y) == 0.f && (l.z - l.z) == 0.f) ? l : Vec3{0.f};
}

/// Sums of `k` sanitized samples of one pixel: radiance (linear RGB) and its square, per channel, and
/// 2 × radiance over the samples of odd index (FilmView::half_sum).
struct PixelSampleSums {
  Vec3 sum{0.f}, sum_sq{0.f}, half{0.f};
};

/// Traces samples first, first + 1, …, first + k − 1 of pixel (x, y) (pixel_sample, each through
/// sanitize_sample) and adds them in that order: the per-pixel arithmetic of one patch-task execution
/// (PatchTaskView::run_task) and of one update of a path-tracer strand (render/strands/path_tracer_strands.h),
/// so the two give the same bits.
MV_HD MV_INLINE PixelSampleSums trace_pixel_samples(const SceneView& scene, uint32_t seed, int x, int y, uint32_t first,
                                                    uint32_t k) {
  PixelSampleSums s;
  for (uint32_t j = 0; j < k; ++j) {
    const Vec3 l = sanitize_sample(pixel_sample(scene, seed, x, y, first + j));
    s.sum += l;
    s.sum_sq += l * l;
    if ((first + j) & 1u) s.half += l * 2.f;
  }
  return s;
}

/// Everything a task execution reads and writes; pointers all on one side (host or device).
struct PatchTaskView {
  SceneView scene;
  FilmView film;
  float* priority = nullptr;         ///< per task
  WorkCounters* counters = nullptr;  ///< device side only (may be null on the host)
  PatchTaskParams params;

  MV_HD uint32_t num_tasks() const { return film.grid.num_patches(); }
  /// At the target spp, or stopped by the adaptive-sampling rule (patch_finished).
  MV_HD bool finished(uint32_t task) const {
    return patch_finished(film.patch_spp[task], load_relaxed(&film.patch_state[task]), params);
  }

  /// Executes `task` on the calling thread. Returns the number of paths traced (0 if already finished).
  MV_HD uint32_t run_task(uint32_t task) const {
    if (finished(task)) return 0;
    const uint32_t n_old = film.patch_spp[task];
    const uint32_t k = min_u(params.paths_per_pixel, params.target_spp - n_old);
    const AdaptiveWork ad = adaptive_work(n_old, n_old + k);
    float term_sum = 0.f;
    int pixels = 0;
    uint32_t converged = 0;
    for (int i = 0; i < kPatchPixels; ++i) {
      int x, y;
      if (!film.grid.pixel(task, i, x, y)) {
        converged |= 1u << i;  // outside the image
        continue;
      }
      const PixelSampleSums a = trace_pixel_samples(scene, params.seed, x, y, n_old, k);
      const Committed c = commit_pixel(static_cast<uint32_t>(y * film.grid.width + x), a, n_old, k, ad.evaluate);
      term_sum += c.term;
      converged |= c.converged ? 1u << i : 0u;
      ++pixels;
    }
    const bool stopped = ad.evaluate && record_convergence(task, converged, ad.check);
    float prior = 0.f;
    if (params.priority == PriorityFunction::Neyman)
      for (int j = 0; j < 8; ++j) prior = fmaxf(prior, neighbour_variance(task, j));
    film.patch_spp[task] = n_old + k;
    priority[task] = stopped ? kFinishedPriority
                             : patch_priority(params.priority, term_sum, pixels, n_old + k, params.target_spp, prior);
    return static_cast<uint32_t>(pixels) * k;
  }

#if defined(__CUDACC__)
  /// Executes `task` with the calling (full, converged) warp. Returns the paths traced, in every lane.
  __device__ uint32_t run_task_warp(uint32_t task) const {
    constexpr unsigned kFull = 0xffffffffu;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    // Only this execution may change the task's spp and state, so every lane reads the same values.
    if (finished(task)) return 0;
    const uint32_t n_old = film.patch_spp[task];
    const uint32_t k = min_u(params.paths_per_pixel, params.target_spp - n_old);
    const AdaptiveWork ad = adaptive_work(n_old, n_old + k);
    int x, y;
    const bool valid = film.grid.pixel(task, lane & 15, x, y);
    const PixelSampleSums acc = trace_patch_samples_warp(lane, valid, x, y, n_old, k);
    const bool writer = valid && lane < 16;
    Committed c{0.f, false};
    if (writer) c = commit_pixel(static_cast<uint32_t>(y * film.grid.width + x), acc, n_old, k, ad.evaluate);
    float term = c.term;
    for (int off = 8; off > 0; off >>= 1) term += __shfl_xor_sync(kFull, term, off);
    const int pixels = __popc(__ballot_sync(kFull, writer));
    // Bit i: pixel i (lane i < 16) converged or outside the image.
    const uint32_t converged = __ballot_sync(kFull, lane < 16 && (!valid || c.converged)) & kPatchPixelsConverged;
    const float prior = neyman_prior_warp(task, lane);
    if (lane == 0) {
      const bool stopped = ad.evaluate && record_convergence(task, converged, ad.check);
      film.patch_spp[task] = n_old + k;
      priority[task] = stopped ? kFinishedPriority
                               : patch_priority(params.priority, term, pixels, n_old + k, params.target_spp, prior);
      if (counters) {
        atomicAdd(&counters->work, static_cast<unsigned long long>(pixels) * k);
        atomicAdd(&counters->tasks, 1u);
        if (stopped || n_old + k >= params.target_spp) atomicAdd(&counters->finished, 1u);
      }
    }
    __syncwarp();
    return static_cast<uint32_t>(pixels) * k;
  }

  /// Tasks of this view may run on several warps at once through run_task_warp_shared (what
  /// MegakernelSettings::patch_lanes > 1 requires of a workload).
  static constexpr bool kSharedExecutions = true;

  /// Executes one batch of `task` with the calling (full, converged) warp while other warps may execute
  /// batches of the same task: lane 0 reserves the batch's sample indices [n, n + k) with a CAS on the
  /// patch's spp (k = shared_batch_samples), the warp traces them as run_task_warp does, then adds them to
  /// the film while it holds the patch's `commit_lock` (a word owned by the caller, 0 = free; held for the
  /// 16 pixels' read-modify-write only, so a waiter waits for at most a few other commits): each pixel
  /// takes the batch on top of the samples already added (its own spp), so the priority terms come from
  /// consistent sums. The patch's priority uses its reserved spp (batches in flight included) and is
  /// kFinishedPriority once every sample is reserved or the patch stopped; the adaptive stop, once set,
  /// stays. patch_spp counts reserved samples: at the end of a kernel (every execution complete) it equals
  /// the film's. WorkCounters::finished counts the commit that makes the priority kFinishedPriority.
  /// Returns the paths traced (0 if the patch was finished), in every lane.
  __device__ uint32_t run_task_warp_shared(uint32_t task, uint32_t* commit_lock) const {
    constexpr unsigned kFull = 0xffffffffu;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    uint32_t n_old = 0, k = 0;
    if (lane == 0) {
      cuda::atomic_ref<uint32_t, cuda::thread_scope_device> spp(film.patch_spp[task]);
      n_old = spp.load(cuda::memory_order_relaxed);
      for (;;) {
        k = shared_batch_samples(n_old, load_relaxed(&film.patch_state[task]), params);
        if (k == 0 || spp.compare_exchange_weak(n_old, n_old + k, cuda::memory_order_relaxed)) break;
      }
    }
    n_old = __shfl_sync(kFull, n_old, 0);
    k = __shfl_sync(kFull, k, 0);
    if (k == 0) return 0;
    const AdaptiveWork ad = adaptive_work(n_old, n_old + k);
    int x, y;
    const bool valid = film.grid.pixel(task, lane & 15, x, y);
    const PixelSampleSums acc = trace_patch_samples_warp(lane, valid, x, y, n_old, k);
    const float prior = neyman_prior_warp(task, lane);
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> lock(*commit_lock);
    if (lane == 0) {
      // Acquire: the previous holder's film writes (ordered before its release by its __syncwarp) are
      // visible to this warp's reads after the __syncwarp below.
      uint32_t free = 0;
      while (!lock.compare_exchange_weak(free, 1u, cuda::memory_order_acquire, cuda::memory_order_relaxed)) {
        free = 0;
        __nanosleep(64);
      }
    }
    __syncwarp();
    const bool writer = valid && lane < 16;
    Committed c{0.f, false};
    if (writer) {
      const uint32_t idx = static_cast<uint32_t>(y * film.grid.width + x);
      c = commit_pixel(idx, acc, film.spp[idx], k, ad.evaluate);
    }
    float term = c.term;
    for (int off = 8; off > 0; off >>= 1) term += __shfl_xor_sync(kFull, term, off);
    const int pixels = __popc(__ballot_sync(kFull, writer));
    const uint32_t converged = __ballot_sync(kFull, lane < 16 && (!valid || c.converged)) & kPatchPixelsConverged;
    if (lane == 0) {
      const uint32_t state = load_relaxed(&film.patch_state[task]);
      if (ad.evaluate && (state & kPatchStopped) == 0) record_convergence(task, converged, ad.check);
      const uint32_t reserved = load_relaxed(&film.patch_spp[task]);
      const bool done = patch_finished(reserved, load_relaxed(&film.patch_state[task]), params);
      const bool was_done = priority[task] == kFinishedPriority;
      priority[task] = done ? kFinishedPriority
                            : patch_priority(params.priority, term, pixels, reserved, params.target_spp, prior);
      if (counters) {
        atomicAdd(&counters->work, static_cast<unsigned long long>(pixels) * k);
        atomicAdd(&counters->tasks, 1u);
        if (done && !was_done) atomicAdd(&counters->finished, 1u);
      }
    }
    __syncwarp();  // every lane's film writes before the release
    if (lane == 0) lock.store(0u, cuda::memory_order_release);
    return static_cast<uint32_t>(pixels) * k;
  }
#endif

 private:
  MV_HD static MV_INLINE uint32_t min_u(uint32_t a, uint32_t b) { return a < b ? a : b; }
#if defined(__CUDACC__)
  /// The batch [n_old, n_old + k) of pixel (x, y) traced by the two half-warps (half h takes the samples
  /// n_old + h, n_old + h + 2, …), the upper half's sums added into the lower's: lanes 0–15 hold the sums of
  /// the patch's pixel `lane` (zero where !valid). Called by the whole, converged warp.
  __device__ PixelSampleSums trace_patch_samples_warp(int lane, bool valid, int x, int y, uint32_t n_old,
                                                      uint32_t k) const {
    constexpr unsigned kFull = 0xffffffffu;
    PixelSampleSums acc;
    if (valid) {
      for (uint32_t j = static_cast<uint32_t>(lane >> 4); j < k; j += 2) {
        const Vec3 l = sanitize_sample(pixel_sample(scene, params.seed, x, y, n_old + j));
        acc.sum += l;
        acc.sum_sq += l * l;
        if ((n_old + j) & 1u) acc.half += l * 2.f;
      }
    }
    const auto add_upper_half = [](Vec3& v) {
      v.x += __shfl_down_sync(kFull, v.x, 16);
      v.y += __shfl_down_sync(kFull, v.y, 16);
      v.z += __shfl_down_sync(kFull, v.z, 16);
    };
    add_upper_half(acc.sum);
    add_upper_half(acc.sum_sq);
    add_upper_half(acc.half);
    return acc;
  }
  /// PriorityFunction::Neyman's prior of `task` (the largest variance of its eight neighbours; lane j < 8
  /// reads neighbour j, the warp takes the max), in every lane; 0 under the other priority functions.
  __device__ float neyman_prior_warp(uint32_t task, int lane) const {
    if (params.priority != PriorityFunction::Neyman) return 0.f;
    float prior = lane < 8 ? neighbour_variance(task, lane) : 0.f;
    for (int off = 4; off > 0; off >>= 1) prior = fmaxf(prior, __shfl_xor_sync(0xffffffffu, prior, off));
    return prior;
  }
#endif
  /// What commit_pixel reports: the pixel's priority term and, when evaluated, whether it converged.
  struct Committed {
    float term;
    bool converged;
  };
  /// PriorityFunction::Adaptive's work at the end of an execution n_old → n_new samples per pixel: record
  /// the pixels' convergence (from min samples on) and, at a check (adaptive_check_due), decide the stop.
  struct AdaptiveWork {
    bool evaluate, check;
  };
  MV_HD MV_INLINE AdaptiveWork adaptive_work(uint32_t n_old, uint32_t n_new) const {
    if (params.priority != PriorityFunction::Adaptive) return {false, false};
    const uint32_t min_spp = adaptive_min_spp(params.noise_threshold, params.target_spp);
    return {n_new >= min_spp, adaptive_check_due(n_old, n_new, min_spp)};
  }
  /// Adds k samples (`a`) to pixel `idx`, which had `n_old`; returns its priority term and, if `evaluate`,
  /// whether its adaptive-sampling error is below the threshold (false otherwise).
  MV_HD MV_INLINE Committed commit_pixel(uint32_t idx, const PixelSampleSums& a, uint32_t n_old, uint32_t k,
                                         bool evaluate) const {
    const Rgba32f s = film.sum[idx], q = film.sum_sq[idx], h = film.half_sum[idx];
    const Vec3 old_sum{s.r, s.g, s.b};
    const Vec3 sum = old_sum + a.sum;
    const Vec3 sum_sq = Vec3{q.r, q.g, q.b} + a.sum_sq;
    const Vec3 half = Vec3{h.r, h.g, h.b} + a.half;
    film.sum[idx] = Rgba32f{sum.x, sum.y, sum.z, 0.f};
    film.sum_sq[idx] = Rgba32f{sum_sq.x, sum_sq.y, sum_sq.z, 0.f};
    film.half_sum[idx] = Rgba32f{half.x, half.y, half.z, 0.f};
    film.spp[idx] = n_old + k;
    const bool converged =
        evaluate && adaptive_pixel_converged(adaptive_pixel_error(sum, half, n_old + k), params.noise_threshold);
    return {pixel_priority_term(params.priority, old_sum, n_old, sum, sum_sq, n_old + k), converged};
  }
  /// PriorityFunction::Neyman's prior from neighbour j ∈ [0, 8) of `task` (row by row over its 3×3 patch
  /// neighbourhood, the patch itself skipped): neyman_neighbour_variance of the neighbour's current priority
  /// and spp, 0 outside the grid. The neighbour's task may run at the same time: a value one execution old
  /// is as good a prior, so plain loads.
  MV_HD MV_INLINE float neighbour_variance(uint32_t task, int j) const {
    const int c = j < 4 ? j : j + 1;
    const int dx = c % 3 - 1, dy = c / 3 - 1;
    const int px = static_cast<int>(task % static_cast<uint32_t>(film.grid.patches_x)) + dx;
    const int py = static_cast<int>(task / static_cast<uint32_t>(film.grid.patches_x)) + dy;
    if (px < 0 || px >= film.grid.patches_x || py < 0 || py >= film.grid.patches_y) return 0.f;
    const uint32_t q = static_cast<uint32_t>(py * film.grid.patches_x + px);
    return neyman_neighbour_variance(priority[q], film.patch_spp[q], params.target_spp);
  }
  /// Records the patch's converged pixels (bit i: pixel i; pixels outside the image set) and, if `check`,
  /// decides the stop: all 16 converged and the one-pixel ring too (FilmView::ring_converged). Returns true
  /// if the patch stopped.
  MV_HD MV_INLINE bool record_convergence(uint32_t task, uint32_t converged, bool check) const {
    const bool stop = check && converged == kPatchPixelsConverged && film.ring_converged(task);
    store_relaxed(&film.patch_state[task], converged | (stop ? kPatchStopped : 0u));
    return stop;
  }
};

}  // namespace mv
