// ImGui widgets generated from a strategy's knobs (base/params.h): the GUI draws any strategy's settings
// without knowing the strategy. Each knob gets the widget of its kind (checkbox, combo, slider or field),
// its doc and source as tooltip, and is greyed out while its `when` condition does not hold.
#pragma once

#include <string>

#include "base/params.h"

namespace mv::gui {

/// Draws knob i of `p`. Returns true when the user chose a new value; `text` then holds it in the knob's
/// text form (already allowed by the spec). Never writes to `p`: the caller queues the change.
bool param_widget(const Params& p, size_t i, std::string& text);

/// The folded node of advanced knobs (param_widgets); end_advanced_params() closes it when this returned true.
bool begin_advanced_params();
void end_advanced_params();

/// Draws every knob of `p` that `shown(spec)` accepts (advanced ones in a folded "more" node) and calls
/// `change(name, text)` for each one the user changed this frame.
template <class Change, class Shown>
void param_widgets(const Params& p, Change change, Shown shown) {
  bool advanced_open = false, advanced_seen = false;
  for (size_t i = 0; i < p.specs().size(); ++i) {
    if (!shown(p.specs()[i])) continue;
    if (p.specs()[i].advanced && !advanced_seen) {
      advanced_seen = true;
      advanced_open = begin_advanced_params();
    }
    if (p.specs()[i].advanced && !advanced_open) continue;
    std::string text;
    if (param_widget(p, i, text)) change(p.specs()[i].name, text);
  }
  if (advanced_open) end_advanced_params();
}

/// Every knob of `p`.
template <class Change>
void param_widgets(const Params& p, Change change) {
  param_widgets(p, change, [](const ParamSpec&) { return true; });
}

/// The knobs of `p` that `shown(spec)` accepts, for settings the GUI edits in place (nothing queued): a
/// changed value is applied to `p` at once and `applied()` is called. The widgets offer allowed values only.
template <class Applied, class Shown>
void edit_params(Params& p, Applied applied, Shown shown) {
  param_widgets(
      p,
      [&](const std::string& name, const std::string& text) {
        try {
          p.apply({{name, text}});
          applied();
        } catch (const InputError&) {
        }
      },
      shown);
}
template <class Applied>
void edit_params(Params& p, Applied applied) {
  edit_params(p, applied, [](const ParamSpec&) { return true; });
}

}  // namespace mv::gui
