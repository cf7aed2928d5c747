#include "app/core/megakernel_report.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "base/errors.h"
#include "sched/bitonic.h"

namespace mv {

namespace {

constexpr int kMethods = 3;

/// {"unsorted-unsorted": v[0], "one-sorted": v[1], "sorted-sorted": v[2]}
template <class T>
nlohmann::json per_method(const T (&v)[kMethods]) {
  nlohmann::json j = nlohmann::json::object();
  for (int m = 0; m < kMethods; ++m) j[sort_method_name(static_cast<SortMethod>(m))] = v[m];
  return j;
}

/// Counter delta since the previous stats; a counter that went down started over (rebuild).
double delta(uint64_t now, uint64_t before, bool restarted) {
  return restarted || now < before ? static_cast<double>(now) : static_cast<double>(now - before);
}

const std::initializer_list<const char*> kNumberSettings = {"segment-size",       "controllers",
                                                            "static-task-cycles", "constant-segment-cycles",
                                                            "buffer-multiplier",  "blocks-per-sm",
                                                            "pull-distance"};
const std::initializer_list<const char*> kSwitchSettings = {"controller", "time-management", "collect-metadata",
                                                            "wave-aware-buffer", "record-order", "pull-forward"};

bool parse_switch(const std::string& name, const std::string& value) {
  if (value == "on" || value == "true" || value == "1") return true;
  if (value == "off" || value == "false" || value == "0") return false;
  throw InputError("", name, "expected on or off, got \"" + value + "\"");
}

uint32_t parse_u32(const std::string& name, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = value.empty() || value[0] == '-' ? 0 : std::strtoull(value.c_str(), &end, 10);
  if (!end || *end != '\0' || errno == ERANGE || v > 0xffffffffull)
    throw InputError("", name, "expected a whole number, got \"" + value + "\"");
  return static_cast<uint32_t>(v);
}

float parse_float(const std::string& name, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE) throw InputError("", name, "expected a number, got \"" + value + "\"");
  return v;
}

}  // namespace

nlohmann::json megakernel_settings_json(const MegakernelSettings& m) {
  return {{"segment_size", m.segment_size},
          {"controller", m.controller},
          {"controllers", m.controllers},
          {"time_management", m.time_management},
          {"collect_metadata", m.collect_metadata},
          {"static_task_cycles", m.static_task_cycles},
          {"constant_segment_cycles", m.constant_segment_cycles},
          {"buffer_multiplier", m.buffer_multiplier},
          {"wave_aware_buffer", m.wave_aware_buffer},
          {"record_order", m.record_order},
          {"record_capacity", m.record_capacity},
          {"watchdog_seconds", m.watchdog_seconds},
          {"blocks_per_sm", m.blocks_per_sm},
          {"rebuild_sorted", m.rebuild_sorted},
          {"pull_forward", m.pull_forward},
          {"pull_distance", m.pull_distance}};
}

nlohmann::json megakernel_stats_json(const MegakernelStats& s, int clock_khz) {
  nlohmann::json j = {{"grid_blocks", s.grid_blocks},
                      {"controllers", s.controllers},
                      {"blocks_per_sm", s.blocks_per_sm},
                      {"worker_warps", s.worker_warps},
                      {"registers", s.registers},
                      {"capacity", s.capacity},
                      {"queue_length", s.queue_length},
                      {"dequeues", s.dequeues},
                      {"tasks_per_second", s.tasks_per_second},
                      {"stopped_by_host", s.stopped_by_host},
                      {"order_score", s.order_score >= 0.0 ? nlohmann::json(s.order_score) : nlohmann::json()},
                      {"recorded", s.recorded},
                      {"slices", s.slices},
                      {"sort_passes", per_method(s.sort_passes)},
                      {"sort_cycles_max", per_method(s.sort_cycles_max)},
                      {"lock_collisions", s.lock_collisions},
                      {"wait_cycles", s.wait_cycles},
                      {"ctrl_lock_failures", s.ctrl_lock_failures},
                      {"ctrl_time_refusals", s.ctrl_time_refusals},
                      {"ctrl_restarts", s.ctrl_restarts},
                      {"ctrl_not_full", s.ctrl_not_full},
                      {"empty_executions", s.empty_executions}};
  if (clock_khz > 0) {
    const double khz = static_cast<double>(clock_khz);
    double sort_us[kMethods];
    for (int m = 0; m < kMethods; ++m) sort_us[m] = static_cast<double>(s.sort_cycles_max[m]) / khz * 1e3;
    j["clock_khz"] = clock_khz;
    j["wait_ms"] = static_cast<double>(s.wait_cycles) / khz;
    j["sort_us_max"] = per_method(sort_us);
  }
  return j;
}

