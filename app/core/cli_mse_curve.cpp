// `megaview mse-curve`: MSE against a reference over busy time and over samples spent, per
// strategy:priority series (Kerbl 2012, §6.3 and Fig 9).
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <set>

#include "app/core/cli.h"
#include "app/core/image_io.h"
#include "app/core/output_file.h"
#include "app/core/plot.h"

namespace mv {

namespace {

struct SeriesSpec {
  std::string label, strategy;
  PriorityFunction priority;
};

struct Record {
  double busy_ms;
  uint64_t paths;
  double spp_mean, mse;
};

/// "strategy[:priority]"; without a priority, uniform gets none and the others `fallback`.
SeriesSpec parse_entry(const std::string& entry, PriorityFunction fallback) {
  const size_t colon = entry.find(':');
  SeriesSpec s;
  s.strategy = entry.substr(0, colon);
  patch_strategies().find(s.strategy);  // throws naming the allowed strategies
  s.priority = colon != std::string::npos ? parse_priority(entry.substr(colon + 1).c_str())
               : s.strategy == "uniform"  ? PriorityFunction::None
                                          : fallback;
  s.label = s.strategy + ":" + priority_name(s.priority);
  return s;
}

/// A fresh session for one series, with a reference (or InputError saying how to get one).
std::unique_ptr<Session> make_session(const MseCurveCommand& c, const SeriesSpec& spec) {
  SessionOptions o = c.session;
  o.strategy = spec.strategy;
  o.task.priority = spec.priority;
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

/// Records (busy ms, paths, MSE) after each frame that passed the next multiple of the interval, and
/// at the end (duration reached or every patch finished).
std::vector<Record> run_series(Session& s, const MseCurveCommand& c) {
  const double pixels = static_cast<double>(s.width()) * s.height();
  std::vector<Record> records;
  double next_mark = c.interval_ms;
  for (;;) {
    const FrameStats fs = s.advance();
    const bool stop = fs.done || fs.total_busy_ms >= c.duration_ms || fs.step.paths == 0;
    if (fs.total_busy_ms >= next_mark || stop) {
      records.push_back({fs.total_busy_ms, fs.total_paths, static_cast<double>(fs.total_paths) / pixels, s.mse()});
      next_mark = (std::floor(fs.total_busy_ms / c.interval_ms) + 1.0) * c.interval_ms;
    }
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

}  // namespace

void run_mse_curve(const MseCurveCommand& c) {
  if (!(c.interval_ms > 0.0 && c.duration_ms >= c.interval_ms))
    throw InputError("", "--interval-ms", fmt::format("must be in (0, --duration-ms = {}]", c.duration_ms));
  std::vector<SeriesSpec> specs;
  std::set<std::string> seen;
  for (const std::string& e : c.compare) {
    specs.push_back(parse_entry(e, c.session.task.priority));
    if (!seen.insert(specs.back().label).second)
      throw InputError("", "--compare", "series \"" + specs.back().label + "\" is listed twice");
  }
  if (specs.empty()) throw InputError("", "--compare", "needs at least one strategy[:priority] entry");
  const std::string csv = c.out_prefix + ".csv", time_png = c.out_prefix + "-time.png",
                    samples_png = c.out_prefix + "-samples.png";
  for (const std::string& f : {csv, time_png, samples_png}) ensure_absent(f);

  // Untimed warm-up of each strategy (CUDA module loading, TBB's thread pool, caches).
  std::set<std::string> warmed;
  for (const SeriesSpec& spec : specs) {
    if (!warmed.insert(spec.strategy).second) continue;
    const auto warm = make_session(c, spec);
    for (int i = 0; i < 3; ++i) warm->advance();
  }

  std::vector<std::vector<Record>> results;
  std::string text = "series,strategy,priority,busy_ms,paths,spp_mean,mse\n";
  std::vector<PlotSeries> by_time, by_samples;
  std::string scene, reference;
  for (const SeriesSpec& spec : specs) {
    const auto s = make_session(c, spec);
    results.push_back(run_series(*s, c));
    scene = fmt::format("{} {}x{}", s->scene().name, s->width(), s->height());
    reference = s->reference_path();
    PlotSeries t{spec.label, {}, {}}, n{spec.label, {}, {}};
    for (const Record& r : results.back()) {
      text += fmt::format("{},{},{},{:.3f},{},{:.4f},{:.9e}\n", spec.label, spec.strategy, priority_name(spec.priority),
                          r.busy_ms, r.paths, r.spp_mean, r.mse);
      t.x.push_back(r.busy_ms), t.y.push_back(r.mse);
      n.x.push_back(r.spp_mean), n.y.push_back(r.mse);
    }
    by_time.push_back(std::move(t));
    by_samples.push_back(std::move(n));
  }

  PlotOptions po{scene + ": MSE against the reference", "busy time (ms)", "MSE (log scale)", 960, 600};
  const std::vector<uint32_t> time_img = render_log_plot(po, by_time);
  po.x_label = "samples per pixel (mean)";
  const std::vector<uint32_t> samples_img = render_log_plot(po, by_samples);
  write_new_text_file(csv, text);
  write_new_file(time_png, [&](const std::string& tmp) { write_png(tmp, time_img.data(), po.width, po.height); });
  write_new_file(samples_png, [&](const std::string& tmp) { write_png(tmp, samples_img.data(), po.width, po.height); });

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
  fmt::print("wrote {}, {}, {}\n", csv, time_png, samples_png);
}

}  // namespace mv
