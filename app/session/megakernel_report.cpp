#include "app/session/megakernel_report.h"

#include <cstdarg>
#include <cstdio>

#include "app/session/params_report.h"
#include "base/errors.h"
#include "base/params.h"
#include "sched/megakernel/bitonic.h"

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

}  // namespace

// The sidecar's "megakernel.stats" object: one key per MegakernelStats field, under the field's name
// (megakernel_stats_json then writes the per-method arrays as objects and an unrecorded score as null).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MegakernelStats, grid_blocks, controllers, blocks_per_sm, worker_warps, registers,
                                   capacity, queue_length, dequeues, tasks_per_second, stopped_by_host, order_score,
                                   recorded, slices, sort_passes, sort_cycles_max, lock_collisions, wait_cycles,
                                   ctrl_lock_failures, ctrl_time_refusals, ctrl_restarts, ctrl_not_full,
                                   empty_executions, yields, aged_claims, table_passes, lane_spawns)

nlohmann::json megakernel_stats_json(const MegakernelStats& s, int clock_khz) {
  nlohmann::json j = s;
  j["order_score"] = s.order_score >= 0.0 ? nlohmann::json(s.order_score) : nlohmann::json();
  j["sort_passes"] = per_method(s.sort_passes);
  j["sort_cycles_max"] = per_method(s.sort_cycles_max);
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

std::string si_text(double v) {
  const char* prefixes[] = {"", " k", " M", " G", " T"};
  int i = 0;
  while (v >= 1000.0 && i < 4) {
    v /= 1000.0;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, prefixes[i]);
  return buf;
}

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

std::vector<MegakernelStatLine> megakernel_stat_lines(const MegakernelStats& k, const MegakernelRates& r, int clock_khz) {
  std::vector<MegakernelStatLine> lines;
  const auto add = [&lines](std::string label, std::string value, std::string help, std::string detail = {},
                            bool dim = false, bool alert = false) {
    lines.push_back({std::move(label), std::move(value), std::move(help), std::move(detail), dim, alert});
  };
  const auto rate = [&r](double v) { return r.valid ? si_text(v) : std::string("-"); };
  const double khz = static_cast<double>(clock_khz);
  const uint32_t worker_blocks = k.grid_blocks > k.controllers ? k.grid_blocks - k.controllers : 0;
  const uint32_t threads = worker_blocks > 0 ? k.worker_warps / worker_blocks * 32 : 0;

  add("grid", format("%u x %u (%u/SM)", k.grid_blocks, threads, k.blocks_per_sm),
      "Kerbl 3.1: a persistent grid of co-resident blocks (blocks x threads, resident blocks per SM).",
      format("%u registers per thread", k.registers));
  add("workers", format("%u warps, %u ctrl", k.worker_warps, k.controllers),
      "Worker warps, and the controller blocks that sort the queue (Kerbl 4; P > 1 is beyond Kerbl).");
  add("queue", format("%llu (ring %u)", ull(k.queue_length), k.capacity),
      "Kerbl 3.2: unfinished patch tasks waiting after the last slice (ring capacity in brackets); each\n"
      "re-enqueues itself at the back with its new priority until it reaches the target (6.3).");
  add("tasks/s", si_text(r.valid ? r.tasks_per_second : k.tasks_per_second),
      "Task executions (dequeues) per second of kernel time.",
      r.valid ? format("over the last %.0f ms of kernel time", r.window_ms) : std::string("the last slice"));
  static const char* const kSortLabels[3] = {"sort u-u/s", "sort u-s/s", "sort s-s/s"};
  for (int m = 0; m < 3; ++m) {
    std::string detail = format("%llu passes, longest %llu cycles", ull(k.sort_passes[m]), ull(k.sort_cycles_max[m]));
    if (clock_khz > 0) detail += format(" = %.1f us", static_cast<double>(k.sort_cycles_max[m]) / (khz * 1e-3));
    add(kSortLabels[m], rate(r.sort_passes_per_second[m]),
        std::string("Kerbl 4.3: controller passes per second of kernel time merging two segments by the ") +
            sort_method_name(static_cast<SortMethod>(m)) +
            " method (u-u both unsorted, u-s one sorted, s-s both sorted).",
        detail + " (since the queue was built; longest: 5.3.2's time of a sort)", !r.valid);
  }
  add("collisions/s", rate(r.lock_collisions_per_second),
      "Kerbl 5.2: worker accesses that met a segment locked by a controller and had to wait.",
      format("%llu since the queue was built", ull(k.lock_collisions)), !r.valid);
  const bool share = r.valid && r.wait_share >= 0.0;
  add("worker wait", share ? format("%.3f %%", 100.0 * r.wait_share) : format("%llu cycles", ull(k.wait_cycles)),
      "Cycles worker warps spent waiting on locked segments, as a share of all worker-warp time over the\n"
      "last window of kernel time (cycles since the queue was built until the rates are known).",
      clock_khz > 0 ? format("since the queue was built: %.3f ms summed over warps (clock %d MHz)",
                             static_cast<double>(k.wait_cycles) / khz, clock_khz / 1000)
                    : format("since the queue was built: %llu cycles", ull(k.wait_cycles)));
  add("refused/s", rate(r.time_refusals_per_second),
      "Kerbl 5.2: pairs the controller did not lock because the buffer ahead was shorter than the sort.",
      format("%llu since the queue was built", ull(k.ctrl_time_refusals)), !r.valid);
  add("restarts/s", rate(r.restarts_per_second),
      "Kerbl Fig 2: controller walks restarted at the back of the queue.",
      format("%llu since the queue was built; %llu try-locks on busy segments, %llu pairs found not full",
             ull(k.ctrl_restarts), ull(k.ctrl_lock_failures), ull(k.ctrl_not_full)),
      !r.valid);
  add("rank passes", format("%llu", ull(k.table_passes)),
      "Queue design quanta: controller passes that turned the histogram of live priorities into the\n"
      "table priority -> quantum (sched/megakernel/priority_table.h), since the queue was built.",
      format("%llu aged claims (buckets: served from the fullest ring), %llu yields (quanta: visits with no batch)",
             ull(k.aged_claims), ull(k.yields)),
      k.table_passes == 0);
  if (k.order_score >= 0.0)
    add("S(n)", format("%.4f", k.order_score),
        "Kerbl 6.2: sort accuracy of the last slice's dequeue order; 1 = exact priority order.",
        format("over %llu dequeues", ull(k.recorded)));
  else
    add("S(n)", "-", "Kerbl 6.2: sort accuracy of the last slice's dequeue order; 1 = exact priority order.",
        "turn on \"record order\" (Scheduling)", true);
  add("slices", format("%llu%s", ull(k.slices), k.stopped_by_host ? ", host stop" : ""),
      "Slices (kernel launches) since the queue was built; \"host stop\": the last one was ended by the host.");
  add("empty exec.", format("%llu", ull(k.empty_executions)),
      "Dequeued tasks that were already finished: duplicated queue entries. Must stay 0.", {}, false,
      k.empty_executions > 0);
  return lines;
}

}  // namespace mv
