// The smoke script (`--smoke-at FRAME:ACTION[=VALUE],...`): scripted panel changes for tests and demos, run
// at the start of their frame exactly as the panel (or F12, or the mouse) would make them. One table,
// smoke_rules(), says which actions exist, what their value must look like (checked when the option is
// parsed) and what each does; the viewer runs each action through its handler of the same name
// (app/gui/viewer.cpp, Viewer::run_smoke_action). The knobs of the megakernel and of the strand strategies
// are actions too, by their names (FRAME:segment-size=64, FRAME:task-quantum=8), drawn from their tables
// (base/params.h), so a new knob is scriptable without an edit here.
//
// In strand mode a smoke test's frame count stands still while a strand run is queued or in flight, so the
// steps after one happen after that run finished and was shown; each finished run logs
// "strands: <workload> <strategy> <grid> <ms> ms, steps mu … sigma … cv …". The viewer logs each step; for
// priority and strategy it logs the paths on the film before and after, so a test can see that the switch
// kept the film.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app/session/strand_view_params.h"

namespace mv {

/// One scripted step, run at the start of frame `frame`.
struct SmokeAction {
  int frame = 0;       ///< 1-based frame number, ≥ 1
  std::string action;  ///< a rule's name or a knob's name
  std::string value;   ///< the value; empty for actions without one
};

/// What an action's value must look like.
enum class SmokeForm {
  None,         ///< no value (capture, strand-view-reset)
  Text,         ///< any non-empty text; checked when the step runs (a bad one goes to the error window)
  OnOff,        ///< on or off
  ImageOrHeat,  ///< image or heat
  Unit,         ///< a number in [0, 1]
  Size,         ///< WxH, each ≥ 1
  Triple,       ///< three colon-separated numbers
};

/// The placeholder of a form's value in the help where the form fixes it ("on|off", "WxH", …; "" for None);
/// "" for Text and Triple, whose rules name their own.
const char* smoke_form_placeholder(SmokeForm form);

struct SmokeRule {
  std::string name;   ///< the action
  SmokeForm form;
  std::string value;  ///< the value's placeholder in the help ("P", "on|off", "WxH", …)
  std::string what;   ///< the panel change it makes
  /// A rule whose form fixes the placeholder (smoke_form_placeholder).
  SmokeRule(std::string name_, SmokeForm form_, std::string what_)
      : name(std::move(name_)), form(form_), value(smoke_form_placeholder(form_)), what(std::move(what_)) {}
  /// A Text or Triple rule with its own placeholder ("S", "AZ:EL:DIST").
  SmokeRule(std::string name_, SmokeForm form_, std::string value_, std::string what_)
      : name(std::move(name_)), form(form_), value(std::move(value_)), what(std::move(what_)) {}
};

/// Every action with a fixed name, in help order (the knobs are not listed: see the file comment).
const std::vector<SmokeRule>& smoke_rules();

/// Whether `action` is a knob of the megakernel or of the strand strategies (value form Text).
bool is_smoke_knob(const std::string& action);

/// "FRAME:priority=P, FRAME:strategy=S, …": every form, for --help and the parse error.
std::string smoke_forms_text();

/// The view that `value` of strand-orbit (AZ:EL:DIST) or strand-pan (CX:CY:HALF) makes of `v`: three finite
/// numbers, else InputError("--smoke-at", action, "<field> must be a finite number, got "<text>"") naming the
/// first bad field. Their ranges are StrandViewParams::validate()'s, checked when the run starts (a view
/// out of range goes to the error panel, as one from the panel would).
StrandViewParams smoke_view(const std::string& action, const std::string& value, StrandViewParams v);

/// Parses "FRAME:ACTION[=VALUE]". Throws InputError("--smoke-at", text, …) naming the allowed forms. Names
/// of priorities, strategies and workloads and the knobs' values are checked when the step runs.
SmokeAction parse_smoke_action(const std::string& text);

}  // namespace mv
