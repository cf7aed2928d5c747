// The live MSE of the viewer: sampled at most every `interval_ms`, plotted as log10 over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "app/session/session.h"

namespace mv::gui {

class MseTracker {
 public:
  explicit MseTracker(double interval_ms = 100.0, size_t capacity = 500)
      : interval_ms_(interval_ms), capacity_(capacity) {}

  /// Forgets the history (call when the film is reset).
  void clear();
  /// Samples Session::mse() if the session has a reference, `interval_ms` passed since the last sample
  /// and the film gained paths since then. `now_ms` is any monotonic clock. Throws what Session::mse throws.
  void update(Session& session, double now_ms);
  /// Whether update() would sample now (a reference, the interval passed, new paths since the last sample).
  bool due(const Session& session, double now_ms) const;
  /// Samples Session::mse() now if the session has a reference (the split view samples both sides at
  /// the same moments, so the two curves share their time axis). Throws what Session::mse throws.
  void sample(Session& session, double now_ms);
  bool has_value() const { return has_value_; }
  /// The latest MSE (valid when has_value()).
  double current() const { return current_; }
  /// log10 of the last `capacity` samples, oldest first (for ImGui::PlotLines).
  const std::vector<float>& log10_history() const { return history_; }

 private:
  double interval_ms_;
  size_t capacity_;
  double last_sample_ms_ = -1e300;
  uint64_t last_paths_ = 0;
  bool has_value_ = false;
  double current_ = 0.0;
  std::vector<float> history_;
};

}  // namespace mv::gui
