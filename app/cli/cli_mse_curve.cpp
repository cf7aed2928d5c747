// `megaview mse-curve`: MSE against a reference over busy time and over samples spent, per
// strategy:priority series (Kerbl 2012, §6.3 and Fig 9).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>

#include "app/cli/cli.h"
#include "app/session/image_io.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/figures.h"
#include "render/gpu.h"
#include "render/pathtracer/allocation_bound.h"
#include "app/cli/progress.h"
#include "sched/megakernel/megakernel_probe.h"
#include "sched/megakernel/priority_table.h"

namespace mv {

namespace {

struct SeriesSpec {
  std::string label, strategy;
  PriorityFunction priority;
  ParamValues knobs;  ///< the strategy's knob overrides, name → value
};

/// The most records a series keeps (--duration-ms / --interval-ms), and the bytes one costs (the record
/// and its CSV line).
constexpr double kMaxCurvePoints = 1e6;
constexpr uint64_t kCurveBytesPerRecord = 160;
/// The most busy time one series may render: --duration-ms's bound, and with --from-scratch that of all of
/// its records together.
constexpr double kMaxSeriesBusyMs = 1e7;

struct Record {
  double busy_ms;
  uint64_t paths;
  double spp_mean, mse;
};

/// "strategy[:priority]"; without a priority, uniform gets none and the others `fallback`.
SeriesSpec parse_entry(const std::string& entry, PriorityFunction fallback) {
  const size_t colon = entry.find(':', entry.find(']') == std::string::npos ? 0 : entry.find(']'));
  SeriesSpec s;
  s.strategy = entry.substr(0, colon);
  std::string overrides;
  if (const size_t open = s.strategy.find('['); open != std::string::npos) {
    if (s.strategy.back() != ']')
      throw InputError("", "--compare", "\"" + entry + "\": settings go in brackets, e.g. megakernel[queue=kerbl]:variance");
    overrides = s.strategy.substr(open + 1, s.strategy.size() - open - 2);
    s.strategy = s.strategy.substr(0, open);
  }
  const std::vector<std::string> names = patch_strategies().names();
  if (std::find(names.begin(), names.end(), s.strategy) == names.end())
    throw InputError("", "--compare",
                     fmt::format("\"{}\": the strategy must be one of {}, got \"{}\"", entry, cli::list_text(names),
                                 s.strategy));
  if (!overrides.empty()) {  // name=value;… of this strategy's knobs (base/params.h), checked now
    const auto strategy = patch_strategies().find(s.strategy).make();  // constructing one touches no CUDA
    const Params* knobs = strategy->params();
    size_t at = 0;
    while (at <= overrides.size()) {
      const size_t end = std::min(overrides.find(';', at), overrides.size());
      const std::string item = overrides.substr(at, end - at);
      const size_t eq = item.find('=');
      const size_t i = knobs && eq != std::string::npos ? knobs->find(item.substr(0, eq)) : 0;
      if (!knobs || eq == std::string::npos || i >= knobs->specs().size())
        throw InputError("", "--compare", "\"" + entry + "\": \"" + item + "\" is not name=value of a knob of " + s.strategy);
      parse_param(knobs->specs()[i], item.substr(eq + 1));  // one line naming the knob and its range
      s.knobs[item.substr(0, eq)] = item.substr(eq + 1);
      at = end + 1;
    }
  }
  if (colon != std::string::npos) {
    const std::string p = entry.substr(colon + 1);
    try {
      s.priority = parse_priority(p.c_str());
    } catch (const InputError&) {
      std::vector<std::string> priorities;
      for (int i = 0; i < kNumPriorityFunctions; ++i) priorities.push_back(priority_name(static_cast<PriorityFunction>(i)));
      throw InputError("", "--compare",
                       fmt::format("\"{}\": the priority must be one of {}, got \"{}\"", entry,
                                   cli::list_text(priorities), p));
    }
  } else {
    s.priority = s.strategy == "uniform" ? PriorityFunction::None : fallback;
  }
  s.label = s.strategy + (overrides.empty() ? std::string() : "[" + overrides + "]") + ":" + priority_name(s.priority);
  return s;
}

/// A fresh session for one series, with a reference (or InputError saying how to get one).
std::unique_ptr<Session> make_session(const MseCurveCommand& c, const SeriesSpec& spec) {
  SessionOptions o = c.session;
  o.strategy = spec.strategy;
  o.task.priority = spec.priority;
  for (const auto& [name, value] : spec.knobs) o.knobs[name] = value;
  o.paths_per_frame = 0;
  o.frame_budget_ms = c.interval_ms / 4.0;
  auto s = std::make_unique<Session>(o);
  if (!s->has_reference())
    throw InputError("", "--reference",
                     fmt::format("mse-curve needs a reference image of {}x{}: pass --reference R.exr "
                                 "(make one with `megaview reference`)",
                                 s->width(), s->height()));
  return s;
}

/// Measurement (development): with MEGAVIEW_MSE_TRACE=PREFIX, at each record of every series, the patches
/// that hold the MSE and what the scheduler does with them. PREFIX-<series>-records.csv: per record, the
/// MSE, the share of the squared error in the top 16 / 64 / 256 patches, the megakernel's window (first
/// band) and how many of the top-64 patches have no waiting primary entry. PREFIX-<series>-top.csv: per
/// record, the 64 patches of largest squared error: their share, committed spp (film, mean over the
/// patch's pixels), reserved spp (patch_spp), priority, its band and rank among the tasks, where the
/// task's primary entry waits (ring, the band that ring stands for now, the entry's key) and its
/// secondary entries and tokens (sched/megakernel/megakernel_probe.h).
class SeriesTracer {
 public:
  SeriesTracer(const std::string& prefix, size_t series, Session& s) {
    const ImageRgb ref = read_exr(s.reference_path());
    ref_ = ref.rgb;
    records_ = fmt::format("{}-{}-records.csv", prefix, series);
    top_ = fmt::format("{}-{}-top.csv", prefix, series);
    rec_text_ = "record,busy_ms,spp_mean,mse,top16,top64,top256,cur_band,top64_no_primary,top64_far,top64_late\n";
    top_text_ = "record,busy_ms,task,share,film_spp,patch_spp,priority,band,prio_rank,ring,ring_band,entry_key,"
                "primaries,secondaries,extra\n";
  }
  ~SeriesTracer() {
    write_new_text_file(records_, rec_text_);
    write_new_text_file(top_, top_text_);
  }
  void record(Session& s, double busy_ms, double spp_mean) {
    PatchWorkload& w = s.workload();
    const FilmView f = w.film().host_view_synced();
    const std::vector<float> prio = w.host_priorities();
    const uint32_t n = f.grid.num_patches();
    std::vector<double> err(n, 0.0), fspp(n, 0.0);
    double total = 0.0;
    for (uint32_t p = 0; p < n; ++p) {
      int cnt = 0;
      for (int i = 0; i < kPatchPixels; ++i) {
        int x, y;
        if (!f.grid.pixel(p, i, x, y)) continue;
        const uint32_t idx = static_cast<uint32_t>(y * f.grid.width + x);
        const Vec3 m = f.mean(idx);
        const float* r = &ref_[3 * size_t(idx)];
        err[p] += double(m.x - r[0]) * (m.x - r[0]) + double(m.y - r[1]) * (m.y - r[1]) + double(m.z - r[2]) * (m.z - r[2]);
        fspp[p] += f.spp[idx];
        ++cnt;
      }
      fspp[p] /= cnt > 0 ? cnt : 1;
      total += err[p];
    }
    std::vector<uint32_t> order(n);
    for (uint32_t p = 0; p < n; ++p) order[p] = p;
    std::partial_sort(order.begin(), order.begin() + std::min<uint32_t>(256, n), order.end(),
                      [&](uint32_t a, uint32_t b) { return err[a] > err[b]; });
    std::vector<float> sorted_prio(prio);
    std::sort(sorted_prio.begin(), sorted_prio.end(), std::greater<float>());
    MegakernelQueueProbe q;
    bool have_q = false;
    if (const auto* src = dynamic_cast<const MegakernelProbeSource*>(s.megakernel())) have_q = src->probe_queue(q);
    const double pixels = static_cast<double>(s.width()) * s.height();
    double t16 = 0, t64 = 0, t256 = 0;
    int no_primary = 0, far = 0, late = 0;
    const uint32_t W = have_q ? q.rings - 2u : 1u;
    for (uint32_t j = 0; j < std::min<uint32_t>(256, n); ++j) {
      const uint32_t p = order[j];
      const double sh = total > 0 ? err[p] / total : 0.0;
      if (j < 16) t16 += sh;
      if (j < 64) t64 += sh;
      t256 += sh;
      if (j >= 64) continue;
      const uint32_t band = priority_band(prio[p]);
      const size_t rank = static_cast<size_t>(std::lower_bound(sorted_prio.begin(), sorted_prio.end(), prio[p],
                                                               std::greater<float>()) - sorted_prio.begin());
      long long ring = -1, ring_band = -1;
      float key = 0.f;
      uint32_t prim = 0, sec = 0, extra = 0;
      if (have_q) {
        prim = q.primary_entries[p];
        sec = q.secondary_entries[p];
        extra = q.lane_extra[p];
        key = q.primary_key[p];
        if (q.primary_ring[p] != MegakernelQueueProbe::kNoRing) {
          ring = q.primary_ring[p];
          if (ring == 0) ring_band = -2;  // urgent
          else if (ring == q.rings - 1) { ring_band = -3; ++far; }  // far
          else if (q.cur_band != kNoBand) {
            const uint32_t o = q.cur_band % W, r = static_cast<uint32_t>(ring) - 1u;
            ring_band = q.cur_band + (r + W - o) % W;
            if (ring_band > static_cast<long long>(priority_band(key))) ++late;
          }
        } else if (prio[p] != kFinishedPriority) {
          ++no_primary;
        }
      }
      top_text_ += fmt::format("{},{:.3f},{},{:.5f},{:.2f},{},{:.4e},{},{},{},{},{:.4e},{},{},{}\n", rec_, busy_ms, p,
                               sh, fspp[p], f.patch_spp[p], prio[p], band, rank, ring, ring_band, key, prim, sec,
                               extra);
    }
    rec_text_ += fmt::format("{},{:.3f},{:.3f},{:.6e},{:.4f},{:.4f},{:.4f},{},{},{},{}\n", rec_, busy_ms, spp_mean,
                             total / (3.0 * pixels), t16, t64, t256, have_q ? static_cast<long long>(q.cur_band) : -1LL,
                             no_primary, far, late);
    ++rec_;
  }

