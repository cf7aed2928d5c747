#include "app/gui/mse_tracker.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace mv::gui {

void MseTracker::clear() {
  history_.clear();
  has_value_ = false;
  last_paths_ = 0;
  last_sample_ms_ = -1e300;
}

bool MseTracker::due(const Session& s, double now_ms) const {
  if (!s.has_reference() || now_ms - last_sample_ms_ < interval_ms_) return false;
  return !has_value_ || s.last().total_paths != last_paths_;
}

void MseTracker::update(Session& s, double now_ms) {
  if (due(s, now_ms)) sample(s, now_ms);
}

void MseTracker::sample(Session& s, double now_ms) {
  if (!s.has_reference()) return;
  const uint64_t paths = s.last().total_paths;
  current_ = s.mse();
  has_value_ = true;
  last_paths_ = paths;
  last_sample_ms_ = now_ms;
  if (history_.size() == capacity_) history_.erase(history_.begin());
  history_.push_back(static_cast<float>(std::log10(std::max(current_, static_cast<double>(FLT_MIN)))));
}

}  // namespace mv::gui
