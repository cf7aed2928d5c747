// The `path-tracer` strand workload: the path tracer's patch tasks (Kerbl 2012 §6.3, render/pathtracer/patch_task.h)
// as a strand program (Lehmann 2023 §2), so every strand strategy of sched/ runs them.
//
// Strands. One strand per pixel of a width × height image, width and height multiples of 4, numbered
// patch-major: strand i is pixel slot i mod 16 of 4×4 patch i / 16 (slot → (x, y) as PatchGrid::pixel and the
// patch task map it: x = 4·(patch mod patches_x) + slot mod 4, y = 4·(patch / patches_x) + slot / 4), patches
// row-major. So 16 consecutive strands are exactly one patch task and a warp's 32 consecutive strands two:
// a global-queue work unit of c = 16 strands is one patch task, run by one thread to the target.
//
// One update is one execution of the patch task for the strand's pixel: k = min(paths_per_pixel,
// target_spp − spp) new samples, sample indices spp, spp + 1, …, spp + k − 1, traced, sanitized and added by
// trace_pixel_samples (the function run_task uses), then sum ← sum + Σ samples (commit_pixel's association).
// So on the CPU a strand's final (sum, spp) is bit for bit what the film holds for its pixel after the patch
// strategies render the same scene, seed, paths per pixel and target. A strand is Stable once spp ≥ target_spp
// (after ⌈target_spp / paths_per_pixel⌉ updates, the same for every strand: the step-count CV is 0, the
// opposite extreme from mandelbrot's 2.4), and never dies.
//
// Rounding. The GPU strategies run the same code compiled by nvcc, which contracts multiply-adds into FMAs,
// and CUDA's sinf/cosf/powf round differently from glibc's: radiance differs by ~1e-6 relative, and a path
// whose decision (a hit near an edge, a Russian-roulette draw) lands within that rounding takes another way.
// The workload therefore opts out of the CPU strand loops' FMA clones (kCpuFma, sched/cpu/strand_cpu.h): its
// CPU strands round exactly as the rest of the host code (the patch tasks) does. CPU strategies agree with
// each other and with the film bit for bit; GPU ones within app/session/strand_workloads.cu's tolerance.
#pragma once

#include <cstdint>
#include <type_traits>

#include "render/film.h"
#include "render/pathtracer/patch_task.h"
#include "render/pathtracer/scene.h"
#include "render/strands/strand.h"
#include "render/tonemap.h"

namespace mv {

/// Largest width or height of the path-tracer strands (16.7 M strands, ~420 MB of strand arrays).
inline constexpr uint32_t kPathTracerStrandMaxSide = 4096;

struct PathTracerStrandParams {
  uint32_t width = 800, height = 600;  ///< pixels = strands across and down: multiples of 4 in [4, 4096]
  uint32_t paths_per_pixel = 2;        ///< samples per update (the patch task's paths per pixel), [1, 64]
  /// Samples per pixel at which a strand is stable, [1, kMaxTargetSpp]. 32 by default: 800 × 600 × 32 = 15.4 M
  /// paths, which `sequential` (one CPU core) traces in seconds rather than the minutes room's own 512 take.
  uint32_t target_spp = 32;
  uint32_t seed = 0;  ///< selects the random streams, as PatchTaskParams::seed
};

struct PathTracerStrands {
  struct State {
    Vec3 sum;       ///< Σ radiance of the samples so far, linear RGB (the film's Σ for this pixel)
    uint32_t spp;   ///< samples so far, [0, target_spp]
    uint16_t x, y;  ///< the strand's pixel (x right, y down; row 0 at the top)
  };
  /// The CPU strategies run this workload without their FMA clones (sched/cpu/strand_cpu.h): see the top.
  static constexpr bool kCpuFma = false;

  SceneView scene;  ///< the scene at width × height (SceneView::width/height set), all host or all device pointers
  PatchGrid grid;   ///< width × height in whole 4×4 patches
  PathTracerStrandParams p;

  MV_HD uint32_t num_strands() const { return p.width * p.height; }
  /// Updates a strand takes: ⌈target_spp / paths_per_pixel⌉, every strand alike (render/strands/strand.h).
  MV_HD uint32_t max_updates() const { return (p.target_spp + p.paths_per_pixel - 1) / p.paths_per_pixel; }

  /// Pixel (x, y) of strand `index` (patch-major, see the top).
  MV_HD void strand_pixel(uint32_t index, int& x, int& y) const {
    grid.pixel(index / kPatchPixels, static_cast<int>(index % kPatchPixels), x, y);
  }
  /// Film pixel y·width + x of strand `index`.
  MV_HD uint32_t pixel(uint32_t index) const {
    int x, y;
    strand_pixel(index, x, y);
    return static_cast<uint32_t>(y) * p.width + static_cast<uint32_t>(x);
  }

  MV_HD State init(uint32_t index) const {
    int x, y;
    strand_pixel(index, x, y);
    State s;
    s.sum = Vec3{0.f};
    s.spp = 0;
    s.x = static_cast<uint16_t>(x);
    s.y = static_cast<uint16_t>(y);
    return s;
  }

  /// One patch-task execution for the strand's pixel (run_task's per-pixel arithmetic); Stable at the target.
  MV_HD WorkStatus update(State& s) const {
    if (s.spp >= p.target_spp) return WorkStatus::Stable;
    const uint32_t left = p.target_spp - s.spp;
    const uint32_t k = p.paths_per_pixel < left ? p.paths_per_pixel : left;
    const PixelSampleSums a = trace_pixel_samples(scene, p.seed, s.x, s.y, s.spp, k);
    s.sum = s.sum + a.sum;
    s.spp += k;
    return s.spp >= p.target_spp ? WorkStatus::Stable : WorkStatus::Active;
  }

  /// The pixel as the viewer shows the film by default (ToneMapSettings{}: exposure 0 EV, gamma 2.2): mean
  /// radiance sum / spp (FilmView::mean's arithmetic) through tonemap_encode, each channel in [0, 1]; black
  /// before the first sample. A pure function of the state.
  MV_HD Vec3 color(const State& s, WorkStatus) const {
    if (s.spp == 0) return Vec3{0.f};
    const float inv = 1.f / static_cast<float>(s.spp);
    const Vec3 mean{s.sum.x * inv, s.sum.y * inv, s.sum.z * inv};
    const ToneMapSettings display;
    return tonemap_encode(mean * tonemap_scale(display, 0.f), display.gamma);
  }
};

static_assert(std::is_trivially_copyable_v<PathTracerStrands>, "strand workloads are passed to kernels by value");
static_assert(std::is_trivially_copyable_v<PathTracerStrands::State>, "strand states are copied as bytes");

/// Throws InputError("", "--size", …) unless width and height are multiples of 4 in [4, kPathTracerStrandMaxSide].
void check_path_tracer_strand_size(uint32_t width, uint32_t height);

/// The workload over `scene` (its view at p.width × p.height, host or device pointers; scene.width and
/// scene.height must equal them). Throws InputError("", "--size", …) unless width and height are multiples
/// of 4 in [4, kPathTracerStrandMaxSide], and InputError("", field, …) for paths_per_pixel, target_spp or a
/// scene view of another size.
PathTracerStrands make_path_tracer_strands(const SceneView& scene, const PathTracerStrandParams& p);

}  // namespace mv
