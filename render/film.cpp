#include "render/film.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "base/errors.h"

namespace mv {

uint64_t film_bytes(int width, int height) {
  const PatchGrid g(width, height);
  const uint64_t px = static_cast<uint64_t>(width) * static_cast<uint64_t>(height);
  // Per pixel: sum, sum_sq, half_sum and spp. Per patch: patch_spp and patch_state, and two floats
  // of scheduling data (a priority and a sort key).
  return px * (3 * sizeof(Rgba32f) + sizeof(uint32_t)) +
         uint64_t{g.num_patches()} * (2 * sizeof(uint32_t) + 2 * sizeof(float));
}

namespace {
std::string mib(uint64_t b) { return std::to_string(b >> 20) + " MiB"; }
}  // namespace

void Film::allocate(int width, int height, bool use_device) {
  const uint64_t need = film_bytes(width, height);
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && need > static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2)
    throw InputError("", "resolution", std::to_string(width) + "x" + std::to_string(height) + " needs a film of " +
                                           mib(need) + ", more than half the free host memory (" +
                                           mib(static_cast<uint64_t>(pages) * page) + ")");
  if (use_device) {
    size_t free_b = 0, total_b = 0;
    MV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b * 9 / 10)
      throw InputError("", "resolution", std::to_string(width) + "x" + std::to_string(height) + " needs a film of " +
                                             mib(need) + " on the GPU, which has " + mib(free_b) + " free");
  }
  grid_ = PatchGrid(width, height);
  has_device_ = use_device;
  const size_t n = pixels(), np = grid_.num_patches();
  sum_.assign(n, use_device);
  sum_sq_.assign(n, use_device);
  half_sum_.assign(n, use_device);
  spp_.assign(n, use_device);
  patch_spp_.assign(np, use_device);
  patch_state_.assign(np, use_device);
  current_ = Side::Host;
  host_stale_ = false;
  clear();
}

void Film::clear() {
  for_each_buffer([&](auto& b) { b.zero(has_device_); });
  if (has_device_) MV_CUDA_CHECK(cudaDeviceSynchronize());
  host_stale_ = false;
}

void Film::sync_host() {
  if (current_ != Side::Device || !host_stale_) return;
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  for_each_buffer([](auto& b) { b.download(); });
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  host_stale_ = false;
}

void Film::make_current(Side side) {
  if (side == current_) return;
  if (side == Side::Device) {
    if (!has_device_) throw CudaError("film: no device copy (no CUDA device in use)");
    for_each_buffer([](auto& b) { b.upload(); });
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    sync_host();
  }
  current_ = side;
}

FilmView Film::view(Side side) {
  FilmView v;
  v.grid = grid_;
  v.sum = sum_.data(side);
  v.sum_sq = sum_sq_.data(side);
  v.half_sum = half_sum_.data(side);
  v.spp = spp_.data(side);
  v.patch_spp = patch_spp_.data(side);
  v.patch_state = patch_state_.data(side);
  if (side == Side::Device) host_stale_ = true;  // a device view may be written by kernels
  return v;
}

std::vector<float> Film::mean_rgb() {
  const FilmView f = host_view_synced();
  std::vector<float> rgb(pixels() * 3);
  for (size_t i = 0; i < pixels(); ++i) {
    const Vec3 m = f.mean(static_cast<uint32_t>(i));
    rgb[3 * i] = m.x;
    rgb[3 * i + 1] = m.y;
    rgb[3 * i + 2] = m.z;
  }
  return rgb;
}

}  // namespace mv
