#include "app/gui/gui.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "app/gui/viewer.h"
#include "app/gui/window.h"

namespace mv {

int run_gui(const GuiOptions& options) {
  try {
    auto session = std::make_unique<Session>(options.session);
    gui::Window window(options.window_width, options.window_height, "megaview");
    gui::Viewer viewer(window, std::move(session), options);
    return viewer.run();
  } catch (const gui::WindowError& e) {
    std::fprintf(stderr, "megaview: %s; use `megaview render` for headless rendering\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "megaview: %s\n", e.what());
  }
  return 1;
}

}  // namespace mv
