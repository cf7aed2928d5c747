#include "app/session/strand_view.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <utility>

#include "app/session/capture.h"
#include "app/session/image_io.h"
#include "app/session/output_file.h"
#include "app/session/params_report.h"
#include "base/errors.h"
#include "render/field/volume_io.h"
#include "render/gpu.h"
#include "render/tonemap.h"

namespace mv {

// ---------------------------------------------------------------- memory

void check_strand_run_fits(const StrandRequest& r, bool on_gpu) {
  const double bytes = kStrandRunBytesPerStrand * static_cast<double>(r.width) * static_cast<double>(r.height);
  const auto mib = [](double b) { return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0)); };
  const std::string what = fmt::format("{}x{} strands need about {}", r.width, r.height, mib(bytes));
  const double host_free = host_available_bytes();
  if (bytes > 0.5 * host_free)
    throw InputError("", "size", what + ", more than half of the " + mib(host_free) + " of free host memory");
  if (on_gpu && gpu_available()) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
      return;  // the run itself reports a CUDA failure
    }
    const double margin = std::max(256.0 * 1024 * 1024, 0.05 * static_cast<double>(total_b));
    if (bytes + margin > static_cast<double>(free_b))
      throw InputError("", "size", what + " (+ " + mib(margin) + " margin), more than the " +
                                       mib(static_cast<double>(free_b)) + " of free GPU memory");
  }
}

// ---------------------------------------------------------------- runner

StrandRunner::StrandRunner(std::function<void()> on_finished)
    : on_finished_(std::move(on_finished)), thread_([this] { loop(); }) {}

StrandRunner::~StrandRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queued_.reset();
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t StrandRunner::request(StrandRequest r) {
  std::lock_guard<std::mutex> lock(mutex_);
  r.id = next_id_++;
  queued_ = std::move(r);
  wake_.notify_all();
  return queued_->id;
}

std::optional<StrandOutcome> StrandRunner::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_.empty()) return std::nullopt;
  StrandOutcome o = std::move(finished_.front());
  finished_.erase(finished_.begin());
  return o;
}

bool StrandRunner::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_ || running_ || !finished_.empty();
}

std::optional<StrandRequest> StrandRunner::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

void StrandRunner::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || queued_.has_value(); });
    if (stop_) return;
    running_ = std::exchange(queued_, std::nullopt);
    const StrandRequest r = *running_;
    lock.unlock();
    StrandOutcome o = run_strand_request(r);
    lock.lock();
    running_.reset();
    finished_.push_back(std::move(o));
    if (on_finished_) {
      lock.unlock();
      on_finished_();
      lock.lock();
    }
  }
}

StrandOutcome run_strand_request(const StrandRequest& r) {
  StrandOutcome o;
  o.request = r;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const StrandWorkloadEntry& w = find_strand_workload(r.workload);
    o.result = w.run(r.strategy, r.width, r.height, r.settings, true, r.view, r.knobs);
    o.stats = step_statistics(o.result.steps);
  } catch (...) {
    o.error = std::current_exception();
    o.result = StrandResult{};
  }
  o.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

// ---------------------------------------------------------------- images

std::pair<uint32_t, uint32_t> strand_shown_size(const StrandResult& r, bool heat_map) {
  if (!heat_map && !r.view_rgba.empty()) return {r.view_width, r.view_height};
  return {r.width, r.height};
}

std::vector<uint32_t> strand_image_rgba8(const StrandResult& r, float gamma) {
  const auto [w, h] = strand_shown_size(r, false);
  const std::vector<float>& rgba = r.view_rgba.empty() ? r.rgba : r.view_rgba;
  const size_t n = static_cast<size_t>(w) * h;
  std::vector<uint32_t> out(n, pack_rgba8(Vec3{kStrandBackground[0], kStrandBackground[1], kStrandBackground[2]}));
  if (rgba.size() < 4 * n) return out;
  const float inv_g = 1.f / std::max(gamma, 1e-3f);
  const auto enc = [inv_g](float v) { return std::pow(std::clamp(v, 0.f, 1.f), inv_g); };
  for (size_t p = 0; p < n; ++p) {
    const float* c = &rgba[4 * p];
    const float a = std::clamp(c[3], 0.f, 1.f);
    out[p] = pack_rgba8(Vec3{enc(c[0] * a), enc(c[1] * a), enc(c[2] * a)});
  }
  return out;
}

