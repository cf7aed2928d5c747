#include "app/session/session.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/session/image_io.h"
#include "render/metrics.h"
#include "render/pathtracer/scene_io.h"

namespace mv {

namespace {
std::unique_ptr<PatchStrategy> make_strategy(const std::string& name, bool gpu) {
  const auto& entry = patch_strategies().find(name);
  if (entry.info.side == Side::Device && !gpu)
    throw InputError("", "strategy", "\"" + name + "\" runs on the GPU, but no CUDA device is in use");
  return entry.make();
}

/// Refuses a reference whose sidecar (R.json beside R.exr, as `megaview reference` and captures write it)
/// names another scene: at the same resolution its MSE would compare two different pictures. A reference
/// without a readable sidecar, or one that names no scene, is taken as it is.
void check_reference_scene(const std::string& path, const std::string& scene) {
  const std::string ext = ".exr";
  if (path.size() <= ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0) return;
  const std::string sidecar = path.substr(0, path.size() - ext.size()) + ".json";
  std::ifstream f(sidecar);
  if (!f) return;
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return;
  const auto sc = j.find("scene");
  if (sc == j.end() || !sc->is_object()) return;
  const auto name = sc->find("name");
  if (name == sc->end() || !name->is_string() || name->get<std::string>() == scene) return;
  throw InputError(path, "scene",
                   "is a reference of scene \"" + name->get<std::string>() + "\" (its sidecar " + sidecar +
                       "), not of \"" + scene + "\"; give the reference of this scene");
}
}  // namespace

Session::Session(const SessionOptions& options) : options_(options) {
  // One-line errors before anything is built. Names that no patch strategy has are other runs' knobs
  // (the viewer's strand mode reads the same map) and pass.
  for (const auto& [name, text] : options_.knobs)
    if (const ParamSpec* spec = find_param(patch_strategy_knobs(), name)) parse_param(*spec, text);
  use_gpu_ = !options_.force_cpu && gpu_available();
  if (options_.strategy.empty()) options_.strategy = use_gpu_ ? "megakernel" : "cpu-waves";
  strategy_ = make_strategy(options_.strategy, use_gpu_);
  apply_knobs();
  Scene scene = load_scene_file_(options_.scene);
  rebuild_workload(std::move(scene));
  if (!options_.reference.empty()) load_reference(options_.reference);
}

Session::~Session() = default;

Scene Session::load_scene_file_(const std::string& name) {
  Scene s = mv::load_scene(resolve_scene_path(name));
  if (options_.width > 0) s.width = options_.width;
  if (options_.height > 0) s.height = options_.height;
  return s;
}

void Session::rebuild_workload(Scene scene) {
  PatchTaskParams p = options_.task;
  if (p.target_spp == 0) p.target_spp = static_cast<uint32_t>(scene.target_spp);
  options_.task = p;
  const std::string scene_ref = scene.reference_path;
  workload_.reset();  // free the old film before allocating the new one
  workload_ = std::make_unique<PatchWorkload>(scene, p, use_gpu_);
  workload_->make_current(side());
  clear_progress();
  // A reference of another size no longer applies; the scene's own is picked up when it exists.
  if (has_reference() && reference_size_ != std::make_pair(scene.width, scene.height)) {
    reference_rgb_.clear();
    reference_path_.clear();
  }
  if (!has_reference() && !scene_ref.empty() && std::filesystem::exists(scene_ref)) {
    try {
      load_reference(scene_ref);
    } catch (const InputError& e) {
      // The scene's reference is for its default size; other sizes have none. Anything else (an
      // unreadable or corrupt file) is the scene's error.
      if (e.field() != "resolution") throw;
    }
  }
}

void Session::replace_workload(Scene next, const SessionOptions& next_options) {
  const SessionOptions old_options = options_;
  Scene old_scene = workload_->scene();
  auto old_reference = std::make_tuple(reference_rgb_, reference_path_, reference_size_);
  options_ = next_options;
  try {
    rebuild_workload(std::move(next));
  } catch (...) {
    // The old film was freed to make room: rebuild it (it fitted before), then report the failure.
    options_ = old_options;
    std::tie(reference_rgb_, reference_path_, reference_size_) = std::move(old_reference);
    rebuild_workload(std::move(old_scene));
    if (has_reference() && use_gpu_) d_reference_.upload(reference_rgb_);
    throw;
  }
}

void Session::load_scene(const std::string& name_or_path) {
  Scene s = load_scene_file_(name_or_path);
  SessionOptions next = options_;
  next.scene = name_or_path;
  next.task.target_spp = 0;  // take the new scene's target
  reference_rgb_.clear();
  reference_path_.clear();
  replace_workload(std::move(s), next);
}

void Session::set_resolution(int width, int height) {
  Scene s = workload_->scene();
  s.width = width;
  s.height = height;
  SessionOptions next = options_;
  next.width = width;
  next.height = height;
  replace_workload(std::move(s), next);
}

void Session::set_camera(const Camera& cam) {
  workload_->set_camera(cam);
  workload_->make_current(side());
  reset();
}

void Session::set_seed(uint32_t seed) {
  options_.task.seed = seed;
  workload_->set_params(options_.task);
  reset();
}

void Session::clear_progress() {
  strategy_->invalidate();
  finished_tasks_ = 0;
  total_paths_ = 0;
  total_busy_ms_ = 0.0;
  last_ = FrameStats{};
  last_.num_tasks = workload_->num_tasks();
}

void Session::reset() {
  workload_->reset();
  clear_progress();
}

void Session::set_strategy(const std::string& name) {
  auto next = make_strategy(name, use_gpu_);
  workload_->make_current(next->info().side);
  strategy_ = std::move(next);
  strategy_->invalidate();
  options_.strategy = name;
  apply_knobs();
}

const MegakernelControl* Session::megakernel() const { return dynamic_cast<const MegakernelControl*>(strategy_.get()); }

void Session::apply_knobs() {
  if (Params* p = strategy_->params()) p->apply(options_.knobs);
}

void Session::set_knob(const std::string& name, const std::string& text) {
  const ParamSpec* spec = find_param(patch_strategy_knobs(), name);
  if (!spec) throw InputError("", "--" + name, "is not a knob of the path tracer's strategies");
  parse_param(*spec, text);  // InputError naming the knob and its range
  options_.knobs[name] = text;
  apply_knobs();
}

void Session::set_priority(PriorityFunction f) {
  PatchTaskParams p = options_.task;
  p.priority = f;
  set_task_params(p);
}

void Session::set_noise_threshold(float t) {
  PatchTaskParams p = options_.task;
  p.noise_threshold = t;
  set_task_params(p);
}

void Session::set_task_params(const PatchTaskParams& p) {
  const bool finished_changed = workload_->set_params(p);  // validates first
  options_.task = p;
  if (finished_changed) {
    strategy_->invalidate();
    count_finished();
  }
}

void Session::set_paths_per_pixel(uint32_t n) {
  options_.task.paths_per_pixel = n;
  workload_->set_params(options_.task);
}

void Session::set_target_spp(uint32_t spp) {
  options_.task.target_spp = spp;
  workload_->set_params(options_.task);
  strategy_->invalidate();
  count_finished();
}

void Session::count_finished() {
  const Side s = workload_->current();
  finished_tasks_ = workload_->finished_tasks();
  workload_->make_current(s);
}

uint64_t Session::frame_budget_paths() const {
  if (options_.paths_per_frame > 0) return options_.paths_per_frame;
  // Auto: aim at frame_budget_ms of busy time from the measured rate; start small.
  const double rate = paths_per_ms_estimate_ > 0 ? paths_per_ms_estimate_ : (use_gpu_ ? 2.0e5 : 2.0e3);
  return std::max<uint64_t>(workload_->work_per_task(), static_cast<uint64_t>(rate * options_.frame_budget_ms));
}

FrameStats Session::advance() { return advance(frame_budget_paths()); }

FrameStats Session::advance(uint64_t budget_work) {
  FrameStats fs;
  fs.num_tasks = workload_->num_tasks();
  if (!done()) {
    const auto t0 = std::chrono::steady_clock::now();
    fs.step = strategy_->step(*workload_, budget_work, options_.schedule);
    fs.frame_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    finished_tasks_ += fs.step.finished;
    total_paths_ += fs.step.work;
    total_busy_ms_ += fs.step.busy_ms;
    if (fs.step.busy_ms > 0.0 && fs.step.work > 0) {
      const double rate = static_cast<double>(fs.step.work) / fs.step.busy_ms;
      paths_per_ms_estimate_ = paths_per_ms_estimate_ > 0 ? 0.7 * paths_per_ms_estimate_ + 0.3 * rate : rate;
      fs.paths_per_second = rate * 1000.0;
    }
  }
  fs.total_paths = total_paths_;
  fs.total_busy_ms = total_busy_ms_;
  fs.finished_tasks = finished_tasks_;
  fs.done = done();
  last_ = fs;
  return fs;
}

FrameStats Session::run(uint64_t max_paths, double max_ms, const std::function<void(const FrameStats&)>& progress) {
  FrameStats fs = last_;
  while (!done()) {
    if (max_paths && total_paths_ >= max_paths) break;
    if (max_ms > 0 && total_busy_ms_ >= max_ms) break;
    uint64_t saved = options_.paths_per_frame;
    if (max_paths) {
      const uint64_t left = max_paths - total_paths_;
      const uint64_t budget = frame_budget_paths();
      options_.paths_per_frame = std::min(budget, left);
    }
    fs = advance();
    options_.paths_per_frame = saved;
    if (progress) progress(fs);
    if (fs.step.work == 0 && !done()) break;  // nothing left that this strategy can run
  }
  return fs;
}

void Session::load_reference(const std::string& path) {
  check_reference_scene(path, scene().name);
  ImageRgb img = read_exr(path);
  if (img.width != static_cast<int>(width()) || img.height != static_cast<int>(height()))
    throw InputError(path, "resolution",
                     "reference is " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                         " but the film is " + std::to_string(width()) + "x" + std::to_string(height()));
  reference_rgb_ = std::move(img.rgb);
  reference_path_ = path;
  reference_size_ = {img.width, img.height};
  if (use_gpu_) {
    d_reference_.upload(reference_rgb_);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

double Session::mse() {
  if (!has_reference()) throw InputError("", "reference", "no reference image is loaded");
  if (workload_->current() == Side::Device) {
    d_mse_scratch_.resize(1);
    return mse_device(workload_->film().view(Side::Device), d_reference_.data(), d_mse_scratch_.data());
  }
  return mse_host(workload_->film().host_view_synced(), reference_rgb_.data());
}

double Session::mse(const PixelRegion& region) {
  if (!has_reference()) throw InputError("", "reference", "no reference image is loaded");
  if (workload_->current() == Side::Device) {
    d_mse_scratch_.resize(1);
    return mse_device(workload_->film().view(Side::Device), d_reference_.data(), d_mse_scratch_.data(), region);
  }
  return mse_host(workload_->film().host_view_synced(), reference_rgb_.data(), region);
}

void Session::tonemap_to_host(const ToneMapSettings& s, std::vector<uint32_t>& rgba) {
  rgba.resize(static_cast<size_t>(width()) * height());
  tonemap_host(workload_->film().host_view_synced(), s, rgba.data());
}

void Session::tonemap_to_device(const ToneMapSettings& s, uint32_t* d_rgba) {
  if (workload_->current() != Side::Device)
    throw CudaError("tonemap_to_device: the film is on the host (a CPU strategy is active); use tonemap_to_host");
  d_tonemap_scratch_.resize(1);
  tonemap_device(workload_->film().view(Side::Device), s, d_rgba, d_tonemap_scratch_.data());
}

std::string Session::cpu_reason() const {
  if (use_gpu_) return {};
  if (options_.force_cpu) return "CPU rendering requested";
  return gpu_info().reason;
}

std::vector<float> Session::mean_image() { return workload_->film().mean_rgb(); }

}  // namespace mv
