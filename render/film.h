// The film: the contract between renderer and viewer (docs/architecture.md, "The film is the contract").
//
// Per pixel (row-major, y = 0 the top row): Σ radiance and Σ radiance² as linear RGB float32 (the 4th
// lane is padding, so each pixel is one 16-byte access), Σ 2·radiance over the odd-indexed samples only
// (the half-sample buffer of adaptive sampling, render/pathtracer/priority.h), and the sample count. Per 4×4 patch:
// the samples per pixel done (the heat map; every pixel of a patch has the same count under the patch
// task) and the adaptive-sampling state word (kPatchPixelsConverged, kPatchStopped). Display, capture and
// MSE read only the film. The film lives on the host, on the device, or both; `Film::make_current` moves
// it to the side the active strategy runs on (live switching keeps it).
#pragma once

#include <cstdint>
#include <vector>

#include "base/common.h"
#include "base/device_buffer.h"
#include "base/mirrored_buffer.h"
#include "render/math.h"

#if defined(__CUDACC__)
#include <cuda/atomic>
#endif

namespace mv {

struct alignas(16) Rgba32f {
  float r = 0.f, g = 0.f, b = 0.f, a = 0.f;
};

/// Patch grid of an image: ceil(width/4) × ceil(height/4) patches, the last row/column possibly partial.
struct PatchGrid {
  int width = 0, height = 0, patches_x = 0, patches_y = 0;
  MV_HD PatchGrid() = default;
  MV_HD PatchGrid(int w, int h)
      : width(w), height(h), patches_x((w + kPatchSize - 1) / kPatchSize), patches_y((h + kPatchSize - 1) / kPatchSize) {}
  MV_HD uint32_t num_patches() const { return static_cast<uint32_t>(patches_x) * static_cast<uint32_t>(patches_y); }
  MV_HD uint32_t patch_of(int x, int y) const {
    return static_cast<uint32_t>((y / kPatchSize) * patches_x + x / kPatchSize);
  }
  /// Pixel of patch `p` at local index `i` in [0, 16); false if it lies outside the image.
  MV_HD bool pixel(uint32_t p, int i, int& x, int& y) const {
    x = static_cast<int>(p % static_cast<uint32_t>(patches_x)) * kPatchSize + (i % kPatchSize);
    y = static_cast<int>(p / static_cast<uint32_t>(patches_x)) * kPatchSize + (i / kPatchSize);
    return x < width && y < height;
  }
};

/// Bits 0–15 of a patch's adaptive-sampling state: pixel i of the patch (local index, row-major: i = 4·y + x)
/// was converged at the patch's last convergence check. Pixels outside the image count as converged.
inline constexpr uint32_t kPatchPixelsConverged = 0xffffu;
/// Bit 31 of a patch's adaptive-sampling state: the patch stopped (it and its one-pixel ring converged).
inline constexpr uint32_t kPatchStopped = 1u << 31;

/// Relaxed atomic load and store of a 32-bit word that other threads (CPU) or warps (GPU) may read or write
/// at the same time: a patch's adaptive-sampling state, which its neighbours read.
MV_HD MV_INLINE uint32_t load_relaxed(const uint32_t* p) {
#if defined(__CUDA_ARCH__)
  return cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*const_cast<uint32_t*>(p))
      .load(cuda::memory_order_relaxed);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}
MV_HD MV_INLINE void store_relaxed(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_relaxed);
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/// Raw pointers to one side's film buffers (trivially copyable, passed to kernels by value).
struct FilmView {
  PatchGrid grid;
  Rgba32f* sum = nullptr;
  Rgba32f* sum_sq = nullptr;
  /// Σ 2·radiance over the pixel's odd-indexed samples (sample index 1, 3, 5, …): Cycles' auxiliary
  /// buffer of adaptive sampling. half_sum / (spp rounded down to even) is the mean of those samples.
  Rgba32f* half_sum = nullptr;
  uint32_t* spp = nullptr;
  uint32_t* patch_spp = nullptr;
  /// Per patch: kPatchPixelsConverged bits and kPatchStopped; written only by the patch's own task (and by
  /// the host between steps), read by its neighbours' tasks: access with load_relaxed / store_relaxed.
  uint32_t* patch_state = nullptr;

