// Strand workload registry: one line per workload; the strategies come from make_strand_registry<W>.
#include "app/core/strand_workloads.h"
#include "sched/strand_registry.cuh"

namespace mv {

namespace {

template <class W, class Make>
StrandWorkloadEntry make_entry(std::string name, std::string description, uint32_t width, uint32_t height,
                               uint32_t max_side, const StrandStrategyRegistry<W>& registry, Make make_workload) {
  StrandWorkloadEntry e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.default_width = width;
  e.default_height = height;
  e.max_side = max_side;
  for (const auto& s : registry.entries()) e.strategies.push_back(s.info);
  e.run = [&registry, make_workload, max_side](std::string_view strategy, uint32_t w, uint32_t h,
                                                const StrandRunSettings& settings, bool image) {
    if (w < 1 || h < 1 || w > max_side || h > max_side)
      throw InputError("", "--size",
                       std::to_string(w) + "x" + std::to_string(h) + " is out of range: width and height in [1, " +
                           std::to_string(max_side) + "]");
    const W workload = make_workload(w, h);
    auto s = registry.find(strategy).make();
    StrandRun<W> run = s->run(workload, settings);
    if (image) return finish_strand_run(workload, std::move(run), w, h);
    StrandResult r;
    r.width = w;
    r.height = h;
    r.status = std::move(run.status);
    r.steps = std::move(run.steps);
    r.timing = std::move(run.timing);
    return r;
  };
  return e;
}

}  // namespace

MandelbrotStrands mandelbrot_workload(uint32_t width, uint32_t height) {
  MandelbrotParams p;
  p.width = width;
  p.height = height;
  return MandelbrotStrands{p};
}

const StrandStrategyRegistry<MandelbrotStrands>& mandelbrot_strand_strategies() {
  static const StrandStrategyRegistry<MandelbrotStrands> r = make_strand_registry<MandelbrotStrands>();
  return r;
}

const std::vector<StrandWorkloadEntry>& strand_workloads() {
  static const std::vector<StrandWorkloadEntry> entries = [] {
    std::vector<StrandWorkloadEntry> v;
    v.push_back(make_entry("mandelbrot", "escape-time fractal, one strand per pixel, cap 1900 (Lehmann 2023 A.3)",
                           2000, 2000, 16384, mandelbrot_strand_strategies(), mandelbrot_workload));
    return v;
  }();
  return entries;
}

const StrandWorkloadEntry& find_strand_workload(std::string_view name) {
  std::string names;
  for (const StrandWorkloadEntry& e : strand_workloads()) {
    if (e.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.name;
  }
  throw InputError("", "--workload", "unknown strand workload \"" + std::string(name) + "\" (allowed: " + names + ")");
}

const StrandStrategyInfo& StrandWorkloadEntry::strategy(std::string_view n) const {
  std::string names;
  for (const StrandStrategyInfo& i : strategies) {
    if (i.name == n) return i;
    names += (names.empty() ? "" : ", ") + i.name;
  }
  throw InputError("", "--strategy", "unknown strand strategy \"" + std::string(n) + "\" (allowed: " + names + ")");
}

}  // namespace mv
