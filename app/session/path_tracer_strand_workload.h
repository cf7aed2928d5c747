// The `path-tracer` strand workload built by name for the strand bench, the viewer's strand mode and the
// tests: the default scene `room` is loaded once per process and shared, with its device copy uploaded the
// first time a GPU strategy asks for it (as app/session/volume_strand_workloads.h shares ch2). For
// app/session/strand_workloads.cu's registry (one line, the strategy's side from StrategyInfo::side).
#pragma once

#include <cstdint>
#include <string>

#include "app/session/strand_view_params.h"
#include "base/common.h"
#include "render/pathtracer/scene.h"
#include "render/strands/path_tracer_strands.h"

namespace mv {

/// The scene the path-tracer strands render (resolve_scene_path: $MEGAVIEW_SCENES/room.json or scenes/).
inline constexpr const char* kPathTracerStrandScene = "room";

/// Scene `name` (resolve_scene_path) as loaded once per process: the host copy. The first call per name
/// loads it (load_scene; InputError for a missing or bad file). Never freed, so the reference stays valid.
/// Thread-safe.
const Scene& shared_scene(const std::string& name);
/// View of shared_scene(name) at width × height (host_view_at) on `side`: host pointers, or device pointers
/// of a DeviceScene uploaded on the first Side::Device call per name (CudaError without a GPU) and kept
/// until the process ends. Thread-safe.
SceneView shared_scene_view(const std::string& name, int width, int height, Side side);

/// path-tracer on `room` at width × height (multiples of 4 in [4, 4096]) with PathTracerStrandParams'
/// defaults (2 paths per pixel per update, 32 spp, seed 0), over the scene on `side`. The view is not read
/// (StrandViewKind::Fixed: the scene file's camera). Throws InputError("", "--size", …) for a bad size and
/// what shared_scene_view throws.
PathTracerStrands path_tracer_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view = {});

}  // namespace mv