  MV_HD Vec3 mean(uint32_t pixel) const {
    const uint32_t n = spp[pixel];
    if (n == 0) return Vec3{0.f};
    const Rgba32f s = sum[pixel];
    const float inv = 1.f / static_cast<float>(n);
    return {s.r * inv, s.g * inv, s.b * inv};
  }

  /// True if every pixel of the one-pixel ring around patch `p` (the 8-neighbourhood of its pixels that
  /// lies in other patches; the 20 pixels of a 6×6 square minus the patch, fewer at the image border, where
  /// the ring is clamped to the image) was converged at its own patch's last convergence check.
  MV_HD bool ring_converged(uint32_t p) const {
    const int px = static_cast<int>(p % static_cast<uint32_t>(grid.patches_x));
    const int py = static_cast<int>(p / static_cast<uint32_t>(grid.patches_x));
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || px + dx < 0 || px + dx >= grid.patches_x || py + dy < 0 ||
            py + dy >= grid.patches_y)
          continue;
        // The neighbour's pixels next to patch p: its last column (left neighbour) or first (right), its
        // last row (above) or first (below); a corner neighbour contributes the one pixel at that corner.
        const uint32_t cols = dx < 0 ? 0x8888u : (dx > 0 ? 0x1111u : 0xffffu);
        const uint32_t rows = dy < 0 ? 0xf000u : (dy > 0 ? 0x000fu : 0xffffu);
        const uint32_t need = cols & rows;
        const uint32_t q = static_cast<uint32_t>((py + dy) * grid.patches_x + (px + dx));
        if ((load_relaxed(&patch_state[q]) & need) != need) return false;
      }
    }
    return true;
  }
};

/// Bytes the film needs on each side for a width × height image.
uint64_t film_bytes(int width, int height);

class Film {
 public:
  Film() = default;
  /// Allocates for width × height (host always; device too when `use_device`), zeroed.
  /// Throws InputError if the film would not fit in free host or device memory (checked before allocating).
  void allocate(int width, int height, bool use_device);
  /// Zeroes both sides; the current side stays.
  void clear();
  /// Copies the buffers to `side` if it is not current (a no-op otherwise) and makes it current.
  void make_current(Side side);
  Side current() const { return current_; }
  bool has_device() const { return has_device_; }
  const PatchGrid& grid() const { return grid_; }
  int width() const { return grid_.width; }
  int height() const { return grid_.height; }
  size_t pixels() const { return static_cast<size_t>(grid_.width) * grid_.height; }
  FilmView view(Side side);
  /// The host copy, brought up to date from the device first if the device is current.
  const std::vector<Rgba32f>& host_sum() { sync_host(); return sum_.host; }
  const std::vector<Rgba32f>& host_sum_sq() { sync_host(); return sum_sq_.host; }
  const std::vector<Rgba32f>& host_half_sum() { sync_host(); return half_sum_.host; }
  const std::vector<uint32_t>& host_spp() { sync_host(); return spp_.host; }
  const std::vector<uint32_t>& host_patch_spp() { sync_host(); return patch_spp_.host; }
  const std::vector<uint32_t>& host_patch_state() { sync_host(); return patch_state_.host; }
  /// Host view after syncing (read-only use: capture, MSE on the CPU, tests).
  FilmView host_view_synced() { sync_host(); return view(Side::Host); }
  /// Per-pixel mean radiance, linear RGB: 3 floats a pixel, row-major, row 0 at the top; black where a
  /// pixel has no sample. From the host copy (synced first); the current side stays.
  std::vector<float> mean_rgb();

 private:
  void sync_host();
  PatchGrid grid_;
  bool has_device_ = false;
  Side current_ = Side::Host;
  /// Calls f on each of the six buffers, in the order of FilmView's fields.
  template <class F>
  void for_each_buffer(F f) {
    f(sum_);
    f(sum_sq_);
    f(half_sum_);
    f(spp_);
    f(patch_spp_);
    f(patch_state_);
  }
  MirroredBuffer<Rgba32f> sum_, sum_sq_, half_sum_;   // per pixel
  MirroredBuffer<uint32_t> spp_;                      // per pixel
  MirroredBuffer<uint32_t> patch_spp_, patch_state_;  // per patch
  bool host_stale_ = false;  // device current and host copy older than it
};

}  // namespace mv
