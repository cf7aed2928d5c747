// Figures of the headless experiments. Each experiment writes its CSV and, beside it, a small JSON of
// metadata (<stem>.json: command line, subcommand, GPU, date, the unit of every column, the paper's
// figure it redoes, and the `kind` that tools/figures.py dispatches on). The figures themselves are drawn
// from the CSV by tools/figures.py with matplotlib, as PNG and PDF; draw_figures runs it when python3
// with matplotlib is installed and otherwise prints how to draw them later.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace mv {

struct FigureMetadata {
  /// What tools/figures.py draws: "mse-curve", "sort-bench", "sched-bench", "sched-model",
  /// "strand-sweep", "strand-bench", "stencil-bench", "gibbs-blocks" or "bench" (no figure).
  std::string kind;
  std::string subcommand;  ///< e.g. "mse-curve", "bench --sweep"
  std::string redoes;      ///< the paper's figure it redoes, e.g. "Kerbl 2012, Fig 9"; empty: none
  std::string context;     ///< one line for the figure's subtitle: scene, settings
  std::string gpu;         ///< the GPU the experiment ran on; empty: none (the CPU)
  std::vector<std::pair<std::string, std::string>> units;  ///< CSV column → unit ("1": a plain number)
};

/// The CSV's path without .csv: where its metadata and figures go.
std::string figure_stem(const std::string& csv_path);

/// figure_stem(csv_path) + ".json"
std::string figure_metadata_path(const std::string& csv_path);

/// The figure files tools/figures.py writes for a CSV of `kind` with output stem `stem` (the CSV's path
/// without .csv unless the command names another): stem.{png,pdf}, for mse-curve stem-time.{png,pdf}
/// and stem-samples.{png,pdf}; none for kinds without a figure.
std::vector<std::string> figure_files(const std::string& kind, const std::string& stem);

/// The metadata object: kind, subcommand, command_line (this process's, from /proc/self/cmdline), gpu
/// (null without one), date (UTC, ISO 8601), megaview version, csv (its file name), redoes, context,
/// units.
nlohmann::json figure_metadata_json(const FigureMetadata& m, const std::string& csv_path);

/// Writes figure_metadata_path(csv_path), never over an existing file (InputError naming it). Written
/// after the CSV: units are kept for the columns of the CSV's header only.
void write_figure_metadata(const std::string& csv_path, const FigureMetadata& m);

/// tools/figures.py: $MV_FIGURES_SCRIPT when set and not empty, else the source tree's (MV_SOURCE_DIR).
std::string figures_script_path();

/// The first python3 on PATH (then /usr/bin/python3) that imports matplotlib, or empty; `any_python`
/// (optional) says whether there was a python3 at all.
std::string find_python_with_matplotlib(bool* any_python = nullptr);

/// The shell line that draws the figures of `csv_path` by hand (shown when they cannot be drawn now).
std::string figures_command(const std::string& csv_path, const std::string& out_stem = "");

/// Runs `python3 tools/figures.py --no-overwrite [--out out_stem] csv_path`, its output going to ours.
/// Returns true when the figures were drawn. When the script, python3 or matplotlib is missing, prints
/// one line on stdout saying how to draw them; when the script fails, one warning line on stderr. Never
/// throws: a figure is never worth a failed experiment.
bool draw_figures(const std::string& csv_path, const std::string& out_stem = "");

}  // namespace mv
