#include "app/cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace mv {

Progress::Options::Options() : terminal(::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::string what, double total, std::string unit, Options options)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total > 0 ? total : 1.0), o_(options) {}

Progress::~Progress() { finish(); }

std::string Progress::duration_text(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  const uint64_t t = static_cast<uint64_t>(s + 0.5);
  if (t >= 86400 * 2) return fmt::format("{} days {} h", t / 86400, t % 86400 / 3600);
  if (t >= 3600) return fmt::format("{}:{:02d}:{:02d}", t / 3600, t % 3600 / 60, t % 60);
  return fmt::format("{}:{:02d}", t / 60, t % 60);
}

std::string Progress::rate_text(double r, const std::string& unit) {
  const char* prefix = "";
  if (r >= 1e9) r *= 1e-9, prefix = "G";
  else if (r >= 1e6) r *= 1e-6, prefix = "M";
  else if (r >= 1e4) r *= 1e-3, prefix = "k";
  return fmt::format("{:.{}f} {}{}/s", r, r < 10 ? 2 : 1, prefix, unit);
}

void Progress::update(double done) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  done_ = std::clamp(done, 0.0, total_);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (elapsed < o_.first_after_s) return;
  const double every = o_.terminal ? 0.1 : o_.line_every_s;
  if (elapsed - last_print_s_ < every) return;
  print(done_, elapsed, false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (printed_ || elapsed >= o_.first_after_s) print(total_, elapsed, true);
}

void Progress::print(double done, double elapsed, bool final) {
  last_print_s_ = elapsed;
  const double frac = done / total_;
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  const double left = frac > 0 ? elapsed * (1.0 - frac) / frac : -1.0;
  std::string text;
  if (!final && !estimated_ && frac > 0 && elapsed >= 1.0 && elapsed + left > o_.estimate_over_s) {
    estimated_ = true;  // once: the job is long; say so in one line, then keep reporting
    text += fmt::format("{}{}: estimated {} in all at {} (measured over {}); progress follows\n",
                        bar_open_ ? "\n" : "", what_, duration_text(elapsed + left),
                        unit_.empty() ? fmt::format("{:.1f} %/s", 100.0 * frac / elapsed) : rate_text(rate, unit_),
                        duration_text(elapsed));
    bar_open_ = false;
  }
  const std::string rate_part = unit_.empty() ? "" : ", " + rate_text(rate, unit_);
  const std::string time_part = final ? "took " + duration_text(elapsed) : "ETA " + duration_text(left);
  if (o_.terminal) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth);
    text += fmt::format("\r{} [{}{}] {:5.1f}%{}, {}\x1b[K", what_, std::string(filled, '#'),
                        std::string(kWidth - filled, '.'), 100.0 * frac, rate_part, time_part);
    bar_open_ = !final;
    if (final) text += "\n";
  } else {
    text += fmt::format("{}: {:5.1f}%{}, {}\n", what_, 100.0 * frac, rate_part, time_part);
  }
  std::fputs(text.c_str(), o_.out);
  std::fflush(o_.out);
  printed_ = true;
}

}  // namespace mv