 private:
  std::vector<float> ref_;
  std::string records_, top_, rec_text_, top_text_;
  int rec_ = 0;
};

/// Records (busy ms, paths, MSE) after each frame that passed the next multiple of the interval, and
/// at the end (duration reached or every patch finished).
/// `progress` receives the series' busy time after every frame.
std::vector<Record> run_series(Session& s, const MseCurveCommand& c, const std::function<void(double)>& progress,
                               SeriesTracer* trace = nullptr) {
  const double pixels = static_cast<double>(s.width()) * s.height();
  std::vector<Record> records;
  double next_mark = c.interval_ms;
  for (;;) {
    const FrameStats fs = s.advance();
    const bool stop = fs.done || fs.total_busy_ms >= c.duration_ms || fs.step.work == 0;
    if (fs.total_busy_ms >= next_mark || stop) {
      records.push_back({fs.total_busy_ms, fs.total_paths, static_cast<double>(fs.total_paths) / pixels, s.mse()});
      if (trace) trace->record(s, fs.total_busy_ms, records.back().spp_mean);
      next_mark = (std::floor(fs.total_busy_ms / c.interval_ms) + 1.0) * c.interval_ms;
    }
    progress(fs.total_busy_ms);
    if (stop) return records;
  }
}

/// MSE of the first record at or after `t` ms (the last one if the series ended earlier).
double mse_at(const std::vector<Record>& r, double t) {
  for (const Record& x : r)
    if (x.busy_ms >= t) return x.mse;
  return r.back().mse;
}

std::string time_to_reach(const std::vector<Record>& r, double mse) {
  for (const Record& x : r)
    if (x.mse <= mse) return fmt::format("{:.1f}", x.busy_ms);
  return "not reached";
}

/// First record at which the series' MSE is at or below `mse`, interpolated linearly (in busy time and
/// in samples) between it and the record before; false if never.
bool reach(const std::vector<Record>& r, double mse, double& ms, double& spp) {
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].mse > mse) continue;
    if (i == 0 || r[i - 1].mse <= r[i].mse) {
      ms = r[i].busy_ms, spp = r[i].spp_mean;
      return true;
    }
    const double f = (r[i - 1].mse - mse) / (r[i - 1].mse - r[i].mse);
    ms = r[i - 1].busy_ms + f * (r[i].busy_ms - r[i - 1].busy_ms);
    spp = r[i - 1].spp_mean + f * (r[i].spp_mean - r[i - 1].spp_mean);
    return true;
  }
  return false;
}

