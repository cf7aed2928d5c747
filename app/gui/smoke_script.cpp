#include "app/gui/smoke_script.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/gui/gui.h"
#include "app/session/lattice_run.h"
#include "app/session/strand_workloads.h"
#include "app/session/session.h"
#include "base/errors.h"
#include "sched/strand_strategy.h"

namespace mv {

const char* smoke_form_placeholder(SmokeForm form) {
  switch (form) {
    case SmokeForm::OnOff: return "on|off";
    case SmokeForm::ImageOrHeat: return "image|heat";
    case SmokeForm::Unit: return "F";
    case SmokeForm::Size: return "WxH";
    case SmokeForm::None:
    case SmokeForm::Text:
    case SmokeForm::Triple: break;
  }
  return "";
}

const std::vector<SmokeRule>& smoke_rules() {
  using F = SmokeForm;
  static const std::vector<SmokeRule> rules = {
      {"priority", F::Text, "P", "the Scheduling panel's priority (the left side's in split view)"},
      {"strategy", F::Text, "S", "the Scheduling panel's strategy (the left side's in split view)"},
      {"capture", F::None, "the Screenshot button / F12"},
      {"split", F::OnOff, "the Split view checkbox (on restarts the left film)"},
      {"split-strategy", F::Text, "S", "the Split view's right strategy"},
      {"divider", F::Unit, "the divider slider, F in [0, 1]"},
      {"split-priority", F::Text, "P", "the Split view's right priority"},
      {"workload", F::Text, "W|progressive", "the workload picker"},
      {"strand-strategy", F::Text, "S", "the Strands section's strategy (restarts the run)"},
      {"grid", F::Text, "auto|n:b[:c]", "the Strands section's grid (':' since --smoke-at splits at commas)"},
      {"strand-size", F::Size, "the Strands section's size (applied after a workload switch of the same frame)"},
      {"strand-view", F::ImageOrHeat, "the image / steps heat map toggle"},
      {"strand-orbit", F::Triple, "AZ:EL:DIST", "a volume's orbit: azimuth and elevation in degrees, distance"},
      {"strand-pan", F::Triple, "CX:CY:HALF", "the mandelbrot's centre and half-height"},
      {"strand-view-reset", F::None, "the Strands section's Reset view"},
      {"lattice-strategy", F::Text, "S", "the Lattice section's kernel (the chain or field goes on)"},
      {"lattice-view", F::Text, "V", "the Lattice section's view (sample, mean, lambda; field)"},
      {"lattice-pause", F::OnOff, "the Lattice section's Pause checkbox"},
      {"lattice-restart", F::None, "the Lattice section's Restart button"},
  };
  return rules;
}

bool is_smoke_knob(const std::string& action) {
  return find_param(patch_strategy_knobs(), action) != nullptr || strand_params_have(action) ||
         lattice_knob_exists(action) || find_param(strand_workload_knobs(), action) != nullptr;
}

std::string smoke_forms_text() {
  std::string t;
  for (const SmokeRule& r : smoke_rules())
    t += (t.empty() ? "" : ", ") + ("FRAME:" + r.name + (r.value.empty() ? "" : "=" + r.value));
  return t + ", FRAME:KNOB=VALUE (a megakernel, strand strategy, strand workload or lattice workload setting, e.g. segment-size=64, task-quantum=8, smooth=1)";
}

namespace {

bool number(const std::string& t, double& v) {
  try {
    size_t used = 0;
    v = std::stod(t, &used);
    return used == t.size();
  } catch (const std::logic_error&) {
    return false;
  }
}

/// Whether `value` has the form `f`; `why` receives what it should be.
bool has_form(SmokeForm f, const std::string& value, const std::string& action, std::string& why) {
  double v = 0.0;
  switch (f) {
    case SmokeForm::None: why = action + " takes no value"; return value.empty();
    case SmokeForm::Text: why = action + " needs a value"; return !value.empty();
    case SmokeForm::OnOff: why = action + " must be on or off"; return value == "on" || value == "off";
    case SmokeForm::ImageOrHeat: why = action + " must be image or heat"; return value == "image" || value == "heat";
    case SmokeForm::Unit: why = action + " must be a number in [0, 1]"; return number(value, v) && v >= 0.0 && v <= 1.0;
    case SmokeForm::Size:
      why = action + " needs WxH (strands across and down, each >= 1)";
      try {
        parse_strand_size(value, "--smoke-at");  // the form only; the workload's limits are checked at the run
        return true;
      } catch (const InputError&) {
        return false;
      }
    case SmokeForm::Triple:
      try {
        smoke_view(action, value, StrandViewParams{});
        return true;
      } catch (const InputError& e) {
        why = e.what();
        return false;
      }
  }
  return false;
}

}  // namespace

StrandViewParams smoke_view(const std::string& action, const std::string& value, StrandViewParams v) {
  const bool is_orbit = action == "strand-orbit";
  static const char* const orbit[3] = {"azimuth", "elevation", "distance"};
  static const char* const pan[3] = {"centre x", "centre y", "half-height"};
  double x[3] = {0.0, 0.0, 0.0};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? value.find(':', start) : value.size();
    if (end == std::string::npos || (i == 2 && value.find(':', start) != std::string::npos))
      throw InputError("--smoke-at", action,
                       std::string("needs three colon-separated numbers ") + (is_orbit ? "AZ:EL:DIST" : "CX:CY:HALF") +
                           ", got \"" + value + "\"");
    const std::string t = value.substr(start, end - start);
    if (!number(t, x[i]) || !std::isfinite(x[i]))
      throw InputError("--smoke-at", action,
                       std::string((is_orbit ? orbit : pan)[i]) + " must be a finite number, got \"" + t + "\"");
    start = end + 1;
  }
  if (is_orbit) {
    v.azimuth_deg = static_cast<float>(x[0]);
    v.elevation_deg = static_cast<float>(x[1]);
    v.distance = static_cast<float>(x[2]);
  } else {
    v.center_x = x[0];
    v.center_y = x[1];
    v.half_height = x[2];
  }
  return v;
}

SmokeAction parse_smoke_action(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return InputError("--smoke-at", text, why + "; expected " + smoke_forms_text() + ", with FRAME >= 1");
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
  SmokeForm form = SmokeForm::Text;
  bool known = is_smoke_knob(a.action);
  for (const SmokeRule& r : smoke_rules())
    if (r.name == a.action) {
      form = r.form;
      known = true;
    }
  if (!known) throw bad("unknown action \"" + rest + "\"");
  std::string why;
  if (!has_form(form, a.value, a.action, why) || (form == SmokeForm::None && eq != std::string::npos)) {
    if (form == SmokeForm::Triple) throw InputError("--smoke-at", text, why.substr(std::string("--smoke-at: ").size()));
    throw bad(why);
  }
  return a;
}

}  // namespace mv
