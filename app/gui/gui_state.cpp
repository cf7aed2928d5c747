#include "app/gui/gui_state.h"

#include <spdlog/spdlog.h>

#include <new>

namespace mv::gui {

double mean_spp(const Session& s) {
  const double pixels = static_cast<double>(s.width()) * static_cast<double>(s.height());
  return pixels > 0 ? static_cast<double>(s.last().total_paths) / pixels : 0.0;
}

GuiState::GuiState(const Session& session) : file_camera(session.scene().camera) { on_film_reset(session); }

void GuiState::queue(std::string action, std::function<void(Session&)> run, bool resets_film) {
  commands.push_back({std::move(action), std::move(run), {}, resets_film, false, Target::Both});
}

void GuiState::queue_on(Target target, std::string action, std::function<void(Session&)> run) {
  commands.push_back({std::move(action), std::move(run), {}, false, false, target});
}

void GuiState::queue_rebuild(std::string action, std::function<void()> check, std::function<void(Session&)> run) {
  commands.push_back({std::move(action), std::move(run), std::move(check), true, true, Target::Both});
}

void GuiState::report(const std::string& action, const std::exception& e) {
  const char* kind = dynamic_cast<const CudaError*>(&e)       ? "CUDA error: "
                     : dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory: "
                                                                : "";
  error = action + ": " + kind + e.what();
  ++error_count;
  error_raise = true;
  spdlog::error("{}", error);
}

void GuiState::on_film_reset(const Session& session) {
  edit_width = static_cast<int>(session.width());
  edit_height = static_cast<int>(session.height());
  mse.clear();
  paths_per_second.clear();
  megakernel_rates.clear();
  split.megakernel_rates.clear();
  split.mse.clear();
  split.paths_per_second.clear();
  split.shown_mse_valid = false;
}

}  // namespace mv::gui
