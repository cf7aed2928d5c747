// Progress of a long headless job on stderr, so that stdout's tables stay clean. On a terminal a bar
// rewritten in place (at most 10 times a second) with the rate and the estimated time left; otherwise
// (logs, pipes, tests) a plain line every few seconds. Short jobs stay quiet: nothing is printed before
// `first_after_s`. Once the measured rate says the job will run longer than `estimate_over_s`, one line
// gives the estimate, and the progress goes on.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace mv {

class Progress {
 public:
  struct Options {
    /// Bar in place (true) or plain lines (false); by default whether stderr is a terminal.
    bool terminal;
    double first_after_s = 2.0;      ///< seconds before anything is printed (0: from the first update)
    double line_every_s = 2.0;       ///< seconds between plain lines (not a terminal)
    double estimate_over_s = 180.0;  ///< a longer estimated total time prints one estimate line
    std::FILE* out = stderr;
    Options();
  };

  /// `what` names the job in every line (e.g. "render"); `total` > 0 is the work in `unit`s (e.g.
  /// "samples", "runs", "ms busy"); an empty unit prints no rate.
  Progress(std::string what, double total, std::string unit, Options options = Options());
  ~Progress();  ///< finish()es if the job was not finished
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` units of the total are done (clamped to [0, total]). Safe to call from several threads: a call
  /// that finds another printing returns at once. Cheap enough to call after every step.
  void update(double done);
  /// The final line ("took m:ss"), printed if anything was printed before or the job ran past
  /// first_after_s; later calls do nothing.
  void finish();

  /// Whether a line was printed (tests).
  bool printed() const { return printed_; }

  /// "0:07", "12:34", "1:02:03", "3 days 4 h"; negative or NaN: "?".
  static std::string duration_text(double seconds);
  /// "12.3 Msamples/s" (k, M, G prefixes), "3.5 runs/s".
  static std::string rate_text(double per_second, const std::string& unit);

 private:
  using Clock = std::chrono::steady_clock;
  void print(double done, double elapsed_s, bool final);

  std::string what_, unit_;
  double total_;
  Options o_;
  Clock::time_point start_ = Clock::now();
  double last_print_s_ = -1e300;
  double done_ = 0;
  bool printed_ = false, estimated_ = false, finished_ = false, bar_open_ = false;
  std::mutex mutex_;
};

}  // namespace mv