StrandReplay::StrandReplay(std::vector<uint32_t> final_rgba8, const std::vector<uint32_t>& finish_order,
                           const std::vector<uint32_t>& pixel, uint32_t background)
    : final_(std::move(final_rgba8)), shown_image_(final_.size(), background) {
  if (finish_order.size() != final_.size() || (!pixel.empty() && pixel.size() != finish_order.size()))
    throw std::invalid_argument("StrandReplay: " + std::to_string(finish_order.size()) + " finish places and " +
                                std::to_string(pixel.size()) + " pixel entries for " + std::to_string(final_.size()) +
                                " pixels");
  const size_t n = final_.size();
  constexpr uint32_t kEmpty = 0xffffffffu;
  std::vector<uint32_t> by_place(n, kEmpty), unfinished;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t t = finish_order[i];
    if (t < n && by_place[t] == kEmpty)
      by_place[t] = static_cast<uint32_t>(i);
    else
      unfinished.push_back(static_cast<uint32_t>(i));  // never finished (a duplicate place would be a bug: last)
  }
  order_.reserve(n);
  for (uint32_t i : by_place)
    if (i != kEmpty) order_.push_back(i);
  order_.insert(order_.end(), unfinished.begin(), unfinished.end());
  if (!pixel.empty())
    for (uint32_t& o : order_) {
      o = pixel[o];
      if (o >= n) throw std::invalid_argument("StrandReplay: a strand writes pixel " + std::to_string(o) + " of " +
                                              std::to_string(n));
    }
}

bool StrandReplay::advance(double f) {
  const double c = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
  const size_t target = static_cast<size_t>(std::llround(c * static_cast<double>(order_.size())));
  if (target <= shown_) return false;
  for (size_t t = shown_; t < target; ++t) shown_image_[order_[t]] = final_[order_[t]];
  shown_ = target;
  return true;
}

std::vector<float> active_strands_curve(const std::vector<uint32_t>& steps, size_t max_points) {
  if (steps.empty()) return {};
  const uint32_t max = *std::max_element(steps.begin(), steps.end());
  std::vector<uint64_t> count(static_cast<size_t>(max) + 1, 0);  // strands with exactly s updates
  for (uint32_t s : steps) ++count[s];
  // survivors[s] = strands with more than s updates, s = 0 … max
  std::vector<uint64_t> survivors(static_cast<size_t>(max) + 1, 0);
  uint64_t above = 0;
  for (size_t s = max + 1; s-- > 0;) {
    survivors[s] = above;
    above += count[s];
  }
  const size_t points = std::max<size_t>(1, max_points);
  const uint32_t stride = static_cast<uint32_t>(std::max<uint64_t>(1, (static_cast<uint64_t>(max) + points - 1) / points));
  std::vector<float> curve;
  curve.push_back(static_cast<float>(steps.size()));  // before the first super-step every strand is active
  for (uint64_t k = stride; k <= max; k += stride) curve.push_back(static_cast<float>(survivors[k]));
  if (curve.size() == 1 || max % stride != 0) curve.push_back(0.f);  // the end: nobody is active after `max`
  return curve;
}

std::vector<uint32_t> strand_heat_rgba8(const StrandResult& r) {
  const size_t n = static_cast<size_t>(r.width) * r.height;
  std::vector<uint32_t> out(n, pack_rgba8(heat_color(0.f)));
  uint32_t max_steps = 0;
  for (uint32_t s : r.steps) max_steps = std::max(max_steps, s);
  const float inv = max_steps > 0 ? 1.f / static_cast<float>(max_steps) : 0.f;
  const bool mapped = r.pixel.size() == r.steps.size();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const size_t p = mapped ? r.pixel[i] : i;
    if (p < n) out[p] = pack_rgba8(heat_color(static_cast<float>(r.steps[i]) * inv));
  }
  return out;
}

std::string strand_grid_text(const StrategyInfo& info, const GridConfig& g, const StrandRunSettings& s) {
  if (info.reads("task-quantum")) return strand_task_text(s);
  if (!info.uses_grid) return "-";
  if (g.automatic) return "auto";
  return info.reads("work-unit") ? fmt::format("{},{},{}", g.blocks, g.threads, g.work_unit)
                             : fmt::format("{},{}", g.blocks, g.threads);
}