/// The time-to-quality table: the goal is the baseline's MSE at goal_spp (interpolated between records).
void print_time_to_quality(const MseCurveCommand& c, const std::vector<SeriesSpec>& specs,
                           const std::vector<std::vector<Record>>& results, size_t base) {
  const std::vector<Record>& b = results[base];
  size_t i = 0;
  while (i < b.size() && b[i].spp_mean < c.goal_spp) ++i;
  if (i == b.size()) {
    fmt::print("time to quality: {} reached only {:.1f} spp of the goal's {:g} in {:g} ms; raise --duration-ms\n",
               specs[base].label, b.back().spp_mean, c.goal_spp, c.duration_ms);
    return;
  }
  double goal = b[i].mse;
  if (i > 0 && b[i].spp_mean > b[i - 1].spp_mean) {  // log-linear between the two records around goal_spp
    const double f = (c.goal_spp - b[i - 1].spp_mean) / (b[i].spp_mean - b[i - 1].spp_mean);
    goal = std::exp(std::log(b[i - 1].mse) + f * (std::log(b[i].mse) - std::log(b[i - 1].mse)));
  }
  double base_ms = 0, base_spp = 0;
  reach(b, goal, base_ms, base_spp);
  fmt::print("time to quality: goal MSE {:.4e} = {} at {:g} spp\n", goal, specs[base].label, c.goal_spp);
  fmt::print("{:<40} {:>10} {:>10} {:>10} {:>10} {:>12}\n", "series", "ms", "x time", "spp", "x samples", "Msamples/s");
  for (size_t k = 0; k < specs.size(); ++k) {
    const std::vector<Record>& r = results[k];
    const double rate = r.back().busy_ms > 0 ? static_cast<double>(r.back().paths) / r.back().busy_ms / 1e3 : 0.0;
    double ms = 0, spp = 0;
    if (!reach(r, goal, ms, spp)) {
      fmt::print("{:<40} {:>10} {:>10} {:>10} {:>10} {:>12.1f}\n", specs[k].label, "not reached", "-", "-", "-", rate);
      continue;
    }
    fmt::print("{:<40} {:>10.2f} {:>10.3f} {:>10.2f} {:>10.3f} {:>12.1f}\n", specs[k].label, ms, ms / base_ms, spp,
               spp / base_spp, rate);
  }
}

