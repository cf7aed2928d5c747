// The patch task: megaview's unit of path-tracing work (Kerbl 2012, §6.3).
//
// A task is one 4×4 pixel patch. One execution traces `paths_per_pixel` new paths for each pixel of the
// patch (2 by default, as in the paper), adds them to the film, and computes the patch's new priority
// (render/priority.h); a patch is finished once its pixels reach the target spp. The per-pixel work
// (`pixel_sample`) and the per-pixel priority term are shared, and two mappings run them:
//  - `run_task`: the calling thread executes the whole task (CPU strategies, tests);
//  - `run_task_warp`: the calling warp executes it, lane l tracing pixel l mod 16 and every second
//    sample starting at l / 16 (a full patch at 2 paths per pixel is exactly 32 paths: one warp).
// Both add the same samples (sample index = samples done before + j) and so give the same film up to
// float summation order. No two executions of one task may run at once: strategies guarantee that.
#pragma once

#include "render/film.h"
#include "render/integrator.h"
#include "render/priority.h"
#include "render/scene.h"

namespace mv {

struct PatchTaskParams {
  uint32_t paths_per_pixel = 2;  ///< new samples per pixel per execution, [1, 64]
  uint32_t target_spp = 512;     ///< a patch is finished at this many samples per pixel, [1, kMaxTargetSpp]
  uint32_t seed = 0;             ///< selects the random streams; same seed, same image
  PriorityFunction priority = PriorityFunction::Convergence;
};

/// A radiance sample as the film takes it: a non-finite sample (±inf or NaN in any channel) becomes black,
/// since it would poison the pixel's sum forever; a finite one is returned unchanged.
MV_HD MV_INLINE Vec3 sanitize_sample(Vec3 l) {
  // x - x is 0 for finite x and NaN for ±inf and NaN (no fast-math in this project).
  return ((l.x - l.x) == 0.f && (l.y - l.y) == 0.f && (l.z - l.z) == 0.f) ? l : Vec3{0.f};
}

/// Sums of `k` sanitized samples of one pixel: radiance (linear RGB) and its square, per channel.
struct PixelSampleSums {
  Vec3 sum{0.f}, sum_sq{0.f};
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
  }
  return s;
}

/// Everything a task execution reads and writes; pointers all on one side (host or device).
struct PatchTaskView {
  SceneView scene;
  FilmView film;
  float* priority = nullptr;         ///< per task
  TaskCounters* counters = nullptr;  ///< device side only (may be null on the host)
  PatchTaskParams params;

  MV_HD uint32_t num_tasks() const { return film.grid.num_patches(); }
  MV_HD bool finished(uint32_t task) const { return film.patch_spp[task] >= params.target_spp; }

  /// Executes `task` on the calling thread. Returns the number of paths traced (0 if already finished).
  MV_HD uint32_t run_task(uint32_t task) const {
    const uint32_t n_old = film.patch_spp[task];
    if (n_old >= params.target_spp) return 0;
    const uint32_t k = min_u(params.paths_per_pixel, params.target_spp - n_old);
    float term_sum = 0.f;
    int pixels = 0;
    for (int i = 0; i < kPatchPixels; ++i) {
      int x, y;
      if (!film.grid.pixel(task, i, x, y)) continue;
      const PixelSampleSums a = trace_pixel_samples(scene, params.seed, x, y, n_old, k);
      term_sum += commit_pixel(static_cast<uint32_t>(y * film.grid.width + x), a.sum, a.sum_sq, n_old, k);
      ++pixels;
    }
    film.patch_spp[task] = n_old + k;
    priority[task] = patch_priority(params.priority, term_sum, pixels, n_old + k, params.target_spp);
    return static_cast<uint32_t>(pixels) * k;
  }

#if defined(__CUDACC__)
  /// Executes `task` with the calling (full, converged) warp. Returns the paths traced, in every lane.
  __device__ uint32_t run_task_warp(uint32_t task) const {
    constexpr unsigned kFull = 0xffffffffu;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const uint32_t n_old = film.patch_spp[task];
    if (n_old >= params.target_spp) return 0;
    const uint32_t k = min_u(params.paths_per_pixel, params.target_spp - n_old);
    int x, y;
    const bool valid = film.grid.pixel(task, lane & 15, x, y);
    Vec3 acc{0.f}, acc_sq{0.f};
    if (valid) {
      for (uint32_t j = static_cast<uint32_t>(lane >> 4); j < k; j += 2) {
        const Vec3 l = sanitize_sample(pixel_sample(scene, params.seed, x, y, n_old + j));
        acc += l;
        acc_sq += l * l;
      }
    }
    acc.x += __shfl_down_sync(kFull, acc.x, 16);
    acc.y += __shfl_down_sync(kFull, acc.y, 16);
    acc.z += __shfl_down_sync(kFull, acc.z, 16);
    acc_sq.x += __shfl_down_sync(kFull, acc_sq.x, 16);
    acc_sq.y += __shfl_down_sync(kFull, acc_sq.y, 16);
    acc_sq.z += __shfl_down_sync(kFull, acc_sq.z, 16);
    const bool writer = valid && lane < 16;
    float term = 0.f;
    if (writer) term = commit_pixel(static_cast<uint32_t>(y * film.grid.width + x), acc, acc_sq, n_old, k);
    for (int off = 8; off > 0; off >>= 1) term += __shfl_xor_sync(kFull, term, off);
    const int pixels = __popc(__ballot_sync(kFull, writer));
    if (lane == 0) {
      film.patch_spp[task] = n_old + k;
      priority[task] = patch_priority(params.priority, term, pixels, n_old + k, params.target_spp);
      if (counters) {
        atomicAdd(&counters->paths, static_cast<unsigned long long>(pixels) * k);
        atomicAdd(&counters->tasks, 1u);
        if (n_old + k >= params.target_spp) atomicAdd(&counters->finished, 1u);
      }
    }
    __syncwarp();
    return static_cast<uint32_t>(pixels) * k;
  }
#endif

 private:
  MV_HD static MV_INLINE uint32_t min_u(uint32_t a, uint32_t b) { return a < b ? a : b; }
  /// Adds k samples (sum `acc`, squares `acc_sq`) to pixel `idx`, which had `n_old`; returns its priority term.
  MV_HD MV_INLINE float commit_pixel(uint32_t idx, Vec3 acc, Vec3 acc_sq, uint32_t n_old, uint32_t k) const {
    const Rgba32f s = film.sum[idx], q = film.sum_sq[idx];
    const Vec3 old_sum{s.r, s.g, s.b};
    const Vec3 sum = old_sum + acc;
    const Vec3 sum_sq = Vec3{q.r, q.g, q.b} + acc_sq;
    film.sum[idx] = Rgba32f{sum.x, sum.y, sum.z, 0.f};
    film.sum_sq[idx] = Rgba32f{sum_sq.x, sum_sq.y, sum_sq.z, 0.f};
    film.spp[idx] = n_old + k;
    return pixel_priority_term(params.priority, old_sum, n_old, sum, sum_sq, n_old + k);
  }
};

}  // namespace mv