bool is_megakernel_setting_name(const std::string& name) {
  for (const char* n : kNumberSettings)
    if (name == n) return true;
  for (const char* n : kSwitchSettings)
    if (name == n) return true;
  return false;
}

void set_megakernel_setting(MegakernelSettings& m, const std::string& name, const std::string& value) {
  if (name == "segment-size") m.segment_size = parse_u32(name, value);
  else if (name == "controllers") m.controllers = parse_u32(name, value);
  else if (name == "static-task-cycles") m.static_task_cycles = parse_u32(name, value);
  else if (name == "constant-segment-cycles") m.constant_segment_cycles = parse_u32(name, value);
  else if (name == "blocks-per-sm") m.blocks_per_sm = parse_u32(name, value);
  else if (name == "buffer-multiplier") m.buffer_multiplier = parse_float(name, value);
  else if (name == "controller") m.controller = parse_switch(name, value);
  else if (name == "time-management") m.time_management = parse_switch(name, value);
  else if (name == "collect-metadata") m.collect_metadata = parse_switch(name, value);
  else if (name == "wave-aware-buffer") m.wave_aware_buffer = parse_switch(name, value);
  else if (name == "record-order") m.record_order = parse_switch(name, value);
  else if (name == "pull-forward") m.pull_forward = parse_switch(name, value);
  else if (name == "pull-distance") m.pull_distance = parse_u32(name, value);
  else throw InputError("", name, "not a megakernel setting");
}

void MegakernelRateTracker::add(const MegakernelStats& s, double busy_ms, int clock_khz) {
  // Each step adds one slice; slices that did not grow mean the counters started over.
  const bool restarted = !have_prev_ || s.slices <= prev_.slices;
  busy_ms_ += busy_ms;
  dequeues_ += static_cast<double>(s.dequeues);
  for (int m = 0; m < kMethods; ++m) passes_[m] += delta(s.sort_passes[m], prev_.sort_passes[m], restarted);
  collisions_ += delta(s.lock_collisions, prev_.lock_collisions, restarted);
  lock_failures_ += delta(s.ctrl_lock_failures, prev_.ctrl_lock_failures, restarted);
  refusals_ += delta(s.ctrl_time_refusals, prev_.ctrl_time_refusals, restarted);
  restarts_ += delta(s.ctrl_restarts, prev_.ctrl_restarts, restarted);
  wait_cycles_ += delta(s.wait_cycles, prev_.wait_cycles, restarted);
  worker_cycles_ += static_cast<double>(s.worker_warps) * busy_ms * static_cast<double>(clock_khz);
  prev_ = s;
  have_prev_ = true;
  if (busy_ms_ < window_ms_ || busy_ms_ <= 0.0) return;

  const double per_s = 1000.0 / busy_ms_;
  MegakernelRates r;
  r.valid = true;
  r.window_ms = busy_ms_;
  r.tasks_per_second = dequeues_ * per_s;
  for (int m = 0; m < kMethods; ++m) r.sort_passes_per_second[m] = passes_[m] * per_s;
  r.lock_collisions_per_second = collisions_ * per_s;
  r.lock_failures_per_second = lock_failures_ * per_s;
  r.time_refusals_per_second = refusals_ * per_s;
  r.restarts_per_second = restarts_ * per_s;
  r.wait_share = clock_khz > 0 && worker_cycles_ > 0.0 ? wait_cycles_ / worker_cycles_ : -1.0;
  rates_ = r;
  busy_ms_ = dequeues_ = collisions_ = lock_failures_ = refusals_ = restarts_ = wait_cycles_ = worker_cycles_ = 0.0;
  for (double& p : passes_) p = 0.0;
}

void MegakernelRateTracker::clear() {
  const double window = window_ms_;
  *this = MegakernelRateTracker(window);
}

}  // namespace mv
