#include "app/core/capture.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <numeric>

#include "app/core/image_io.h"
#include "app/core/megakernel_report.h"
#include "app/core/output_file.h"
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

nlohmann::json session_report(Session& s, const ToneMapSettings& tm) {
  using nlohmann::json;
  const SessionOptions& o = s.options();
  const FrameStats& last = s.last();
  const std::vector<uint32_t>& patch_spp = s.workload().film().host_patch_spp();
  const uint32_t target = o.task.target_spp;
  const auto [lo, hi] = std::minmax_element(patch_spp.begin(), patch_spp.end());
  const double mean_spp =
      std::accumulate(patch_spp.begin(), patch_spp.end(), 0.0) / static_cast<double>(patch_spp.size());
  const auto finished = std::count_if(patch_spp.begin(), patch_spp.end(), [&](uint32_t n) { return n >= target; });

  json r;
  r["megaview_version"] = MV_VERSION;
  r["timestamp"] = iso8601_utc_now();
  r["scene"] = {{"name", s.scene().name}, {"file", s.scene().source_path}};
  r["resolution"] = {{"width", s.width()}, {"height", s.height()}};
  r["strategy"] = s.strategy().name;
  r["priority"] = priority_name(o.task.priority);
  r["paths_per_pixel"] = o.task.paths_per_pixel;
  r["target_spp"] = target;
  r["seed"] = o.task.seed;
  r["wave_size"] = o.schedule.wave_size;
  r["block_size"] = o.schedule.block_size;
  r["paths_per_frame"] = o.paths_per_frame;  // 0: automatic, about frame_budget_ms of work
  r["frame_budget_ms"] = o.frame_budget_ms;
  if (const MegakernelControl* m = s.megakernel())  // the scheduler's settings and statistics (Kerbl 2012)
    r["megakernel"] = {{"settings", megakernel_settings_json(m->settings())},
                       {"stats", megakernel_stats_json(m->stats(), gpu_info().clock_khz)}};
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
  r["device"] = {{"runs_on", s.side() == Side::Device ? "gpu" : "cpu"}};
  if (s.gpu_in_use())
    r["device"]["gpu"] = gpu_info().name;
  else
    r["device"]["cpu_reason"] = s.cpu_reason();
  return r;
}

CaptureResult capture(Session& s, const ToneMapSettings& tm, const std::string& dir, const nlohmann::json& extra) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir, "", "cannot create the capture directory: " + ec.message());

  // Everything is computed before a number is claimed, so the claim is held only while writing.
  std::vector<uint32_t> shown, heat(static_cast<size_t>(s.width()) * s.height());
  s.tonemap_to_host(tm, shown);
  heatmap_host(s.workload().film().host_view_synced(), s.options().task.target_spp, heat.data());
  const std::vector<float> linear = s.mean_image();
  nlohmann::json sidecar = session_report(s, tm);

  const std::string base =
      file_safe(s.scene().name) + "-" + s.strategy().name + "-" + priority_name(s.options().task.priority) + "-";
  const int w = static_cast<int>(s.width()), h = static_cast<int>(s.height());
  for (unsigned n = 1;; ++n) {
    char number[16];
    std::snprintf(number, sizeof number, "%04u", n);
    const std::string stem = (fs::path(dir) / (base + number)).string();
    CaptureResult r{stem + ".png", stem + ".exr", stem + "-heat.png", stem + ".json"};
    OwnedFd claim{create_exclusive(r.json)};
    if (claim.fd < 0) continue;  // taken: try the next number
    std::error_code e;
    if (fs::exists(fs::symlink_status(r.png, e)) || fs::exists(fs::symlink_status(r.exr, e)) ||
        fs::exists(fs::symlink_status(r.heat_png, e))) {
      ::unlink(r.json.c_str());  // a file of this stem that is not ours: give the number back
      continue;
    }
    std::vector<std::string> written;
    try {
      write_new_file(r.png, [&](const std::string& tmp) { write_png(tmp, shown.data(), w, h); });
      written.push_back(r.png);
      write_new_file(r.exr, [&](const std::string& tmp) { write_exr(tmp, linear.data(), w, h); });
      written.push_back(r.exr);
      write_new_file(r.heat_png, [&](const std::string& tmp) { write_png(tmp, heat.data(), w, h); });
      written.push_back(r.heat_png);
      sidecar["capture"] = {{"png", fs::path(r.png).filename().string()},
                            {"exr", fs::path(r.exr).filename().string()},
                            {"heat_png", fs::path(r.heat_png).filename().string()}};
      sidecar.update(extra);
      write_all(claim.fd, sidecar.dump(2) + "\n", r.json);
      const int rc = ::close(claim.fd);
      claim.fd = -1;
      if (rc != 0) throw InputError(r.json, "", std::string("cannot write: ") + std::strerror(errno));
      return r;
    } catch (...) {
      for (const std::string& f : written) ::unlink(f.c_str());
      ::unlink(r.json.c_str());
      throw;
    }
  }
}

}  // namespace mv
