// GPU and CPU drivers of the display transform and the MSE (render/tonemap.h, render/metrics.h).
#include <cub/block/block_reduce.cuh>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>

#include "base/cuda_check.h"
#include "render/metrics.h"
#include "render/tonemap.h"

namespace mv {

namespace {

__global__ void max_mean_kernel(FilmView f, float* out) {
  const uint32_t n = static_cast<uint32_t>(f.grid.width) * static_cast<uint32_t>(f.grid.height);
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  float m = 0.f;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    m = fmaxf(m, max_component(f.mean(i)));
  const float bm = Reduce(tmp).Reduce(m, [](float a, float b) { return fmaxf(a, b); });
  // Non-negative floats order like their bit patterns as signed ints.
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<int*>(out), __float_as_int(bm));
}

__global__ void tonemap_kernel(FilmView f, ToneMapSettings s, const float* d_max, uint32_t* rgba) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= f.grid.width || y >= f.grid.height) return;
  const float scale = tonemap_scale(s, d_max ? *d_max : 0.f);
  rgba[y * f.grid.width + x] = tonemap_pixel(f, x, y, s, scale);
}

__global__ void mse_kernel(FilmView f, const float* ref, PixelRegion r, double* out) {
  const uint32_t w = static_cast<uint32_t>(r.x1 - r.x0);
  const uint32_t n = w * static_cast<uint32_t>(r.y1 - r.y0);
  using Reduce = cub::BlockReduce<double, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  double acc = 0.0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t x = static_cast<uint32_t>(r.x0) + i % w, y = static_cast<uint32_t>(r.y0) + i / w;
    acc += pixel_squared_error(f, y * static_cast<uint32_t>(f.grid.width) + x, ref);
  }
  const double total = Reduce(tmp).Sum(acc);
  if (threadIdx.x == 0) atomicAdd(out, total);
}

}  // namespace

void tonemap_device(const FilmView& f, const ToneMapSettings& s, uint32_t* d_rgba, float* d_scratch,
                    cudaStream_t stream) {
  const float* d_max = nullptr;
  if (s.mode == ToneMapMode::MaxToWhite) {
    MV_CUDA_CHECK(cudaMemsetAsync(d_scratch, 0, sizeof(float), stream));
    max_mean_kernel<<<264, 256, 0, stream>>>(f, d_scratch);
    MV_CUDA_CHECK_LAUNCH();
    d_max = d_scratch;
  }
  const dim3 block(16, 16);
  const dim3 grid((f.grid.width + 15) / 16, (f.grid.height + 15) / 16);
  tonemap_kernel<<<grid, block, 0, stream>>>(f, s, d_max, d_rgba);
  MV_CUDA_CHECK_LAUNCH();
}

PixelRegion clamp_region(PixelRegion r, int width, int height) {
  r.x0 = std::clamp(r.x0, 0, width);
  r.x1 = std::clamp(r.x1, r.x0, width);
  r.y0 = std::clamp(r.y0, 0, height);
  r.y1 = std::clamp(r.y1, r.y0, height);
  return r;
}

size_t region_pixels(const PixelRegion& r) {
  return static_cast<size_t>(r.x1 - r.x0) * static_cast<size_t>(r.y1 - r.y0);
}

double mse_device(const FilmView& f, const float* d_ref, double* d_scratch) {
  return mse_device(f, d_ref, d_scratch, PixelRegion::whole(f.grid.width, f.grid.height));
}

double mse_device(const FilmView& f, const float* d_ref, double* d_scratch, PixelRegion region) {
  const PixelRegion r = clamp_region(region, f.grid.width, f.grid.height);
  const size_t pixels = region_pixels(r);
  if (pixels == 0) return 0.0;
  MV_CUDA_CHECK(cudaMemset(d_scratch, 0, sizeof(double)));
  mse_kernel<<<264, 256>>>(f, d_ref, r, d_scratch);
  MV_CUDA_CHECK_LAUNCH();
  double sum = 0.0;
  MV_CUDA_CHECK(cudaMemcpy(&sum, d_scratch, sizeof(double), cudaMemcpyDeviceToHost));
  return sum / (3.0 * static_cast<double>(pixels));
}

// Host drivers run over rows with TBB: the CPU display path tone-maps every frame.
float max_mean_host(const FilmView& f) {
  const size_t n = static_cast<size_t>(f.grid.width) * f.grid.height;
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, n, 4096), 0.f,
      [&](const tbb::blocked_range<size_t>& r, float m) {
        for (size_t i = r.begin(); i != r.end(); ++i) m = fmaxf(m, max_component(f.mean(static_cast<uint32_t>(i))));
        return m;
      },
      [](float a, float b) { return fmaxf(a, b); });
}

void tonemap_host(const FilmView& f, const ToneMapSettings& s, uint32_t* rgba) {
  const float scale = tonemap_scale(s, s.mode == ToneMapMode::MaxToWhite ? max_mean_host(f) : 0.f);
  tbb::parallel_for(tbb::blocked_range<int>(0, f.grid.height), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y)
      for (int x = 0; x < f.grid.width; ++x) rgba[y * f.grid.width + x] = tonemap_pixel(f, x, y, s, scale);
  });
}

void heatmap_host(const FilmView& f, uint32_t target_spp, uint32_t* rgba) {
  for (int y = 0; y < f.grid.height; ++y)
    for (int x = 0; x < f.grid.width; ++x) rgba[y * f.grid.width + x] = heat_pixel(f, x, y, target_spp);
}

double mse_host(const FilmView& f, const float* ref) {
  const size_t n = static_cast<size_t>(f.grid.width) * f.grid.height;
  double acc = 0.0;
  for (size_t i = 0; i < n; ++i) acc += pixel_squared_error(f, static_cast<uint32_t>(i), ref);
  return acc / (3.0 * static_cast<double>(n));
}

double mse_host(const FilmView& f, const float* ref, PixelRegion region) {
  const PixelRegion r = clamp_region(region, f.grid.width, f.grid.height);
  const size_t pixels = region_pixels(r);
  if (pixels == 0) return 0.0;
  double acc = 0.0;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x)
      acc += pixel_squared_error(f, static_cast<uint32_t>(y) * static_cast<uint32_t>(f.grid.width) + x, ref);
  return acc / (3.0 * static_cast<double>(pixels));
}

double mse_images(const float* a, const float* b, size_t pixels) {
  double acc = 0.0;
  for (size_t i = 0; i < 3 * pixels; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    acc += d * d;
  }
  return pixels ? acc / (3.0 * static_cast<double>(pixels)) : 0.0;
}

}  // namespace mv
