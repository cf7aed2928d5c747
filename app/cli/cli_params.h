// Command-line options generated from a strategy's knobs (base/params.h): one option per knob, named
// --<name>, with the knob's doc as help and its range in the message of a refused value. Bool knobs get
// --<name> and --no-<name>. Header-only, for the translation unit that owns the CLI11 app (app/cli/main.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/params.h"

namespace mv {

/// Appends the options add_param_options makes for `spec` to `names`: --NAME, and --no-NAME for a Bool.
inline void append_param_option_names(const ParamSpec& spec, std::vector<std::string>& names) {
  names.push_back("--" + spec.name);
  if (spec.kind == ParamKind::Bool) names.push_back("--no-" + spec.name);
}

/// Adds one option per spec to `app`. `apply(name, text)` receives each given value after it was checked
/// (parse_param). `prefix` starts every help line ("megakernel").
inline void add_param_options(CLI::App& app, const std::vector<ParamSpec>& specs, const std::string& prefix,
                              const std::function<void(const std::string&, const std::string&)>& apply) {
  for (const ParamSpec& spec : specs) {
    const std::string help = prefix + ": " + spec.doc + (spec.source.empty() ? "" : " (" + spec.source + ")") +
                             (spec.when.empty() ? "" : " [read with " + spec.when + "]");
    if (spec.kind == ParamKind::Bool) {
      const std::string name = spec.name;
      app.add_flag_callback("--" + name, [apply, name] { apply(name, "true"); }, help);
      app.add_flag_callback("--no-" + name, [apply, name] { apply(name, "false"); }, prefix + ": turn " + name + " off");
      continue;
    }
    app.add_option_function<std::string>(
           "--" + spec.name, [apply, name = spec.name](const std::string& text) { apply(name, text); }, help)
        ->check(CLI::Validator(
            [spec](std::string& text) -> std::string {
              try {
                parse_param(spec, text);
              } catch (const InputError& e) {
                // CLI11 puts the option's name in front: keep parse_param's message after "--name: ".
                const std::string what = e.what(), prefix = "--" + spec.name + ": ";
                return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
              }
              return {};
            },
            param_allowed_text(spec)));
  }
}

}  // namespace mv