/// --from-scratch: the records of a series, ⌊duration / interval⌋ (record k renders k intervals).
double from_scratch_records(const MseCurveCommand& c) { return std::floor(c.duration_ms / c.interval_ms + 1e-9); }

/// --from-scratch: record k is a fresh render (Session::reset) of one step whose budget is the work of about
/// k × interval_ms of busy time at the rate of the step before (the first from an unrecorded calibration step
/// of one batch of every task). A record keeps its step's measured busy time, so the records' times are
/// measured, not the targets. The series ends after duration_ms, or at the first record that finished every
/// patch.
std::vector<Record> run_series_from_scratch(Session& s, const MseCurveCommand& c,
                                            const std::function<void(double)>& progress, SeriesTracer* trace) {
  const double pixels = static_cast<double>(s.width()) * s.height();
  const uint64_t per_task = s.workload().work_per_task();
  const auto rate_of = [](const FrameStats& fs) {
    return fs.total_busy_ms > 0.0 ? static_cast<double>(fs.total_paths) / fs.total_busy_ms : 0.0;
  };
  s.reset();
  double rate = rate_of(s.advance(static_cast<uint64_t>(s.workload().num_tasks()) * per_task));  // paths per ms
  std::vector<Record> records;
  const auto records_max = static_cast<uint64_t>(from_scratch_records(c));
  double rendered_ms = 0.0;  // the records' targets so far: what `progress` counts
  for (uint64_t k = 1; k <= records_max; ++k) {
    const double target_ms = static_cast<double>(k) * c.interval_ms;
    s.reset();
    const auto budget = static_cast<uint64_t>(rate * target_ms);
    const FrameStats fs = s.advance(std::max(per_task, budget));
    records.push_back({fs.total_busy_ms, fs.total_paths, static_cast<double>(fs.total_paths) / pixels, s.mse()});
    if (trace) trace->record(s, fs.total_busy_ms, records.back().spp_mean);
    rendered_ms += target_ms;
    progress(rendered_ms);
    if (fs.done || fs.step.work == 0) break;
    if (const double r = rate_of(fs); r > 0.0) rate = r;
  }
  return records;
}

}  // namespace