// ---------------------------------------------------------------- report and capture

nlohmann::json strand_report(const StrandOutcome& o) {
  const StrandRequest& q = o.request;
  const StrandResult& r = o.result;
  const StrandWorkloadEntry& w = find_strand_workload(q.workload);
  const StrategyInfo& info = w.strategy(q.strategy);
  const StrandTimings& t = r.timing;
  // Every knob of strand_params() (generated), then the grid and the recording switch.
  StrandRunSettings knobs = q.settings;
  nlohmann::json j = sidecar_header(q.workload, q.strategy,
                                    params_json(BoundParams<StrandRunSettings>(strand_params(), knobs)),
                                    info.needs_gpu(), gpu_info().available);
  j["knobs"]["grid"] = q.settings.grid.str();
  j["knobs"]["record_finish_order"] = q.settings.record_finish_order;
  if (!w.knobs.empty()) {  // the workload's own knobs, every one with the value the run had
    ParamValues values = w.knob_values(q.knobs);
    j["workload_knobs"] = params_json(TextParams(w.knobs, values));
  }
  j["strategy_section"] = info.section;
  j["width"] = q.width;
  j["height"] = q.height;
  j["strands"] = static_cast<uint64_t>(q.width) * q.height;
  j["knobs_read"] = info.knobs;
  j["grid"] = strand_grid_text(info, t.grid, q.settings);
  switch (w.view_kind) {
    case StrandViewKind::Orbit:
      j["view"] = {{"kind", "orbit"},
                   {"azimuth_deg", q.view.azimuth_deg},
                   {"elevation_deg", q.view.elevation_deg},
                   {"distance", q.view.distance},
                   {"fov_deg", kCh2Fov}};
      break;
    case StrandViewKind::Plane:
      j["view"] = {{"kind", "plane"},
                   {"center_x", q.view.center_x},
                   {"center_y", q.view.center_y},
                   {"half_height", q.view.half_height}};
      break;
    case StrandViewKind::Fixed:
      j["view"] = {{"kind", "fixed"}};
      break;
  }
  j["timing"] = {{"ms", t.ms},
                 {"clock", t.cuda_events ? "cuda-events" : "wall-clock"},
                 {"launches", t.launches},
                 {"super_steps", t.super_steps},
                 {"notes", t.notes},
                 {"run_wall_ms", o.wall_ms}};
  j["steps"] = {{"count", o.stats.count}, {"total", o.stats.total}, {"min", o.stats.min},
                {"max", o.stats.max},     {"mean", o.stats.mean},   {"sigma", o.stats.sigma},
                {"cv", o.stats.cv}};
  j["image_checksum"] = fmt::format("{:016x}", r.checksum());
  // How the strands ended (ridge3d's converged particles are its stable strands).
  uint64_t stable = 0, dead = 0;
  for (const WorkStatus s : r.status) stable += s == WorkStatus::Stable, dead += s == WorkStatus::Dead;
  j["stable_strands"] = stable;
  j["dead_strands"] = dead;
  if (!r.view_rgba.empty())
    j["picture"] = {{"width", r.view_width}, {"height", r.view_height},
                    {"what", "the workload's own picture of its result (ridge3d: the converged particles as "
                             "splats coloured by ridge strength, seen through the view)"}};
  return j;
}

std::pair<std::string, std::string> capture_strands(const StrandOutcome& o, const std::vector<uint32_t>& shown,
                                                    bool heat_map, const std::string& dir, const nlohmann::json& extra) {
  if (o.error) throw InputError("", "capture", "the last strand run failed; nothing to capture");
  const auto [w, h] = strand_shown_size(o.result, heat_map);
  if (shown.size() != static_cast<size_t>(w) * h) throw InputError("", "capture", "no strand image to capture");
  nlohmann::json sidecar = strand_report(o);
  const std::string base = o.request.workload + "-" + o.request.strategy + "-";
  const std::string stem = capture_png(dir, base, shown, static_cast<int>(w), static_cast<int>(h), std::move(sidecar),
                                       {{"shown", heat_map ? "steps heat map" : "image"}}, extra);
  return {stem + ".png", stem + ".json"};
}

}  // namespace mv
