// `megaview strands` (app/cli/cli_strands.h).
#include "app/cli/cli_strands.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/cli/progress.h"
#include "app/session/image_io.h"
#include "app/session/output_file.h"
#include "app/session/strand_view.h"
#include "app/session/strand_workloads.h"
#include "base/errors.h"
#include "sched/strand_stats.h"

namespace mv {

namespace {

void parse_size(const std::string& s, uint32_t& w, uint32_t& h) {
  unsigned a = 0, b = 0;
  char x = 0, extra = 0;
  if (std::sscanf(s.c_str(), "%u%c%u%c", &a, &x, &b, &extra) != 3 || x != 'x' || a < 1 || b < 1 || a > 16384 ||
      b > 16384)
    throw InputError("", "--size", "'" + s + "' is not WxH with width and height in [1, 16384]");
  w = a;
  h = b;
}

/// "volume=ch2, smooth=0, …": the workload's knobs as this run has them (defaults, then the given ones).
std::string knobs_text(const StrandWorkloadEntry& e, const ParamValues& given) {
  const ParamValues all = e.knob_values(given);
  std::string t;
  for (const ParamSpec& k : e.knobs) t += (t.empty() ? "" : ", ") + k.name + "=" + all.at(k.name);
  return t;
}

}  // namespace

void run_strands(const StrandsCommand& c) {
  const StrandWorkloadEntry& e = find_strand_workload(c.workload);
  e.check_knobs(c.knobs);
  c.view.validate();
  if (c.out.empty()) throw InputError("", "--out", "give the output PNG");
  cli::check_output_file(c.out, "--out");
  sibling_path(c.out, "--out", ".png", ".png");  // the file is a PNG: its name must say so
  uint32_t width = e.default_width, height = e.default_height;
  if (!c.size.empty()) parse_size(c.size, width, height);
  e.check_size_multiple(width, height, "--size");
  cli::check_host_memory(strand_bytes_estimate(uint64_t{width} * height), "--size",
                         fmt::format("{}x{} strands", width, height));

  const StrategyInfo& cpu = e.strategy("cpu-parallel");
  StrandRunSettings settings;
  Progress progress("strands", 1.0, "");  // the fraction done (the strategy's units: sched/strand_strategy.h)
  settings.on_progress = [&](uint64_t done, uint64_t total) {
    progress.update(total ? static_cast<double>(done) / static_cast<double>(total) : 0.0);
  };
  const StrandResult r = e.run(cpu.name, width, height, settings, true, c.view, c.knobs);
  progress.finish();

  const auto [shown_w, shown_h] = strand_shown_size(r, false);
  const std::vector<uint32_t> rgba = strand_image_rgba8(r);
  write_new_file(c.out, [&](const std::string& tmp) {
    write_png(tmp, rgba.data(), static_cast<int>(shown_w), static_cast<int>(shown_h));
  });

  const StepStatistics s = step_statistics(r.steps);
  std::printf("workload %s, %ux%u = %llu strands: %s\n", e.name.c_str(), width, height,
              static_cast<unsigned long long>(s.count), e.description.c_str());
  if (!e.knobs.empty()) std::printf("knobs: %s\n", knobs_text(e, c.knobs).c_str());
  if (e.view_kind != StrandViewKind::Fixed) std::printf("view: %s\n", strand_view_text(e.view_kind, c.view).c_str());
  std::printf("CPU (%s, %s): %.1f ms, %llu updates\n", cpu.name.c_str(), cpu.section.c_str(), r.timing.ms,
              static_cast<unsigned long long>(s.total));
  std::printf("steps per strand (Lehmann 2023 Fig 3.2): mu %.3f  sigma %.3f  CV %.3f  min %u  max %u\n", s.mean, s.sigma,
              s.cv, s.min, s.max);
  if (e.paper_steps.mean > 0)
    std::printf("paper (its own data and view): mu %.3f  sigma %.3f  CV %.3f\n", e.paper_steps.mean,
                e.paper_steps.sigma, e.paper_steps.cv);
  std::printf("wrote %s (%ux%u)\n", c.out.c_str(), shown_w, shown_h);
}

}  // namespace mv
