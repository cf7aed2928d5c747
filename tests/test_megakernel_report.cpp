// What megaview shows and records about the megakernel (app/core/megakernel_report.h): the sidecar's
// JSON of its settings and statistics, named settings for scripts, and the viewer's per-second rates.
// Plain C++ on given structs: runs everywhere.
#include <gtest/gtest.h>

#include <string>

#include "app/core/megakernel_report.h"

namespace mv {
namespace {

MegakernelSettings unusual_settings() {
  MegakernelSettings m;
  m.segment_size = 64;
  m.controller = false;
  m.controllers = 8;
  m.time_management = false;
  m.collect_metadata = false;
  m.static_task_cycles = 1234;
  m.constant_segment_cycles = 5678;
  m.buffer_multiplier = 2.5f;
  m.wave_aware_buffer = true;
  m.record_order = true;
  m.record_capacity = 4096;
  m.watchdog_seconds = 3.5;
  m.blocks_per_sm = 6;
  m.rebuild_sorted = false;
  m.pull_forward = true;
  m.pull_distance = 9;
  return m;
}

TEST(MegakernelReport, SettingsJsonHoldsEveryField) {
  const nlohmann::json j = megakernel_settings_json(unusual_settings());
  EXPECT_EQ(j.size(), 16u) << j.dump();
  EXPECT_EQ(j["segment_size"], 64);
  EXPECT_EQ(j["controller"], false);
  EXPECT_EQ(j["controllers"], 8);
  EXPECT_EQ(j["time_management"], false);
  EXPECT_EQ(j["collect_metadata"], false);
  EXPECT_EQ(j["static_task_cycles"], 1234);
  EXPECT_EQ(j["constant_segment_cycles"], 5678);
  EXPECT_FLOAT_EQ(j["buffer_multiplier"].get<float>(), 2.5f);
  EXPECT_EQ(j["wave_aware_buffer"], true);
  EXPECT_EQ(j["record_order"], true);
  EXPECT_EQ(j["record_capacity"], 4096);
  EXPECT_DOUBLE_EQ(j["watchdog_seconds"].get<double>(), 3.5);
  EXPECT_EQ(j["blocks_per_sm"], 6);
  EXPECT_EQ(j["rebuild_sorted"], false);
  EXPECT_EQ(j["pull_forward"], true);
  EXPECT_EQ(j["pull_distance"], 9);
}

MegakernelStats some_stats() {
  MegakernelStats s;
  s.grid_blocks = 1056;
  s.controllers = 4;
  s.blocks_per_sm = 8;
  s.worker_warps = 4208;
  s.registers = 96;
  s.capacity = 16384;
  s.queue_length = 9000;
  s.dequeues = 3000;
  s.tasks_per_second = 2.5e7;
  s.stopped_by_host = true;
  s.order_score = 0.975;
  s.recorded = 3000;
  s.slices = 12;
  s.sort_passes[0] = 10;
  s.sort_passes[1] = 20;
  s.sort_passes[2] = 30;
  s.sort_cycles_max[0] = 40000;
  s.sort_cycles_max[1] = 20000;
  s.sort_cycles_max[2] = 8000;
  s.lock_collisions = 77;
  s.wait_cycles = 3000000;
  s.ctrl_lock_failures = 5;
  s.ctrl_time_refusals = 6;
  s.ctrl_restarts = 7;
  s.ctrl_not_full = 8;
  s.empty_executions = 0;
  return s;
}

TEST(MegakernelReport, StatsJsonHoldsEveryFieldAndConvertsCyclesWithTheClock) {
  const nlohmann::json j = megakernel_stats_json(some_stats(), 2000000);  // 2 GHz
  for (const char* key : {"grid_blocks", "controllers", "blocks_per_sm", "worker_warps", "registers", "capacity",
                          "queue_length", "dequeues", "tasks_per_second", "stopped_by_host", "order_score", "recorded",
                          "slices", "sort_passes", "sort_cycles_max", "lock_collisions", "wait_cycles",
                          "ctrl_lock_failures", "ctrl_time_refusals", "ctrl_restarts", "ctrl_not_full",
                          "empty_executions", "clock_khz", "wait_ms", "sort_us_max"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["grid_blocks"], 1056);
  EXPECT_EQ(j["worker_warps"], 4208);
  EXPECT_EQ(j["queue_length"], 9000);
  EXPECT_EQ(j["stopped_by_host"], true);
  EXPECT_DOUBLE_EQ(j["order_score"].get<double>(), 0.975);
  EXPECT_EQ(j["sort_passes"]["unsorted-unsorted"], 10);
  EXPECT_EQ(j["sort_passes"]["one-sorted"], 20);
  EXPECT_EQ(j["sort_passes"]["sorted-sorted"], 30);
  EXPECT_EQ(j["sort_cycles_max"]["unsorted-unsorted"], 40000);
  EXPECT_EQ(j["ctrl_time_refusals"], 6);
  EXPECT_EQ(j["clock_khz"], 2000000);
  EXPECT_DOUBLE_EQ(j["wait_ms"].get<double>(), 1.5);                       // 3e6 cycles at 2 GHz
  EXPECT_DOUBLE_EQ(j["sort_us_max"]["unsorted-unsorted"].get<double>(), 20.0);  // 40000 cycles at 2 GHz
  EXPECT_DOUBLE_EQ(j["sort_us_max"]["sorted-sorted"].get<double>(), 4.0);
}

TEST(MegakernelReport, StatsJsonWithoutAScoreOrAClock) {
  MegakernelStats s = some_stats();
  s.order_score = -1.0;
  s.recorded = 0;
  const nlohmann::json j = megakernel_stats_json(s, 0);
  EXPECT_TRUE(j["order_score"].is_null());
  EXPECT_EQ(j["recorded"], 0);
  EXPECT_FALSE(j.contains("clock_khz"));
  EXPECT_FALSE(j.contains("wait_ms"));
  EXPECT_FALSE(j.contains("sort_us_max"));
  EXPECT_EQ(j["wait_cycles"], 3000000);
}

TEST(MegakernelReport, NamedSettingsSetTheirFields) {
  MegakernelSettings m;
  set_megakernel_setting(m, "segment-size", "64");
  set_megakernel_setting(m, "controllers", "4");
  set_megakernel_setting(m, "controller", "off");
  set_megakernel_setting(m, "time-management", "false");
  set_megakernel_setting(m, "collect-metadata", "0");
  set_megakernel_setting(m, "static-task-cycles", "1000");
  set_megakernel_setting(m, "constant-segment-cycles", "2000");
  set_megakernel_setting(m, "buffer-multiplier", "1.5");
  set_megakernel_setting(m, "wave-aware-buffer", "on");
  set_megakernel_setting(m, "record-order", "true");
  set_megakernel_setting(m, "blocks-per-sm", "2");
  set_megakernel_setting(m, "pull-forward", "on");
  set_megakernel_setting(m, "pull-distance", "7");
  EXPECT_TRUE(m.pull_forward);
  EXPECT_EQ(m.pull_distance, 7u);
  EXPECT_EQ(m.segment_size, 64u);
  EXPECT_EQ(m.controllers, 4u);
  EXPECT_FALSE(m.controller);
  EXPECT_FALSE(m.time_management);
  EXPECT_FALSE(m.collect_metadata);
  EXPECT_EQ(m.static_task_cycles, 1000u);
  EXPECT_EQ(m.constant_segment_cycles, 2000u);
  EXPECT_FLOAT_EQ(m.buffer_multiplier, 1.5f);
  EXPECT_TRUE(m.wave_aware_buffer);
  EXPECT_TRUE(m.record_order);
  EXPECT_EQ(m.blocks_per_sm, 2u);
  for (const char* name : {"segment-size", "controllers", "controller", "time-management", "collect-metadata",
                           "static-task-cycles", "constant-segment-cycles", "buffer-multiplier", "wave-aware-buffer",
                           "record-order", "blocks-per-sm"})
    EXPECT_TRUE(is_megakernel_setting_name(name)) << name;
  EXPECT_FALSE(is_megakernel_setting_name("segment_size"));
  EXPECT_FALSE(is_megakernel_setting_name("priority"));
}

TEST(MegakernelReport, BadNamedSettingValuesNameTheSetting) {
  const auto message = [](const char* name, const char* value) {
    MegakernelSettings m;
    try {
      set_megakernel_setting(m, name, value);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const auto& [name, value] : {std::pair{"segment-size", "abc"}, std::pair{"segment-size", "-32"},
                                    std::pair{"segment-size", "99999999999"}, std::pair{"controllers", ""},
                                    std::pair{"controller", "maybe"}, std::pair{"buffer-multiplier", "x2"},
                                    std::pair{"warp-speed", "9"}}) {
    const std::string e = message(name, value);
    EXPECT_NE(e.find(name), std::string::npos) << name << "=" << value << ": " << e;
    EXPECT_NE(e, "no error") << name << "=" << value;
  }
  // Out-of-range numbers parse; MegakernelSettings::validate() rejects them (Session::set_megakernel_settings).
  MegakernelSettings m;
  set_megakernel_setting(m, "segment-size", "100");
  EXPECT_THROW(m.validate(), InputError);
}

TEST(MegakernelReport, RatesArePerSecondOfBusyTimeAndSurviveARebuild) {
  MegakernelRateTracker t(100.0);  // a 100 ms window
  MegakernelStats s;
  s.worker_warps = 1000;
  s.slices = 1;
  s.dequeues = 500;
  s.sort_passes[0] = 10;
  s.wait_cycles = 1000;
  s.lock_collisions = 2;
  t.add(s, 50.0, 1000000);  // 1 GHz: 50 ms = 5e7 cycles per warp
  EXPECT_FALSE(t.rates().valid) << "half a window";
  s.slices = 2;
  s.dequeues = 700;
  s.sort_passes[0] = 30;
  s.wait_cycles = 1000 + 99000;
  s.lock_collisions = 12;
  s.ctrl_restarts = 4;
  t.add(s, 50.0, 1000000);
  MegakernelRates r = t.rates();
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.window_ms, 100.0);
  EXPECT_DOUBLE_EQ(r.tasks_per_second, 1200.0 / 0.1);
  EXPECT_DOUBLE_EQ(r.sort_passes_per_second[0], 30.0 / 0.1);
  EXPECT_DOUBLE_EQ(r.lock_collisions_per_second, 12.0 / 0.1);
  EXPECT_DOUBLE_EQ(r.restarts_per_second, 4.0 / 0.1);
  EXPECT_DOUBLE_EQ(r.wait_share, 100000.0 / (1000.0 * 1e8));

  // A rebuild: the counters start over (slices back to 1); the new values count from zero.
  MegakernelStats after;
  after.worker_warps = 1000;
  after.slices = 1;
  after.dequeues = 100;
  after.sort_passes[0] = 5;
  t.add(after, 100.0, 1000000);
  r = t.rates();
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.tasks_per_second, 1000.0);
  EXPECT_DOUBLE_EQ(r.sort_passes_per_second[0], 50.0);
  EXPECT_DOUBLE_EQ(r.lock_collisions_per_second, 0.0);

  // Unknown clock: no wait share.
  after.slices = 2;
  t.add(after, 100.0, 0);
  EXPECT_EQ(t.rates().wait_share, -1.0);
  t.clear();
  EXPECT_FALSE(t.rates().valid);
}

}  // namespace
}  // namespace mv
