#include "app/gui/gui.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "app/session/lattice_run.h"
#include "app/session/strand_workloads.h"
#include "render/gpu.h"
#include "app/gui/viewer.h"
#include "base/errors.h"
#include "app/gui/window.h"

namespace mv {

std::pair<uint32_t, uint32_t> parse_strand_size(const std::string& text, const std::string& option) {
  const size_t x = text.find('x');
  const auto number = [](const std::string& t, uint32_t& out) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    out = static_cast<uint32_t>(std::stoul(t));
    return out >= 1;
  };
  uint32_t w = 0, h = 0;
  if (x == std::string::npos || !number(text.substr(0, x), w) || !number(text.substr(x + 1), h))
    throw InputError("", option, "expected WxH (strands across and down, each >= 1, e.g. 460x360), got \"" + text + "\"");
  return {w, h};
}

void check_strand_options(const GuiOptions& o) {
  if (o.strand_workload.empty()) {
    if (!o.strand_strategy.empty()) throw InputError("", "--strand-strategy", "belongs to strand mode: give --workload too");
    if (!o.strand_grid.automatic) throw InputError("", "--grid", "belongs to strand mode: give --workload too");
    if (o.strand_width > 0) throw InputError("", "--strand-size", "belongs to strand mode: give --workload too");
    return;
  }
  if (find_lattice_workload(o.strand_workload)) {  // a lattice workload: its knobs are options of their own
    for (const auto& [given, option] : {std::pair{!o.strand_strategy.empty(), "--strand-strategy"},
                                        std::pair{!o.strand_grid.automatic, "--grid"},
                                        std::pair{o.strand_width > 0, "--strand-size"}})
      if (given)
        throw InputError("", option, "belongs to the strand workloads, not to the lattice workload " + o.strand_workload);
    return;
  }
  bool strand = false;
  for (const StrandWorkloadEntry& e : strand_workloads()) strand |= e.name == o.strand_workload;
  if (!strand) {
    const std::string lattice = lattice_workload_names();
    throw InputError("", "--workload",
                     "unknown workload \"" + o.strand_workload + "\" (allowed: " + strand_workload_names() +
                         (lattice.empty() ? "" : ", " + lattice) + ")");
  }
  const StrandWorkloadEntry& w = find_strand_workload(o.strand_workload);
  if (!o.strand_strategy.empty()) {
    const StrategyInfo* info = nullptr;
    for (const StrategyInfo& i : w.strategies)
      if (i.name == o.strand_strategy) info = &i;
    if (!info) {
      std::string names;
      for (const StrategyInfo& i : w.strategies) names += (names.empty() ? "" : ", ") + i.name;
      throw InputError("", "--strand-strategy",
                       "unknown strand strategy \"" + o.strand_strategy + "\" (allowed: " + names + ")");
    }
    if (info->needs_gpu() && (o.session.force_cpu || !gpu_available()))
      throw InputError("", "--strand-strategy",
                       info->name + " needs a CUDA GPU (" + (o.session.force_cpu ? "--cpu was given" : gpu_info().reason) +
                           "); the CPU ones are sequential and cpu-parallel");
  }
  if (o.strand_width > w.max_side || o.strand_height > w.max_side)
    throw InputError("", "--strand-size",
                     std::to_string(o.strand_width) + "x" + std::to_string(o.strand_height) +
                         " is out of range: width and height in [1, " + std::to_string(w.max_side) + "] for " + w.name);
  if (o.strand_width > 0) w.check_size_multiple(o.strand_width, o.strand_height, "--strand-size");
}

namespace {

/// The viewer's first session. A scene or reference file that cannot be used is not a reason to close
/// the window before it opens: the same options on the scene without --reference, then on the default
/// scene, and the error goes to the error panel (`startup_error`). Option errors (a GPU strategy without
/// a GPU, a film that does not fit) fail every fallback too and are rethrown as they were.
std::unique_ptr<Session> start_session(const SessionOptions& options, std::string& startup_error) {
  try {
    return std::make_unique<Session>(options);
  } catch (const InputError& e) {
    const std::string action = "Open scene " + options.scene + (options.reference.empty() ? "" : " with reference " + options.reference);
    std::vector<SessionOptions> fallbacks;
    if (!options.reference.empty()) {
      SessionOptions o = options;
      o.reference.clear();
      fallbacks.push_back(o);
    }
    SessionOptions o = options;
    o.reference.clear();
    o.scene = SessionOptions{}.scene;
    if (o.scene != options.scene) fallbacks.push_back(o);
    for (const SessionOptions& f : fallbacks) {
      try {
        auto session = std::make_unique<Session>(f);
        startup_error = action + ": " + e.what() + "; showing " + f.scene +
                        (f.scene == options.scene ? " without the reference" : " instead");
        spdlog::error("{}", startup_error);
        return session;
      } catch (const InputError&) {
      }
    }
    throw;
  }
}

}  // namespace

int run_gui(const GuiOptions& options) {
  try {
    std::string startup_error;
    auto session = start_session(options.session, startup_error);
    std::unique_ptr<Session> right;
    if (options.split) {
      try {
        right = gui::make_right_session(*session, options.split_spec.strategy,
                                        options.split_spec.priority.empty()
                                            ? default_right_priority(session->options().task.priority)
                                            : parse_priority(options.split_spec.priority.c_str()));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "megaview: --split: %s\n", e.what());
        return 1;
      }
    }
    gui::Window window(options.window_width, options.window_height, "megaview");
    gui::Viewer viewer(window, std::move(session), options, std::move(right));
    if (!startup_error.empty()) viewer.show_error(startup_error);
    return viewer.run();
  } catch (const gui::WindowError& e) {
    std::fprintf(stderr, "megaview: %s; use `megaview render` for headless rendering\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "megaview: %s\n", e.what());
  }
  return 1;
}

}  // namespace mv
