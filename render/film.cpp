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
  h_sum_.assign(n, Rgba32f{});
  h_sum_sq_.assign(n, Rgba32f{});
  h_half_sum_.assign(n, Rgba32f{});
  h_spp_.assign(n, 0);
  h_patch_spp_.assign(np, 0);
  h_patch_state_.assign(np, 0);
  if (use_device) {
    d_sum_.resize(n);
    d_sum_sq_.resize(n);
    d_half_sum_.resize(n);
    d_spp_.resize(n);
    d_patch_spp_.resize(np);
    d_patch_state_.resize(np);
  } else {
    d_sum_ = {};
    d_sum_sq_ = {};
    d_half_sum_ = {};
    d_spp_ = {};
    d_patch_spp_ = {};
    d_patch_state_ = {};
  }
  current_ = Side::Host;
  host_stale_ = false;
  clear();
}

void Film::clear() {
  std::fill(h_sum_.begin(), h_sum_.end(), Rgba32f{});
  std::fill(h_sum_sq_.begin(), h_sum_sq_.end(), Rgba32f{});
  std::fill(h_half_sum_.begin(), h_half_sum_.end(), Rgba32f{});
  std::fill(h_spp_.begin(), h_spp_.end(), 0u);
  std::fill(h_patch_spp_.begin(), h_patch_spp_.end(), 0u);
  std::fill(h_patch_state_.begin(), h_patch_state_.end(), 0u);
  if (has_device_) {
    d_sum_.zero();
    d_sum_sq_.zero();
    d_half_sum_.zero();
    d_spp_.zero();
    d_patch_spp_.zero();
    d_patch_state_.zero();
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  host_stale_ = false;
}

void Film::sync_host() {
  if (current_ != Side::Device || !host_stale_) return;
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  d_sum_.download(h_sum_.data(), h_sum_.size());
  d_sum_sq_.download(h_sum_sq_.data(), h_sum_sq_.size());
  d_half_sum_.download(h_half_sum_.data(), h_half_sum_.size());
  d_spp_.download(h_spp_.data(), h_spp_.size());
  d_patch_spp_.download(h_patch_spp_.data(), h_patch_spp_.size());
  d_patch_state_.download(h_patch_state_.data(), h_patch_state_.size());
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  host_stale_ = false;
}

void Film::make_current(Side side) {
  if (side == current_) return;
  if (side == Side::Device) {
    if (!has_device_) throw CudaError("film: no device copy (no CUDA device in use)");
    d_sum_.upload(h_sum_);
    d_sum_sq_.upload(h_sum_sq_);
    d_half_sum_.upload(h_half_sum_);
    d_spp_.upload(h_spp_);
    d_patch_spp_.upload(h_patch_spp_);
    d_patch_state_.upload(h_patch_state_);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    sync_host();
  }
  current_ = side;
}

FilmView Film::view(Side side) {
  FilmView v;
  v.grid = grid_;
  if (side == Side::Host) {
    v.sum = h_sum_.data();
    v.sum_sq = h_sum_sq_.data();
    v.half_sum = h_half_sum_.data();
    v.spp = h_spp_.data();
    v.patch_spp = h_patch_spp_.data();
    v.patch_state = h_patch_state_.data();
  } else {
    v.sum = d_sum_.data();
    v.sum_sq = d_sum_sq_.data();
    v.half_sum = d_half_sum_.data();
    v.spp = d_spp_.data();
    v.patch_spp = d_patch_spp_.data();
    v.patch_state = d_patch_state_.data();
    host_stale_ = true;  // a device view may be written by kernels
  }
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
