// What megaview shows and records about the megakernel (app/session/megakernel_report.h): the sidecar's
// JSON of its knobs (generated from megakernel_params(), as every strategy's) and statistics, knobs set by
// name as scripts do, the viewer's per-second rates and the Megakernel panel's rows (the same rows for
// every side of the split view).
// Plain C++ on given structs: runs everywhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/session/megakernel_report.h"
#include "app/session/params_report.h"

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
  m.band_repeat = 5;
  m.band_slack = 7;
  m.stay_leading = true;
  m.patch_lanes = 3;
  m.far_drain = 40;
  m.worker_blocks = 15;
  return m;
}

/// Sets knob `name` of `m` from its text, as Session::set_knob hands it to the megakernel.
void set_knob(MegakernelSettings& m, const std::string& name, const std::string& value) {
  BoundParams<MegakernelSettings>(megakernel_params(), m).apply({{name, value}});
}

TEST(MegakernelReport, KnobsJsonHoldsEveryField) {
  MegakernelSettings m = unusual_settings();
  const nlohmann::json j = params_json(BoundParams<MegakernelSettings>(megakernel_params(), m));
  EXPECT_EQ(j.size(), 26u) << j.dump();
  EXPECT_EQ(j["worker_blocks"], 15);
  EXPECT_EQ(j["band_repeat"], 5);
  EXPECT_EQ(j["band_slack"], 7);
  EXPECT_EQ(j["stay_leading"], true);
  EXPECT_EQ(j["patch_lanes"], 3);
  EXPECT_EQ(j["far_drain"], 40);
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
                          "empty_executions", "yields", "aged_claims", "table_passes", "lane_spawns", "clock_khz",
                          "wait_ms", "sort_us_max"})
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

TEST(MegakernelReport, KnobsSetByNameSetTheirFields) {
  MegakernelSettings m;
  set_knob(m, "segment-size", "64");
  set_knob(m, "controllers", "4");
  set_knob(m, "controller", "off");
  set_knob(m, "time-management", "false");
  set_knob(m, "collect-metadata", "0");
  set_knob(m, "static-task-cycles", "1000");
  set_knob(m, "constant-segment-cycles", "2000");
  set_knob(m, "buffer-multiplier", "1.5");
  set_knob(m, "wave-aware-buffer", "on");
  set_knob(m, "record-order", "true");
  set_knob(m, "blocks-per-sm", "2");
  set_knob(m, "pull-forward", "on");
  set_knob(m, "pull-distance", "7");
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
    EXPECT_NE(find_param(megakernel_params().specs(), name), nullptr) << name;
  EXPECT_EQ(find_param(megakernel_params().specs(), "segment_size"), nullptr);
  EXPECT_EQ(find_param(megakernel_params().specs(), "priority"), nullptr);
}

