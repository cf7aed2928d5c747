#include "app/gui/gui.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "app/core/megakernel_report.h"
#include "app/core/strand_workloads.h"
#include "render/gpu.h"
#include "app/gui/viewer.h"
#include "base/errors.h"
#include "app/gui/window.h"

namespace mv {

SmokeAction parse_smoke_action(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return InputError("--smoke-at", text,
                      why + "; expected FRAME:priority=P, FRAME:strategy=S, FRAME:capture, FRAME:split=on|off, "
                             "FRAME:split-strategy=S, FRAME:split-priority=P, FRAME:divider=F (0..1), "
                             "FRAME:workload=W|progressive, FRAME:strand-strategy=S, FRAME:grid=G, FRAME:strand-size=WxH, "
                             "FRAME:task-quantum=Q, FRAME:task-priority=P, FRAME:strand-view=image|heat, "
                             "FRAME:strand-orbit=AZ:EL:DIST, FRAME:strand-pan=CX:CY:HALF, FRAME:strand-view-reset or "
                             "FRAME:SETTING=VALUE (a megakernel setting such as segment-size=64) with FRAME ≥ 1");
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) throw bad("no frame number");
  SmokeAction a;
  try {
    size_t used = 0;
    a.frame = std::stoi(text.substr(0, colon), &used);
    if (used != colon) throw bad("frame is not a number");
  } catch (const std::logic_error&) {
    throw bad("frame is not a number");
  }
  if (a.frame < 1) throw bad("frame out of range");
  const std::string rest = text.substr(colon + 1);
  const size_t eq = rest.find('=');
  a.action = rest.substr(0, eq);
  if (eq != std::string::npos) a.value = rest.substr(eq + 1);
  if (a.action == "capture" && eq == std::string::npos) return a;
  if (a.action == "split" && (a.value == "on" || a.value == "off")) return a;
  if (a.action == "divider") {
    try {
      size_t used = 0;
      const float d = std::stof(a.value, &used);
      if (used == a.value.size() && d >= 0.f && d <= 1.f) return a;
    } catch (const std::logic_error&) {
    }
    throw bad("divider must be a number in [0, 1]");
  }
  if ((a.action == "workload" || a.action == "strand-strategy" || a.action == "grid" ||
       strand_params_have(a.action)) &&
      !a.value.empty())
    return a;
  if (a.action == "strand-size") {
    try {
      parse_strand_size(a.value, "--smoke-at");  // the form only; the workload's limits are checked at the run
      return a;
    } catch (const InputError&) {
      throw bad("strand-size needs WxH (strands across and down, each >= 1)");
    }
  }
  if (a.action == "strand-view" && (a.value == "image" || a.value == "heat")) return a;
  if (a.action == "strand-view-reset" && eq == std::string::npos) return a;
  if (a.action == "strand-orbit" || a.action == "strand-pan") {
    // Three colon-separated numbers; their ranges are checked when the run starts (StrandViewParams::validate).
    int count = 0;
    size_t start = 0;
    bool ok = !a.value.empty();
    while (ok && start <= a.value.size()) {
      const size_t end = std::min(a.value.find(':', start), a.value.size());
      const std::string t = a.value.substr(start, end - start);
      try {
        size_t used = 0;
        std::stod(t, &used);
        ok = used == t.size();
      } catch (const std::logic_error&) {
        ok = false;
      }
      ++count;
      start = end + 1;
    }
    if (ok && count == 3) return a;
    throw bad(a.action == "strand-orbit" ? "strand-orbit needs AZ:EL:DIST (degrees, degrees, world units)"
                                         : "strand-pan needs CX:CY:HALF (complex-plane centre and half-height)");
  }
  if ((a.action == "priority" || a.action == "strategy" || a.action == "split-strategy" ||
       a.action == "split-priority" || is_megakernel_setting_name(a.action)) &&
      !a.value.empty())
    return a;
  throw bad("unknown action \"" + rest + "\"");
}

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
  const StrandWorkloadEntry& w = find_strand_workload(o.strand_workload);  // InputError naming --workload
  if (!o.strand_strategy.empty()) {
    const StrandStrategyInfo* info = nullptr;
    for (const StrandStrategyInfo& i : w.strategies)
      if (i.name == o.strand_strategy) info = &i;
    if (!info) {
      std::string names;
      for (const StrandStrategyInfo& i : w.strategies) names += (names.empty() ? "" : ", ") + i.name;
      throw InputError("", "--strand-strategy",
                       "unknown strand strategy \"" + o.strand_strategy + "\" (allowed: " + names + ")");
    }
    if (info->needs_gpu && (o.session.force_cpu || !gpu_available()))
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
