#include "app/gui/gui.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "app/core/megakernel_report.h"
#include "app/gui/viewer.h"
#include "base/errors.h"
#include "app/gui/window.h"

namespace mv {

SmokeAction parse_smoke_action(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return InputError("--smoke-at", text,
                      why + "; expected FRAME:priority=P, FRAME:strategy=S, FRAME:capture, FRAME:split=on|off, "
                             "FRAME:split-strategy=S, FRAME:split-priority=P, FRAME:divider=F (0..1) or "
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
  if ((a.action == "priority" || a.action == "strategy" || a.action == "split-strategy" ||
       a.action == "split-priority" || is_megakernel_setting_name(a.action)) &&
      !a.value.empty())
    return a;
  throw bad("unknown action \"" + rest + "\"");
}

int run_gui(const GuiOptions& options) {
  try {
    auto session = std::make_unique<Session>(options.session);
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
    return viewer.run();
  } catch (const gui::WindowError& e) {
    std::fprintf(stderr, "megaview: %s; use `megaview render` for headless rendering\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "megaview: %s\n", e.what());
  }
  return 1;
}

}  // namespace mv
