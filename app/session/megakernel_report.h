// What megaview shows and records about the priority megakernel (Kerbl 2012 §3–§6;
// sched/megakernel/megakernel_settings.h): its statistics as JSON (capture sidecars; its settings are knobs like
// every strategy's, base/params.h), per-second rates of its cumulative counters between frames, and the lines of the viewer's Megakernel panel (one column per side in split
// view: megakernel_stat_lines gives every side the same rows).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sched/megakernel/megakernel_settings.h"

namespace mv {

/// Every field of `s` under its C++ name; sort_passes and sort_cycles_max as objects keyed by sort
/// method ("unsorted-unsorted", "one-sorted", "sorted-sorted"); order_score null when not recorded.
/// With `clock_khz` > 0 (the GPU's peak SM clock) also "clock_khz", "wait_ms" (worker wait, summed over
/// warps) and "sort_us_max" (the longest sort per method, §5.3.2) converted from cycles.
nlohmann::json megakernel_stats_json(const MegakernelStats& s, int clock_khz);

/// Rates of the megakernel's cumulative counters, per second of busy (kernel) time, over the last
/// window of slices.
struct MegakernelRates {
  bool valid = false;               ///< false until a whole window was seen
  double window_ms = 0.0;           ///< busy time the rates cover
  double tasks_per_second = 0.0;    ///< task executions (dequeues) per second
  double sort_passes_per_second[3] = {0.0, 0.0, 0.0};  ///< per SortMethod
  double lock_collisions_per_second = 0.0;
  double lock_failures_per_second = 0.0;  ///< controller try-locks that met a segment in use
  double time_refusals_per_second = 0.0;  ///< §5.2 refusals: buffer shorter than the sort
  double restarts_per_second = 0.0;       ///< walks restarted at the back (Fig 2)
  /// Worker time spent waiting on locked segments: Δwait cycles / (worker warps × Δbusy cycles), in
  /// [0, 1]; −1 when the clock rate is unknown.
  double wait_share = -1.0;
};

/// Turns the megakernel's stats after each step into MegakernelRates. Feed it only after a step that
/// executed tasks; a rebuild (the counters start over: slices does not grow) or a new megakernel
/// instance is handled by counting from zero.
class MegakernelRateTracker {
 public:
  /// `window_ms`: busy time accumulated before the rates are updated (smooths frame-to-frame noise).
  explicit MegakernelRateTracker(double window_ms = 250.0) : window_ms_(window_ms) {}
  /// `s`: stats after a step that took `busy_ms`; `clock_khz`: the GPU's SM clock (0: unknown).
  void add(const MegakernelStats& s, double busy_ms, int clock_khz);
  /// Forgets everything (the viewer calls it when the film is reset or the strategy changes).
  void clear();
  const MegakernelRates& rates() const { return rates_; }

 private:
  double window_ms_;
  MegakernelStats prev_{};
  bool have_prev_ = false;
  // deltas accumulated over the current window
  double busy_ms_ = 0.0, dequeues_ = 0.0, passes_[3] = {0.0, 0.0, 0.0}, collisions_ = 0.0, lock_failures_ = 0.0,
         refusals_ = 0.0, restarts_ = 0.0, wait_cycles_ = 0.0, worker_cycles_ = 0.0;
  MegakernelRates rates_;
};

/// `v` with an SI prefix and 3 significant digits: "950", "12.3 k", "4.56 M" (up to " T").
std::string si_text(double v);

/// One row of the viewer's Megakernel panel for one megakernel.
struct MegakernelStatLine {
  std::string label;    ///< row name, the same for every megakernel ("tasks/s", "sort u-u/s", …)
  std::string value;    ///< this megakernel's value ("-" where there is none yet)
  std::string help;     ///< what the row means (Kerbl 2012 section), the same for every megakernel
  std::string detail;   ///< this megakernel's cumulative numbers behind the value; may be empty
  bool dim = false;     ///< no value yet (rates before their first window, S(n) not recorded)
  bool alert = false;   ///< a number that must stay 0 is not (empty executions: duplicated entries)
};

/// The Megakernel panel's rows for the stats `k` and rates `r` (per second of kernel time) of one
/// megakernel, always the same rows in the same order whatever the values, so split view's columns line
/// up: grid, workers, queue, tasks/s, sort u-u/s, sort u-s/s, sort s-s/s, collisions/s, worker wait,
/// refused/s, restarts/s, S(n), slices, empty exec. Rates read "-" until `r.valid` (tasks/s then falls
/// back to the last slice's k.tasks_per_second). `clock_khz` > 0 (the GPU's SM clock) adds times in µs/ms
/// to the details; 0 leaves cycles.
std::vector<MegakernelStatLine> megakernel_stat_lines(const MegakernelStats& k, const MegakernelRates& r, int clock_khz);

}  // namespace mv
