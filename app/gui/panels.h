// The viewer's Dear ImGui panels: the "Render" control window, the status bar and the error window.
// Panels read the Session and queue every change as a SessionCommand (app/gui/gui_state.h).
#pragma once

#include "app/session/session.h"
#include "app/gui/display.h"
#include "app/gui/gui_state.h"

namespace mv::gui {

/// The "Render" window with collapsible sections: Scene, Scheduling, Tone mapping, Progress, Megakernel
/// (while a side runs it: a column per side in split view), Split view, MSE and Capture. `right`: the split view's right session,
/// or null. The window is docked to the left border, as tall as the space above the status bar (its
/// contents scroll); its width is the user's, within [20 font sizes, 60 % of the screen]. Returns where the
/// image area may begin horizontally (screen units): the window's right edge while it is expanded, else 0.
float draw_control_window(const Session& session, const Session* right, GuiState& state, const Display& display);
/// The status bar along the bottom border: display path, GPU, strategy, progress, fps, display cost, and
/// in split view (`right` non-null) a second line with both sides. Returns its height (screen units).
float draw_status_bar(const Session& session, const Session* right, const GuiState& state, const DisplayStats& display);
/// The red "Error" window, shown while state.error is set, centred over the image area that starts at
/// `image_left` (screen units); its Dismiss button clears it.
void draw_error_window(GuiState& state, float image_left);

}  // namespace mv::gui
