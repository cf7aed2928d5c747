#include "app/session/capture.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <numeric>

#include "app/session/image_io.h"
#include "app/session/megakernel_report.h"
#include "app/session/params_report.h"
#include "app/session/output_file.h"
#include "app/session/split.h"
#include "base/errors.h"
#include "render/gpu.h"

// The project version comes from CMake's project(VERSION ...) as a compile definition.
#ifndef MV_VERSION
#define MV_VERSION "unknown"
#endif

namespace mv {

namespace fs = std::filesystem;

namespace {

std::string iso8601_utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// A scene name made safe for a file name (letters, digits, '-', '_', '.').
std::string file_safe(const std::string& s) {
  std::string out = s.empty() ? "scene" : s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  if (out[0] == '.') out[0] = '_';  // a capture is never a hidden file
  return out;
}

void write_all(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

/// Closes the descriptor it holds (if any) when it goes out of scope.
struct OwnedFd {
  int fd = -1;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

nlohmann::json sidecar_header(const std::string& workload, const std::string& strategy, nlohmann::json knobs,
                              bool runs_on_gpu, bool gpu_in_use) {
  nlohmann::json r = {{"megaview_version", MV_VERSION},
                      {"timestamp", iso8601_utc_now()},
                      {"workload", workload},
                      {"strategy", strategy},
                      {"knobs", knobs.is_null() ? nlohmann::json::object() : std::move(knobs)},
                      {"device", {{"runs_on", runs_on_gpu ? "gpu" : "cpu"}}}};
  if (gpu_in_use) r["device"]["gpu"] = gpu_info().name;
  return r;
}

nlohmann::json session_report(Session& s, const ToneMapSettings& tm) {
  using nlohmann::json;
  const SessionOptions& o = s.options();
  const FrameStats& last = s.last();
  const std::vector<uint32_t>& patch_spp = s.workload().film().host_patch_spp();
  const uint32_t target = o.task.target_spp;
  const auto [lo, hi] = std::minmax_element(patch_spp.begin(), patch_spp.end());
  const double mean_spp =
      std::accumulate(patch_spp.begin(), patch_spp.end(), 0.0) / static_cast<double>(patch_spp.size());
  const uint32_t finished = s.workload().finished_tasks();  // at the target, or stopped by `adaptive`

  const Params* knobs = s.strategy_params();  // the strategy's knobs, generated
  json r = sidecar_header("progressive", s.strategy().name, knobs ? params_json(*knobs) : json::object(),
                          s.side() == Side::Device, s.gpu_in_use());
  r["scene"] = {{"name", s.scene().name}, {"file", s.scene().source_path}};
  r["resolution"] = {{"width", s.width()}, {"height", s.height()}};
  r["priority"] = priority_name(o.task.priority);
  if (o.task.priority == PriorityFunction::Adaptive) r["noise_threshold"] = o.task.noise_threshold;
  r["paths_per_pixel"] = o.task.paths_per_pixel;
  r["target_spp"] = target;
  r["seed"] = o.task.seed;
  r["wave_size"] = o.schedule.wave_size;
  r["block_size"] = o.schedule.block_size;
  r["paths_per_frame"] = o.paths_per_frame;  // 0: automatic, about frame_budget_ms of work
  r["frame_budget_ms"] = o.frame_budget_ms;
  if (const MegakernelControl* m = s.megakernel())  // the scheduler's statistics (Kerbl 2012); its settings are the knobs
    r["megakernel"] = {{"stats", megakernel_stats_json(m->stats(), gpu_info().clock_khz)}};
  r["spp"] = {{"mean", mean_spp}, {"min", *lo}, {"max", *hi}};
  r["patches"] = {{"finished", finished}, {"total", patch_spp.size()}};
  r["total_paths"] = last.total_paths;
  r["busy_ms"] = last.total_busy_ms;
  r["samples_per_second"] =
      last.total_busy_ms > 0 ? 1e3 * static_cast<double>(last.total_paths) / last.total_busy_ms : 0.0;
  if (s.has_reference()) {
    r["mse"] = s.mse();
    r["reference"] = s.reference_path();
  }
  r["display"] = {{"tone_map", tm.mode == ToneMapMode::MaxToWhite ? "max-to-white" : "exposure"},
                  {"exposure_ev", tm.exposure_ev},
                  {"gamma", tm.gamma},
                  {"heat_map", tm.heat_map},
                  {"heat_opacity", tm.heat_opacity}};
  if (!s.gpu_in_use()) r["device"]["cpu_reason"] = s.cpu_reason();
  return r;
}

/// Claims a fresh stem `dir`/`base`NNNN (NNNN = 0001, 0002, ...: O_CREAT|O_EXCL on "<stem>.json", then
/// none of "<stem><suffix>" may exist), calls `write_files(stem, written)` (which writes the other files
/// with write_new_file and lists them in `written`), then writes `sidecar(stem)` into the claimed JSON.
/// On failure removes what it wrote and the claim, and rethrows. Returns the stem.
std::string claim_and_write(const std::string& dir, const std::string& base, const std::vector<std::string>& suffixes,
                            const std::function<void(const std::string&, std::vector<std::string>&)>& write_files,
                            const std::function<nlohmann::json(const std::string&)>& sidecar) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir, "", "cannot create the capture directory: " + ec.message());
  for (unsigned n = 1;; ++n) {
    char number[16];
    std::snprintf(number, sizeof number, "%04u", n);
    const std::string stem = (fs::path(dir) / (base + number)).string();
    const std::string json_path = stem + ".json";
    OwnedFd claim{create_exclusive(json_path)};
    if (claim.fd < 0) continue;  // taken: try the next number
    std::error_code e;
    if (std::any_of(suffixes.begin(), suffixes.end(),
                    [&](const std::string& suffix) { return fs::exists(fs::symlink_status(stem + suffix, e)); })) {
      ::unlink(json_path.c_str());  // a file of this stem that is not ours: give the number back
      continue;
    }
    std::vector<std::string> written;
    try {
      write_files(stem, written);
      write_all(claim.fd, sidecar(stem).dump(2) + "\n", json_path);
      const int rc = ::close(claim.fd);
      claim.fd = -1;
      if (rc != 0) throw InputError(json_path, "", std::string("cannot write: ") + std::strerror(errno));
      return stem;
    } catch (...) {
      for (const std::string& f : written) ::unlink(f.c_str());
      ::unlink(json_path.c_str());
      throw;
    }
  }
}

namespace {

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

std::string capture_png(const std::string& dir, const std::string& base, const std::vector<uint32_t>& rgba, int width,
                        int height, nlohmann::json sidecar, const nlohmann::json& capture_fields,
                        const nlohmann::json& extra) {
  return claim_and_write(
      dir, base, {".png"},
      [&](const std::string& st, std::vector<std::string>& written) {
        write_new_file(st + ".png", [&](const std::string& tmp) { write_png(tmp, rgba.data(), width, height); });
        written.push_back(st + ".png");
      },
      [&](const std::string& st) {
        sidecar["capture"] = {{"png", file_name(st + ".png")}};
        sidecar["capture"].update(capture_fields);
        if (!extra.is_null()) sidecar.update(extra);  // {} from a caller is null, not an object
        return sidecar;
      });
}

CaptureResult capture(Session& s, const ToneMapSettings& tm, const std::string& dir, const nlohmann::json& extra) {
  // Everything is computed before a number is claimed, so the claim is held only while writing.
  std::vector<uint32_t> shown, heat(static_cast<size_t>(s.width()) * s.height());
  s.tonemap_to_host(tm, shown);
  heatmap_host(s.workload().film().host_view_synced(), s.options().task.target_spp, heat.data());
  const std::vector<float> linear = s.mean_image();
  nlohmann::json sidecar = session_report(s, tm);

  const std::string base =
      file_safe(s.scene().name) + "-" + s.strategy().name + "-" + priority_name(s.options().task.priority) + "-";
  const int w = static_cast<int>(s.width()), h = static_cast<int>(s.height());
  const std::string stem = claim_and_write(
      dir, base, {".png", ".exr", "-heat.png"},
      [&](const std::string& st, std::vector<std::string>& written) {
        write_new_file(st + ".png", [&](const std::string& tmp) { write_png(tmp, shown.data(), w, h); });
        written.push_back(st + ".png");
        write_new_file(st + ".exr", [&](const std::string& tmp) { write_exr(tmp, linear.data(), w, h); });
        written.push_back(st + ".exr");
        write_new_file(st + "-heat.png", [&](const std::string& tmp) { write_png(tmp, heat.data(), w, h); });
        written.push_back(st + "-heat.png");
      },
      [&](const std::string& st) {
        sidecar["capture"] = {{"png", file_name(st + ".png")},
                              {"exr", file_name(st + ".exr")},
                              {"heat_png", file_name(st + "-heat.png")}};
        sidecar.update(extra);
        return sidecar;
      });
  return CaptureResult{stem + ".png", stem + ".exr", stem + "-heat.png", stem + ".json"};
}

std::vector<uint32_t> compose_split(const std::vector<uint32_t>& left, const std::vector<uint32_t>& right, int width,
                                    int height, int column) {
  if (left.size() != static_cast<size_t>(width) * height || right.size() != left.size())
    throw InputError("", "split view", "the two films differ in size");
  std::vector<uint32_t> out(left);
  for (int y = 0; y < height; ++y)
    for (int x = std::max(column, 0); x < width; ++x) out[static_cast<size_t>(y) * width + x] = right[static_cast<size_t>(y) * width + x];
  if (column > 0 && column < width)
    for (int y = 0; y < height; ++y) out[static_cast<size_t>(y) * width + column] = kSplitDividerRgba;
  return out;
}

SplitCaptureResult capture_split(Session& left, Session& right, const ToneMapSettings& tm, float divider,
                                 const std::string& dir, const nlohmann::json& extra) {
  if (left.width() != right.width() || left.height() != right.height())
    throw InputError("", "split view", "the two films differ in size");
  const int w = static_cast<int>(left.width()), h = static_cast<int>(left.height());
  const int column = split_column(divider, w);
  const double divider_json = std::round(static_cast<double>(divider) * 1e6) / 1e6;  // 0.3, not 0.30000001
  std::vector<uint32_t> left_rgba, right_rgba;
  left.tonemap_to_host(tm, left_rgba);
  right.tonemap_to_host(tm, right_rgba);
  const std::vector<uint32_t> shown = compose_split(left_rgba, right_rgba, w, h, column);

  const auto side_report = [&](Session& s, const char* side, int x0, int x1) {
    nlohmann::json j = {{"side", side}, {"divider", divider_json}, {"columns", {x0, x1}}};
    if (s.has_reference()) j["displayed_mse"] = s.mse(PixelRegion::columns(x0, x1, h));
    return j;
  };
  const nlohmann::json left_split = side_report(left, "left", 0, column);
  const nlohmann::json right_split = side_report(right, "right", column, w);
  nlohmann::json left_extra = extra, right_extra = extra;
  left_extra["split"] = left_split;
  right_extra["split"] = right_split;
  SplitCaptureResult r;
  r.left = capture(left, tm, dir, left_extra);
  r.right = capture(right, tm, dir, right_extra);

  nlohmann::json sidecar = {{"megaview_version", MV_VERSION},
                            {"timestamp", iso8601_utc_now()},
                            {"scene", {{"name", left.scene().name}, {"file", left.scene().source_path}}},
                            {"resolution", {{"width", w}, {"height", h}}}};
  sidecar["split"] = {{"divider", divider_json},
                      {"column", column},
                      {"budget", "equal paths: each frame the right side renders what brings its total up to the "
                                 "left side's (app/session/split.h)"},
                      {"left", session_report(left, tm)},
                      {"right", session_report(right, tm)}};
  sidecar["split"]["left"]["split"] = left_split;
  sidecar["split"]["right"]["split"] = right_split;
  sidecar["split"]["left"]["capture"] = {{"json", file_name(r.left.json)}, {"exr", file_name(r.left.exr)},
                                         {"png", file_name(r.left.png)}, {"heat_png", file_name(r.left.heat_png)}};
  sidecar["split"]["right"]["capture"] = {{"json", file_name(r.right.json)}, {"exr", file_name(r.right.exr)},
                                          {"png", file_name(r.right.png)}, {"heat_png", file_name(r.right.heat_png)}};
  const std::string base = file_safe(left.scene().name) + "-split-" + left.strategy().name + "-" +
                           priority_name(left.options().task.priority) + "-vs-" + right.strategy().name + "-" +
                           priority_name(right.options().task.priority) + "-";
  const std::string stem =
      capture_png(dir, base, shown, w, h, std::move(sidecar), nlohmann::json::object(), extra);
  r.png = stem + ".png";
  r.json = stem + ".json";
  return r;
}

}  // namespace mv