void run_mse_curve(const MseCurveCommand& c) {
  if (!(std::isfinite(c.duration_ms) && c.duration_ms > 0.0 && c.duration_ms <= kMaxSeriesBusyMs))
    throw InputError("", "--duration-ms", fmt::format("must be a finite number in (0, 1e7] ms, got \"{}\"", c.duration_ms));
  if (!c.interval_given && c.duration_ms < c.interval_ms)  // the user gave a short duration, not the interval
    throw InputError("", "--duration-ms",
                     fmt::format("must be at least --interval-ms, the busy time between records ({:g} ms by default), "
                                 "got \"{}\"; give a longer --duration-ms or a shorter --interval-ms",
                                 c.interval_ms, c.duration_ms));
  if (!(c.interval_ms > 0.0 && c.duration_ms >= c.interval_ms))
    throw InputError("", "--interval-ms", fmt::format("must be in (0, --duration-ms = {}] ms, got \"{}\"", c.duration_ms, c.interval_ms));
  // One record (and one MSE over the whole film) per interval: bound their number and memory up front.
  const double points = std::ceil(c.duration_ms / c.interval_ms) + 1.0;
  if (points > kMaxCurvePoints)
    throw InputError("", "--interval-ms",
                     fmt::format("--duration-ms {:g} / --interval-ms {:g} is {:.3g} records per series, more than {:g}; "
                                 "give --interval-ms of at least {:g} ms",
                                 c.duration_ms, c.interval_ms, points, kMaxCurvePoints, c.duration_ms / (kMaxCurvePoints - 1)));
  // Busy time per series: the duration, or with --from-scratch the sum of its records' k × interval,
  // K (K + 1) / 2 intervals for K records.
  const double records_max = from_scratch_records(c);
  const double series_ms =
      c.from_scratch ? c.interval_ms * records_max * (records_max + 1.0) / 2.0 : c.duration_ms;
  if (series_ms > kMaxSeriesBusyMs)
    throw InputError("", "--interval-ms",
                     fmt::format("with --from-scratch, --duration-ms {:g} / --interval-ms {:g} renders {:.3g} ms "
                                 "of busy time per series, more than {:g}; give a longer --interval-ms",
                                 c.duration_ms, c.interval_ms, series_ms, kMaxSeriesBusyMs));
  cli::check_host_memory(static_cast<uint64_t>(points) * c.compare.size() * kCurveBytesPerRecord, "--interval-ms",
                         fmt::format("{:g} records per series", points));
  std::vector<SeriesSpec> specs;
  std::set<std::string> seen;
  for (const std::string& e : c.compare) {
    specs.push_back(parse_entry(e, c.session.task.priority));
    if (!seen.insert(specs.back().label).second)
      throw InputError("", "--compare", "series \"" + specs.back().label + "\" is listed twice");
  }
  if (specs.empty()) throw InputError("", "--compare", "needs at least one strategy[:priority] entry");
  cli::check_output_prefix(c.out_prefix, "--out-prefix", {".csv"});
  const std::string csv = c.out_prefix + ".csv";
  for (const std::string& f : figure_files("mse-curve", c.out_prefix)) ensure_absent(f);
  ensure_absent(figure_metadata_path(csv));
  check_film_memory(c.session);

  // Untimed warm-up of each strategy (CUDA module loading, TBB's thread pool, caches).
  std::set<std::string> warmed;
  for (const SeriesSpec& spec : specs) {
    if (!warmed.insert(spec.strategy).second) continue;
    const auto warm = make_session(c, spec);
    for (int i = 0; i < 3; ++i) warm->advance();
  }

  std::vector<std::vector<Record>> results;
  std::string text = "series,strategy,priority,busy_ms,paths,spp_mean,mse\n";
  std::string scene, reference;
  Progress progress("mse-curve", series_ms * static_cast<double>(specs.size()), "ms busy");
  for (const SeriesSpec& spec : specs) {
    const auto s = make_session(c, spec);
    const double before = series_ms * static_cast<double>(results.size());
    std::unique_ptr<SeriesTracer> trace;
    if (const char* prefix = std::getenv("MEGAVIEW_MSE_TRACE"); prefix && *prefix)
      trace = std::make_unique<SeriesTracer>(prefix, results.size(), *s);
    const auto report = [&](double busy_ms) { progress.update(before + busy_ms); };
    results.push_back(c.from_scratch ? run_series_from_scratch(*s, c, report, trace.get())
                                     : run_series(*s, c, report, trace.get()));
    trace.reset();
    // Measurement (development): with MEGAVIEW_MSE_PATCHES=PREFIX, each series' final film per patch (spp,
    // V_p and m_p of render/pathtracer/allocation_bound.h) goes to PREFIX-<series index>.csv.
    if (const char* prefix = std::getenv("MEGAVIEW_MSE_PATCHES"); prefix && *prefix) {
      const FilmView f = s->workload().film().host_view_synced();
      const std::vector<PatchVariance> pv = patch_variances(f);
      std::string rows = "task,spp,variance,pixels\n";
      for (size_t p = 0; p < pv.size(); ++p)
        rows += fmt::format("{},{},{:.6e},{}\n", p, f.patch_spp[p], pv[p].v, pv[p].pixels);
      write_new_text_file(fmt::format("{}-{}.csv", prefix, results.size() - 1), rows);
    }
    scene = fmt::format("{} {}x{}", s->scene().name, s->width(), s->height());
    reference = s->reference_path();
    for (const Record& r : results.back()) {
      text += fmt::format("{},{},{},{:.3f},{},{:.4f},{:.9e}\n", spec.label, spec.strategy, priority_name(spec.priority),
                          r.busy_ms, r.paths, r.spp_mean, r.mse);
    }
  }

  progress.finish();
  write_new_text_file(csv, text);
  write_figure_metadata(csv, {"mse-curve", "mse-curve", "Kerbl 2012, Fig 9",
                              fmt::format("{}, against {}", scene, reference),
                              !c.session.force_cpu && gpu_available() ? gpu_info().name : std::string(),
                              {{"series", "strategy:priority"}, {"strategy", "name"}, {"priority", "name"},
                               {"busy_ms", "ms"}, {"paths", "paths"}, {"spp_mean", "samples per pixel"},
                               {"mse", "squared linear RGB"}}});

  // Summary: MSE at 25/50/100 % of the duration, and the time to reach the baseline's final MSE.
  size_t base = 0;
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].strategy == "uniform") base = i;
  const double base_final = results[base].back().mse;
  const double D = c.duration_ms;
  fmt::print("{}: MSE against {} over busy time (strategy steps only), {:g} ms per series\n", scene, reference, D);
  fmt::print("{:<28} {:>12} {:>12} {:>12} {:>10}  {}\n", "series", fmt::format("@{:g} ms", D / 4),
             fmt::format("@{:g} ms", D / 2), fmt::format("@{:g} ms", D), "final spp",
             fmt::format("ms to {:.3e} ({} final)", base_final, specs[base].label));
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::vector<Record>& r = results[i];
    fmt::print("{:<28} {:>12.4e} {:>12.4e} {:>12.4e} {:>10.2f}  {}\n", specs[i].label, mse_at(r, D / 4),
               mse_at(r, D / 2), mse_at(r, D), r.back().spp_mean, time_to_reach(r, base_final));
  }
  if (c.goal_spp > 0.0) print_time_to_quality(c, specs, results, base);
  fmt::print("wrote {}, {}\n", csv, figure_metadata_path(csv));
  draw_figures(csv);
}

}  // namespace mv
