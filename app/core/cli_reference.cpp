// `megaview reference`: the ground truth of a scene, with a progress bar and a sidecar saying how it
// was made.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/core/capture.h"
#include "app/core/cli.h"
#include "app/core/image_io.h"
#include "app/core/output_file.h"

namespace mv {

namespace {

using Clock = std::chrono::steady_clock;

/// Progress on stderr: rewritten in place (\r) at most 10 times a second on a terminal, a plain line
/// per 10 % otherwise (logs, pipes).
class ProgressBar {
 public:
  explicit ProgressBar(uint64_t total) : total_(std::max<uint64_t>(total, 1)), tty_(::isatty(STDERR_FILENO) == 1) {}

  void update(const FrameStats& fs, bool final = false) {
    const auto now = Clock::now();
    const double frac = std::min(1.0, static_cast<double>(fs.total_paths) / static_cast<double>(total_));
    if (!final && frac >= 1.0) return;  // the final line says it
    if (tty_ ? (!final && now - last_ < std::chrono::milliseconds(100)) : (!final && frac < next_decile_)) return;
    last_ = now;
    next_decile_ = (static_cast<int>(frac * 10.0) + 1) / 10.0;
    const double elapsed_s = std::chrono::duration<double>(now - start_).count();
    // While running: the estimated time left; at the end: the time it took.
    const double secs = final ? elapsed_s : frac > 0 ? elapsed_s * (1.0 - frac) / frac : 0.0;
    const int whole = static_cast<int>(secs + 0.5);
    const int filled = static_cast<int>(frac * kWidth);
    const std::string line = fmt::format("[{}{}] {:5.1f}%  {:8.2f} Msamples/s  {} {}:{:02d}", std::string(filled, '#'),
                                         std::string(kWidth - filled, '.'), 100.0 * frac,
                                         msamples_per_second(fs.total_paths, fs.total_busy_ms), final ? "took" : "ETA",
                                         whole / 60, whole % 60);
    std::fputs(tty_ ? ("\r" + line + (final ? "\n" : "")).c_str() : (line + "\n").c_str(), stderr);
    std::fflush(stderr);
  }

 private:
  static constexpr int kWidth = 30;
  uint64_t total_;
  bool tty_;
  Clock::time_point start_ = Clock::now(), last_{};
  double next_decile_ = 0.1;
};

}  // namespace

void run_reference(const ReferenceCommand& c) {
  const std::string json_path = sibling_path(c.out, "--out", ".exr", ".json");
  if (!c.force) {
    ensure_absent(c.out);
    ensure_absent(json_path);
  }
  SessionOptions o = c.session;
  if (o.strategy.empty()) o.strategy = !o.force_cpu && gpu_available() ? "uniform" : "cpu-parallel";
  o.task.priority = PriorityFunction::None;  // every patch ends at the target: order only costs time
  Session s(o);

  const uint64_t total = static_cast<uint64_t>(s.width()) * s.height() * s.options().task.target_spp;
  ProgressBar bar(total);
  const auto t0 = Clock::now();
  const FrameStats fs = s.run(0, 0, [&](const FrameStats& f) { bar.update(f); });
  bar.update(fs, true);
  const double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  const std::vector<float> linear = s.mean_image();
  nlohmann::json sidecar = session_report(s, default_display(s));
  sidecar["image"] = std::filesystem::path(c.out).filename().string();
  sidecar["elapsed_ms"] = elapsed_ms;
  const int w = static_cast<int>(s.width()), h = static_cast<int>(s.height());
  write_new_file(
      c.out, [&](const std::string& tmp) { write_exr(tmp, linear.data(), w, h); }, c.force);
  write_new_text_file(json_path, sidecar.dump(2) + "\n", c.force);
  fmt::print("{}, {}: {} {}x{}, {} spp, seed {}, {}, {:.1f} s ({:.1f} ms busy, {:.2f} Msamples/s)\n", c.out, json_path,
             s.scene().name, w, h, s.options().task.target_spp, s.options().task.seed, s.strategy().name,
             elapsed_ms * 1e-3, fs.total_busy_ms, msamples_per_second(fs.total_paths, fs.total_busy_ms));
}

}  // namespace mv
