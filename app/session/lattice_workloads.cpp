// The lattice workloads' registry (one line per workload) and the capture of a lattice run.
#include "app/session/lattice_run.h"

#include "app/session/capture.h"
#include "app/session/gibbs_run.h"
#include "app/session/stencil_run.h"
#include "base/errors.h"

namespace mv {

const std::vector<LatticeWorkloadEntry>& lattice_workloads() {
  static const std::vector<LatticeWorkloadEntry> entries = [] {
    std::vector<LatticeWorkloadEntry> v;
    v.push_back({"gibbs", "the Poisson-Ising Gibbs sampler (poisson-ising-gibbs-cupy)",
                 [](const ParamValues& k, bool gpu) -> std::unique_ptr<LatticeRun> { return std::make_unique<GibbsRun>(k, gpu); },
                 gibbs_params().specs(), gibbs_strategies()});
    v.push_back({"stencil", "deep-halo Jacobi/Laplace stencil over P partitions on G GPUs (Valen 2023)",
                 [](const ParamValues& k, bool gpu) -> std::unique_ptr<LatticeRun> { return std::make_unique<StencilRun>(k, gpu); },
                 stencil_params().specs(), stencil_strategies()});
    return v;
  }();
  return entries;
}

const LatticeWorkloadEntry* find_lattice_workload(const std::string& name) {
  for (const LatticeWorkloadEntry& e : lattice_workloads())
    if (e.name == name) return &e;
  return nullptr;
}

std::string lattice_workload_names() {
  std::string names;
  for (const LatticeWorkloadEntry& e : lattice_workloads()) names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

bool lattice_knob_exists(const std::string& name) {
  for (const LatticeWorkloadEntry& e : lattice_workloads())
    if (find_param(e.knobs, name)) return true;
  return false;
}

std::string lattice_settings_text(LatticeRun& run) {
  std::string t = "strategy " + run.strategy() + ", step " + std::to_string(run.steps());
  for (const auto& [name, value] : run.params().values()) t += ", " + name + "=" + value;
  return t;
}

std::pair<std::string, std::string> capture_lattice(const LatticeRun& run, size_t view, const std::vector<uint32_t>& shown,
                                                    uint32_t width, uint32_t height, const std::string& dir,
                                                    const nlohmann::json& extra) {
  const std::vector<std::string> views = run.views();
  if (view >= views.size()) throw InputError("", "capture", "no such view of " + run.workload());
  if (width == 0 || height == 0 || shown.size() != static_cast<size_t>(width) * height)
    throw InputError("", "capture", "no " + run.workload() + " image to capture yet");
  const std::string base = run.workload() + "-" + run.strategy() + "-" + views[view] + "-";
  nlohmann::json report = run.report();
  const bool gpu = report["device"] == "gpu";
  nlohmann::json sidecar = sidecar_header(run.workload(), run.strategy(), report["knobs"], gpu, gpu);
  report.erase("device");  // the header's form of it
  sidecar.update(report);
  const std::string stem = capture_png(dir, base, shown, static_cast<int>(width), static_cast<int>(height),
                                       std::move(sidecar), {{"shown", views[view]}}, extra);
  return {stem + ".png", stem + ".json"};
}

}  // namespace mv