TEST(MegakernelReport, BadKnobValuesNameTheKnob) {
  const auto message = [](const char* name, const char* value) {
    MegakernelSettings m;
    try {
      set_knob(m, name, value);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const auto& [name, value] : {std::pair{"segment-size", "abc"}, std::pair{"segment-size", "-32"},
                                    std::pair{"segment-size", "99999999999"}, std::pair{"controllers", ""},
                                    std::pair{"controller", "maybe"}, std::pair{"buffer-multiplier", "x2"}}) {
    const std::string e = message(name, value);
    EXPECT_NE(e.find(name), std::string::npos) << name << "=" << value << ": " << e;
    EXPECT_NE(e, "no error") << name << "=" << value;
  }
  // Out-of-range numbers are refused by name, with the allowed range, before they reach the settings; a
  // struct filled by hand is refused by MegakernelSettings::validate() (the megakernel's step).
  MegakernelSettings m;
  const std::string e = message("segment-size", "100");
  EXPECT_NE(e.find("--segment-size: must be an integer in [32, 512], a power of two, got \"100\""), std::string::npos) << e;
  m.segment_size = 100;
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

TEST(MegakernelReport, SiTextHasThreeDigitsAndAPrefix) {
  EXPECT_EQ(si_text(0.0), "0");
  EXPECT_EQ(si_text(950.0), "950");
  EXPECT_EQ(si_text(12345.0), "12.3 k");
  EXPECT_EQ(si_text(4.56e6), "4.56 M");
  EXPECT_EQ(si_text(2e15), "2e+03 T");  // T is the largest prefix
}

/// The label of every row, in order.
std::vector<std::string> labels_of(const std::vector<MegakernelStatLine>& lines) {
  std::vector<std::string> l;
  for (const MegakernelStatLine& x : lines) l.push_back(x.label);
  return l;
}

const MegakernelStatLine& line(const std::vector<MegakernelStatLine>& lines, const std::string& label) {
  for (const MegakernelStatLine& x : lines)
    if (x.label == label) return x;
  static const MegakernelStatLine none{"(missing)", "", "", "", false, false};
  ADD_FAILURE() << "no row " << label;
  return none;
}

// Split view shows one column per side: every megakernel gets the same rows in the same order, whatever
// its numbers, so the columns line up.
TEST(MegakernelReport, PanelRowsAreTheSameForEveryMegakernelAndShowItsNumbers) {
  MegakernelStats fresh;  // one slice, no rates yet, no score
  fresh.slices = 1;
  fresh.grid_blocks = 264;
  fresh.controllers = 1;
  fresh.worker_warps = 263 * 4;  // 4 warps a worker block: 128 threads
  fresh.blocks_per_sm = 2;
  fresh.registers = 72;
  fresh.capacity = 4096;
  fresh.queue_length = 1200;
  fresh.tasks_per_second = 2.5e6;
  fresh.sort_passes[2] = 7;
  fresh.sort_cycles_max[2] = 20000;
  fresh.ctrl_time_refusals = 3;
  const std::vector<MegakernelStatLine> a = megakernel_stat_lines(fresh, MegakernelRates{}, 0);

  MegakernelStats busy = fresh;
  busy.slices = 40;
  busy.order_score = 0.875;
  busy.recorded = 5000;
  busy.stopped_by_host = true;
  busy.empty_executions = 2;
  busy.table_passes = 9000;
  busy.aged_claims = 31;
  busy.yields = 5;
  MegakernelRates r;
  r.valid = true;
  r.window_ms = 250.0;
  r.tasks_per_second = 3.25e6;
  r.sort_passes_per_second[0] = 1500.0;
  r.lock_collisions_per_second = 12.0;
  r.time_refusals_per_second = 40.0;
  r.restarts_per_second = 8.0;
  r.wait_share = 0.00125;
  const std::vector<MegakernelStatLine> b = megakernel_stat_lines(busy, r, 1755000);

  const std::vector<std::string> rows = {"grid",        "workers",      "queue",       "tasks/s",   "sort u-u/s",
                                         "sort u-s/s",  "sort s-s/s",   "collisions/s", "worker wait", "refused/s",
                                         "restarts/s",  "rank passes",  "S(n)",        "slices",    "empty exec."};
  EXPECT_EQ(labels_of(a), rows);
  EXPECT_EQ(labels_of(b), rows);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].help, b[i].help) << a[i].label;
    EXPECT_FALSE(a[i].help.empty()) << a[i].label;
  }

  // Before the first window: the last slice's tasks/s, rates "-" (greyed), wait in cycles, no score.
  EXPECT_EQ(line(a, "grid").value, "264 x 128 (2/SM)");
  EXPECT_NE(line(a, "grid").detail.find("72 registers"), std::string::npos);
  EXPECT_EQ(line(a, "workers").value, "1052 warps, 1 ctrl");
  EXPECT_EQ(line(a, "queue").value, "1200 (ring 4096)");
  EXPECT_EQ(line(a, "tasks/s").value, "2.5 M");
  EXPECT_EQ(line(a, "sort s-s/s").value, "-");
  EXPECT_TRUE(line(a, "sort s-s/s").dim);
  EXPECT_EQ(line(a, "sort s-s/s").detail.find(" us"), std::string::npos) << "no clock: cycles only";
  EXPECT_NE(line(a, "sort s-s/s").detail.find("7 passes, longest 20000 cycles"), std::string::npos);
  EXPECT_EQ(line(a, "refused/s").value, "-");
  EXPECT_NE(line(a, "refused/s").detail.find("3 since"), std::string::npos);
  EXPECT_EQ(line(a, "worker wait").value, "0 cycles");
  EXPECT_EQ(line(a, "S(n)").value, "-");
  EXPECT_TRUE(line(a, "S(n)").dim);
  EXPECT_NE(line(a, "S(n)").detail.find("record order"), std::string::npos);
  EXPECT_EQ(line(a, "slices").value, "1");
  EXPECT_EQ(line(a, "empty exec.").value, "0");
  EXPECT_EQ(line(a, "rank passes").value, "0");
  EXPECT_TRUE(line(a, "rank passes").dim) << "no histogram pass yet (or queue kerbl)";
  EXPECT_EQ(line(b, "rank passes").value, "9000");
  EXPECT_NE(line(b, "rank passes").detail.find("31 aged claims"), std::string::npos);
  EXPECT_NE(line(b, "rank passes").detail.find("5 yields"), std::string::npos);
  EXPECT_FALSE(line(a, "empty exec.").alert);

  // With a window of rates and the GPU clock.
  EXPECT_EQ(line(b, "tasks/s").value, "3.25 M");
  EXPECT_EQ(line(b, "sort u-u/s").value, "1.5 k");
  EXPECT_FALSE(line(b, "sort u-u/s").dim);
  EXPECT_NE(line(b, "sort s-s/s").detail.find("= 11.4 us"), std::string::npos) << line(b, "sort s-s/s").detail;
  EXPECT_EQ(line(b, "collisions/s").value, "12");
  EXPECT_EQ(line(b, "worker wait").value, "0.125 %");
  EXPECT_EQ(line(b, "refused/s").value, "40");
  EXPECT_EQ(line(b, "restarts/s").value, "8");
  EXPECT_EQ(line(b, "S(n)").value, "0.8750");
  EXPECT_NE(line(b, "S(n)").detail.find("5000 dequeues"), std::string::npos);
  EXPECT_EQ(line(b, "slices").value, "40, host stop");
  EXPECT_EQ(line(b, "empty exec.").value, "2");
  EXPECT_TRUE(line(b, "empty exec.").alert);
}

}  // namespace
}  // namespace mv
