// The sections of the "Render" control window (app/gui/panels.h), one function each.
#pragma once

#include "app/core/session.h"
#include "app/gui/display.h"
#include "app/gui/gui_state.h"

namespace mv::gui {

// panels_settings.cpp
void scene_section(const Session& session, GuiState& state);
void scheduling_section(const Session& session, GuiState& state);
void tonemap_section(GuiState& state, const Display& display);

// panels_progress.cpp
void progress_section(const Session& session, const GuiState& state, const DisplayStats& display);
/// The megakernel's statistics (Kerbl 2012), only while it is the active strategy.
void megakernel_section(const Session& session, const GuiState& state);
void mse_section(const Session& session, const GuiState& state);
void capture_section(GuiState& state);

/// A greyed "(?)" on the same line whose tooltip is `text`.
void help_marker(const char* text);

}  // namespace mv::gui
