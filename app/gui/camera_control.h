// Mouse camera control of the viewer: orbit around the look-at point, pan, dolly.
#pragma once

#include "render/pathtracer/scene.h"

namespace mv::gui {

/// One frame of pointer input over the image (screen units, y down), already filtered: the caller drops
/// input that ImGui wants (io.WantCaptureMouse).
struct PointerInput {
  float dx = 0.f, dy = 0.f;  ///< cursor motion this frame
  float wheel = 0.f;         ///< wheel steps this frame; positive = towards the scene (dolly in)
  bool orbit = false;        ///< left drag
  bool pan = false;          ///< right drag, or shift + left drag (takes precedence over orbit)
  float view_height = 1.f;   ///< height of the displayed image, same units as dx/dy (> 0)
};

/// Applies `in` to `cam`. Orbit: a drag over the image's full height turns the camera by 180° around
/// `look_at` (horizontal about `up`, vertical towards or away from `up`, stopping 1° short of the poles).
/// Pan: moves camera and look-at together so the point under the cursor follows it at the look-at
/// distance. Wheel: each step multiplies the distance to look_at by 0.85 (in) or 1/0.85 (out).
/// Returns true if the camera changed.
bool apply_pointer(Camera& cam, const PointerInput& in);

}  // namespace mv::gui
