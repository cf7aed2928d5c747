// The sections of the "Render" control window (app/gui/panels.h), one function each.
#pragma once

#include <imgui.h>

#include "app/session/session.h"
#include "app/gui/display.h"
#include "app/gui/gui_state.h"
#include "app/session/strategy_catalogue.h"

namespace mv::gui {

// panels_settings.cpp
/// The one strategy picker of every mode: a combo `label` over the whole strategy catalogue
/// (app/session/strategy_catalogue.h), `current` selected. A strategy that cannot run `kind`, or needs a
/// GPU while `gpu` is false (`no_gpu_reason` says why), is greyed out and its tooltip says why; the others'
/// tooltips give their description and section. For WorkloadKind::Lattice, `lattice` names the workload on
/// screen (another workload's kernels are greyed out) and `available` (when given) lists what its run can
/// switch to, replacing the GPU test (a run without a GPU has its CPU reference only). Returns the picked
/// name, or "" when nothing changed.
std::string strategy_picker(const char* label, const std::string& current, WorkloadKind kind, bool gpu,
                            const std::string& no_gpu_reason, const std::string& lattice = "",
                            const std::vector<std::string>* available = nullptr);
void scene_section(const Session& session, GuiState& state);
/// The Scheduling section: the left (or only) session's strategy and priority; wave size, block size
/// and the knobs of the strategies on screen, which in split view (`right` non-null) apply to both sides
/// (app/session/split.h; the section says so).
void scheduling_section(const Session& session, const Session* right, GuiState& state);
void tonemap_section(GuiState& state, const Display& display);
/// A side's strategy or priority combo (Target::Left or Target::Right): every change is queued for that
/// side only; `label` is the combo's label (unique in its ID scope).
void strategy_combo(const Session& session, GuiState& state, Target target, const char* label);
void priority_combo(const Session& session, GuiState& state, Target target, const char* label);
/// The knobs of `session`'s strategy (base/params.h) as a tree node titled `title`, nothing when it has
/// none; every change is queued for `target` through Session::set_knob (the Scheduling section passes
/// Target::Both).
void strategy_knobs(const Session& session, GuiState& state, Target target, const std::string& title);

// panels_split.cpp
/// The Split view section: on/off, the right side's strategy and priority (its other
/// settings are the left side's: Scheduling), the divider, and per side spp, samples/s and MSE (whole
/// film and the shown columns). `right` is the right session while split view is on, else null.
void split_section(const Session& left, const Session* right, GuiState& state);

// panels_strands.cpp
/// The workload combo at the top of the control window: kPathTracerMode or a strand workload; a choice
/// sets state.strands.mode_request (applied by the frame loop).
void workload_picker(GuiState& state);
/// The Strands section (strand mode): strategy (GPU ones greyed out without a GPU), grid, permute seed,
/// prefetch, size, Run and auto-run, the latest run's timing beside the previous one, step statistics,
/// the image / step heat-map toggle and the last run per strategy.
void strands_section(GuiState& state);
/// Lattice mode: the run's kernel, its knobs (generated from its Params; a model parameter restarts the
/// chain, a grid configuration keeps it), the view, pause / restart, the frame's budget and the run's report
/// (rates, and a histogram where the report has one).
void lattice_section(GuiState& state);

// panels_progress.cpp
void progress_section(const Session& session, const GuiState& state, const DisplayStats& display);
/// The megakernel's statistics (Kerbl 2012) of every side that runs it (megakernel_panel_sides,
/// app/session/split.h): one column per side in split view, where a side running another strategy says so;
/// hidden while no side runs the megakernel.
void megakernel_section(const Session& session, const Session* right, const GuiState& state);
/// The MSE and its plot; in split view both sides' curves (`right` non-null).
void mse_section(const Session& session, const Session* right, const GuiState& state);
void capture_section(GuiState& state);

/// A greyed "(?)" on the same line whose tooltip is `text`.
void help_marker(const char* text);
/// The last item's tooltip `text`, shown also while the item is disabled.
void tip(const char* text);
/// A greyed note (printf-style `fmt`), wrapped at the window's width so that no part of it is cut off.
void hint(const char* fmt, ...) IM_FMTARGS(1);

}  // namespace mv::gui
