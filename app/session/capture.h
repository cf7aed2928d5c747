// Screenshots with their numbers: what a user captured is never overwritten or lost.
//
// One capture writes four files sharing a fresh stem "<scene>-<strategy>-<priority>-<NNNN>" in `dir`:
// the displayed image (.png, tone-mapped exactly as shown, heat overlay included if on), the linear film
// as EXR (per-pixel mean radiance, float32), the heat map of samples per patch (-heat.png), and a JSON
// sidecar (.json) with the scene, strategy, priority, spp statistics, elapsed ms, MSE, GPU name, all
// settings, the strategy's knobs ("knobs", generated from its table, base/params.h) and the seed; with the
// megakernel active also its statistics ("megakernel": {"stats"}, app/session/megakernel_report.h). A stem is claimed atomically (O_CREAT|O_EXCL on the sidecar), so two captures,
// even from two processes, never share a number.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/session/session.h"

namespace mv {

struct CaptureResult {
  std::string png, exr, heat_png, json;  ///< paths written
};

/// The fields every capture sidecar starts with, in every mode (the film, strands, lattice workloads): one
/// schema. {"megaview_version", "timestamp" (ISO 8601, UTC), "workload" ("progressive" for the path
/// tracer's film, else the --workload name), "strategy", "knobs" (`knobs`: the strategy's or the run's knobs
/// by name, base/params.h), "device": {"runs_on": "gpu" | "cpu" (`runs_on_gpu`), "gpu": its name when
/// `gpu_in_use` (a CPU strategy may run beside a GPU the run uses)}}. Each mode adds its own fields
/// beside these.
nlohmann::json sidecar_header(const std::string& workload, const std::string& strategy, nlohmann::json knobs,
                              bool runs_on_gpu, bool gpu_in_use);

/// Claims a fresh stem `dir`/`base`NNNN (NNNN = 0001, 0002, ...: O_CREAT|O_EXCL on "<stem>.json", then
/// none of "<stem><suffix>" may exist; `dir` is created if missing), calls `write_files(stem, written)`
/// (which writes the other files with write_new_file and lists them in `written`), then writes
/// `sidecar(stem)` into the claimed JSON. On failure removes what it wrote and the claim, and rethrows.
/// Returns the stem. Every capture (path tracer, split view, strands) names its files through this.
std::string claim_and_write(const std::string& dir, const std::string& base, const std::vector<std::string>& suffixes,
                            const std::function<void(const std::string&, std::vector<std::string>&)>& write_files,
                            const std::function<nlohmann::json(const std::string&)>& sidecar);

/// One RGBA8 image (width × height, as write_png takes it) and its sidecar, through claim_and_write:
/// writes "<stem>.png" and "<stem>.json" holding `sidecar` with `capture` = {"png": the PNG's file name}
/// plus `capture_fields`, then `extra` merged. Returns the stem. The split view's composed image and
/// the strand mode's captures use it.
std::string capture_png(const std::string& dir, const std::string& base, const std::vector<uint32_t>& rgba, int width,
                        int height, nlohmann::json sidecar, const nlohmann::json& capture_fields,
                        const nlohmann::json& extra);

/// The settings and statistics of a session as JSON (the sidecar's body; also used by CLI outputs).
nlohmann::json session_report(Session& s, const ToneMapSettings& tm);

/// Writes a capture into `dir` (created if missing). `extra` is merged into the sidecar.
/// Throws InputError if the directory or a file cannot be written.
CaptureResult capture(Session& s, const ToneMapSettings& tm, const std::string& dir,
                      const nlohmann::json& extra = nlohmann::json::object());

/// The split view's divider colour in captures (RGBA8 as write_png takes it: R in the low byte), the
/// amber of shaders/display.frag.
inline constexpr uint32_t kSplitDividerRgba = 0xFF00C7FFu;

/// The split view as shown, at film resolution: columns [0, column) of `left`, the rest of `right` (both
/// width × height RGBA8), the divider drawn over column `column` when 0 < column < width.
/// Throws InputError if the sizes differ.
std::vector<uint32_t> compose_split(const std::vector<uint32_t>& left, const std::vector<uint32_t>& right, int width,
                                    int height, int column);

struct SplitCaptureResult {
  CaptureResult left, right;  ///< each side's four files, as capture() writes them
  std::string png, json;      ///< the composed image and the split sidecar
};

/// A capture of the split view (Kerbl 2012 Fig 8, live): each side's four files (capture(), its sidecar with a "split"
/// object: side, divider, the columns shown and their MSE), then "<scene>-split-<left strategy>-<left
/// priority>-vs-<right strategy>-<right priority>-NNNN" .png (the composed image as shown, divider at
/// split_column(divider, width)) and .json ({"split": {"divider", "column", "budget", "left", "right"}},
/// each side the full session report plus its files). Every stem is claimed as capture() does, so
/// nothing is overwritten. Throws InputError (sizes differ, files cannot be written); a side's files
/// already written stay (they are a complete capture of that side).
SplitCaptureResult capture_split(Session& left, Session& right, const ToneMapSettings& tm, float divider,
                                 const std::string& dir, const nlohmann::json& extra = nlohmann::json::object());

}  // namespace mv
