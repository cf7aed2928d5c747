// Screenshots with their numbers: what a user captured is never overwritten or lost.
//
// One capture writes four files sharing a fresh stem "<scene>-<strategy>-<priority>-<NNNN>" in `dir`:
// the displayed image (.png, tone-mapped exactly as shown, heat overlay included if on), the linear film
// as EXR (per-pixel mean radiance, float32), the heat map of samples per patch (-heat.png), and a JSON
// sidecar (.json) with the scene, strategy, priority, spp statistics, elapsed ms, MSE, GPU name, all
// settings and the seed; with the megakernel active also its settings and statistics ("megakernel":
// {"settings", "stats"}, app/core/megakernel_report.h). A stem is claimed atomically (O_CREAT|O_EXCL on the sidecar), so two captures,
// even from two processes, never share a number.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "app/core/session.h"

namespace mv {

struct CaptureResult {
  std::string png, exr, heat_png, json;  ///< paths written
};

/// The settings and statistics of a session as JSON (the sidecar's body; also used by CLI outputs).
nlohmann::json session_report(Session& s, const ToneMapSettings& tm);

/// Writes a capture into `dir` (created if missing). `extra` is merged into the sidecar.
/// Throws InputError if the directory or a file cannot be written.
CaptureResult capture(Session& s, const ToneMapSettings& tm, const std::string& dir,
                      const nlohmann::json& extra = nlohmann::json::object());

}  // namespace mv
