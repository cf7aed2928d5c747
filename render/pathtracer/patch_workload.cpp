#include "render/pathtracer/patch_workload.h"

#include <algorithm>

#include "base/errors.h"

namespace mv {

DeviceScene::DeviceScene(const Scene& s) {
  arrays_.materials.upload(s.materials);
  arrays_.spheres.upload(s.spheres);
  arrays_.boxes.upload(s.boxes);
  arrays_.quads.upload(s.quads);
  arrays_.lights.upload(s.lights);
  arrays_.light_cdf.upload(s.light_cdf);
  MV_CUDA_CHECK(cudaDeviceSynchronize());
}

SceneView DeviceScene::view(const SceneView& h) const {
  SceneView v = h;
  point_scene_view(v, arrays_);
  return v;
}

namespace {
void check_params(const PatchTaskParams& p) {
  if (p.paths_per_pixel < 1 || p.paths_per_pixel > 64)
    throw InputError("", "paths_per_pixel", std::to_string(p.paths_per_pixel) + " is out of range [1, 64]");
  if (p.target_spp < 1 || p.target_spp > static_cast<uint32_t>(kMaxTargetSpp))
    throw InputError("", "target_spp", std::to_string(p.target_spp) + " is out of range [1, " +
                                           std::to_string(kMaxTargetSpp) + "]");
  if (!(p.noise_threshold > 0.f && p.noise_threshold <= 1.f))  // NaN fails too
    throw InputError("", "noise_threshold", std::to_string(p.noise_threshold) + " is out of range (0, 1]");
}

/// Re-evaluates PriorityFunction::Adaptive's state of every patch from the film under `p`, as one pass over
/// the image (the way Cycles checks): a patch with at least the min samples records its pixels' convergence
/// (else none), then a patch past its first check (adaptive_check_due's n > min + 1) is stopped if it and
/// its ring are converged.
void recheck_adaptive(const FilmView& f, const PatchTaskParams& p) {
  const uint32_t min_spp = adaptive_min_spp(p.noise_threshold, p.target_spp);
  const uint32_t n_patches = f.grid.num_patches();
  for (uint32_t t = 0; t < n_patches; ++t) {
    const uint32_t n = f.patch_spp[t];
    uint32_t converged = 0;
    for (int i = 0; i < kPatchPixels && n >= min_spp; ++i) {
      int x, y;
      bool ok = true;
      if (f.grid.pixel(t, i, x, y)) {
        const uint32_t idx = static_cast<uint32_t>(y * f.grid.width + x);
        const Rgba32f s = f.sum[idx], h = f.half_sum[idx];
        ok = adaptive_pixel_converged(adaptive_pixel_error({s.r, s.g, s.b}, {h.r, h.g, h.b}, n), p.noise_threshold);
      }
      converged |= ok ? 1u << i : 0u;
    }
    f.patch_state[t] = converged;
  }
  for (uint32_t t = 0; t < n_patches; ++t)
    if (f.patch_spp[t] > min_spp + 1 && f.patch_state[t] == kPatchPixelsConverged && f.ring_converged(t))
      f.patch_state[t] |= kPatchStopped;
}
}  // namespace

PatchWorkload::PatchWorkload(const Scene& scene, const PatchTaskParams& params, bool use_device)
    : scene_(scene), params_(params) {
  check_params(params);
  if (scene_.width < kMinResolution || scene_.width > kMaxResolution || scene_.height < kMinResolution ||
      scene_.height > kMaxResolution)
    throw InputError(scene_.source_path, "resolution",
                     std::to_string(scene_.width) + "x" + std::to_string(scene_.height) + " is out of range [" +
                         std::to_string(kMinResolution) + ", " + std::to_string(kMaxResolution) + "] per axis");
  host_scene_ = scene_.host_view();
  film_.allocate(scene_.width, scene_.height, use_device);
  if (use_device) {
    device_scene_ = std::make_unique<DeviceScene>(scene_);
    d_priority_.resize(num_tasks());
    counters_.resize(1);
    counters_.zero();
  }
  reset();
}

void PatchWorkload::reset() {
  film_.clear();
  h_priority_.assign(num_tasks(), kUnsampledPriority);
  if (film_.has_device()) {
    d_priority_.upload(h_priority_);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

bool PatchWorkload::set_params(const PatchTaskParams& p) {
  check_params(p);
  const bool adaptive = p.priority == PriorityFunction::Adaptive;
  const bool was_adaptive = params_.priority == PriorityFunction::Adaptive;
  const bool refresh = p.target_spp != params_.target_spp || adaptive != was_adaptive ||
                       (adaptive && p.noise_threshold != params_.noise_threshold);
  params_ = p;
  if (refresh) refresh_finished();
  return refresh;
}

void PatchWorkload::set_camera(const Camera& cam) {
  scene_.camera = cam;
  host_scene_ = scene_.host_view();
  reset();
}

void PatchWorkload::refresh_finished() {
  const Side side = current();
  make_current(Side::Host);
  const FilmView f = film_.view(Side::Host);
  if (params_.priority == PriorityFunction::Adaptive) recheck_adaptive(f, params_);
  for (uint32_t t = 0; t < num_tasks(); ++t) {
    const bool done = patch_finished(f.patch_spp[t], f.patch_state[t], params_);
    if (done) h_priority_[t] = kFinishedPriority;
    else if (h_priority_[t] == kFinishedPriority) h_priority_[t] = kUnsampledPriority;
  }
  if (side == Side::Device) make_current(Side::Device);
}

void PatchWorkload::make_current(Side side) {
  const Side before = film_.current();
  if (side == before) return;
  if (side == Side::Host) {
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    d_priority_.download(h_priority_.data(), h_priority_.size());
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    d_priority_.upload(h_priority_);
  }
  film_.make_current(side);
}

PatchWorkload::View PatchWorkload::view(Side side) {
  View v;
  v.params = params_;
  v.film = film_.view(side);
  if (side == Side::Host) {
    v.scene = host_scene_;
    v.priority = h_priority_.data();
    v.counters = nullptr;
  } else {
    if (!device_scene_) throw CudaError("patch workload: no device copy (no CUDA device in use)");
    v.scene = device_scene_->view(host_scene_);
    v.priority = d_priority_.data();
    v.counters = counters_.data();
  }
  return v;
}

const std::vector<float>& PatchWorkload::host_priorities() {
  if (current() == Side::Device) {
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    d_priority_.download(h_priority_.data(), h_priority_.size());
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return h_priority_;
}

uint32_t PatchWorkload::finished_tasks() {
  const auto& spp = film_.host_patch_spp();
  const auto& state = film_.host_patch_state();
  uint32_t n = 0;
  for (uint32_t t = 0; t < num_tasks(); ++t) n += patch_finished(spp[t], state[t], params_) ? 1u : 0u;
  return n;
}

uint64_t PatchWorkload::remaining_paths() {
  const auto& spp = film_.host_patch_spp();
  const auto& state = film_.host_patch_state();
  const PatchGrid& g = film_.grid();
  uint64_t rem = 0;
  for (uint32_t t = 0; t < num_tasks(); ++t) {
    if (patch_finished(spp[t], state[t], params_)) continue;
    int x, y, px = 0;
    for (int i = 0; i < kPatchPixels; ++i) px += g.pixel(t, i, x, y) ? 1 : 0;
    rem += static_cast<uint64_t>(params_.target_spp - spp[t]) * static_cast<uint64_t>(px);
  }
  return rem;
}

}  // namespace mv
