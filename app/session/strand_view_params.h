// The view a strand workload renders (item 5: orbit/zoom for the volume renderers, pan/zoom for the
// mandelbrot, none for the path tracer's strands, which keep the scene's camera): what the viewer's mouse
// edits and StrandWorkloadEntry::run passes to the workload factories.
// The defaults are today's fixed views, so a run with StrandViewParams{} is bit for bit a run without it:
// the ch2 camera for the volumes and [−2.1, 1.1] × [−1.6, 1.6] for the mandelbrot (at a square size; see
// mandelbrot_region). Each workload reads only its own fields.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/params.h"
#include "render/strands/volume_ray.h"

namespace mv {

struct StrandViewParams;
const ParamTable<StrandViewParams>& strand_view_knobs();

struct StrandViewParams {
  // Volume workloads (vr-lite-cam, illust-vr): orbit_camera around the volume's centre, fov kCh2Fov.
  // The ranges are strand_view_knobs()'.
  float azimuth_deg = kCh2Azimuth;      ///< degrees (0: eye on +y, 90: on +x)
  float elevation_deg = kCh2Elevation;  ///< degrees above the x-y plane
  float distance = kCh2Distance;        ///< eye to volume centre, world units (mm)
  // Mandelbrot: the complex-plane region, square pixels (the real half-width is half_height·width/height).
  double center_x = -0.5, center_y = 0.0;  ///< centre of the image, complex plane
  double half_height = 1.6;                ///< half the imaginary extent

  bool operator==(const StrandViewParams& o) const {
    return azimuth_deg == o.azimuth_deg && elevation_deg == o.elevation_deg && distance == o.distance &&
           center_x == o.center_x && center_y == o.center_y && half_height == o.half_height;
  }
  bool operator!=(const StrandViewParams& o) const { return !(*this == o); }

  /// Throws InputError("view", "--<knob>", "must be <range>, got …") for the first field outside its range
  /// in strand_view_knobs().
  void validate() const;
};

/// The view's fields as knobs (base/params.h), each with its range and doc, described once: `megaview
/// strands`' view options (--azimuth … --half-height), validate() and so the viewer's checks of a scripted
/// or restored view come from this table. The smallest half-height, 1e-12, is where the wheel's zoom stops.
inline const ParamTable<StrandViewParams>& strand_view_knobs() {
  static const ParamTable<StrandViewParams> table = [] {
    using V = StrandViewParams;
    using K = ParamKind;
    ParamTable<V> t;
    t.add(make_param("azimuth", K::Real, -360, 360, "orbit: camera azimuth, degrees (0: eye on +y, 90: on +x)", ""),
          &V::azimuth_deg);
    t.add(make_param("elevation", K::Real, -89, 89, "orbit: camera elevation above the x-y plane, degrees", ""),
          &V::elevation_deg);
    t.add(make_param("distance", K::Real, 1e-3, 1e6,
                     "orbit: eye distance from the volume centre, world units (mm; the default frames ch2)", ""),
          &V::distance);
    t.add(make_param("center-x", K::Real, -1e3, 1e3, "plane: real part of the image centre", ""), &V::center_x);
    t.add(make_param("center-y", K::Real, -1e3, 1e3, "plane: imaginary part of the image centre", ""),
          &V::center_y);
    t.add(make_param("half-height", K::Real, 1e-12, 1e3, "plane: half the imaginary extent", ""),
          &V::half_height);
    return t;
  }();
  return table;
}

inline void StrandViewParams::validate() const { strand_view_knobs().check(*this, "view"); }

/// Which fields of StrandViewParams a workload reads, and so what the viewer's mouse does with it.
enum class StrandViewKind {
  Orbit,  ///< azimuth, elevation, distance (volume ray casters): drag orbits, the wheel dollies
  Plane,  ///< center_x, center_y, half_height (mandelbrot): drag pans, the wheel zooms around the cursor
  Fixed,  ///< no field (path-tracer: the scene file's camera): drag and wheel do nothing
};

/// The names of the knobs of strand_view_knobs() that a workload of `kind` reads (Fixed: none).
inline std::vector<std::string> strand_view_knob_names(StrandViewKind kind) {
  if (kind == StrandViewKind::Orbit) return {"azimuth", "elevation", "distance"};
  if (kind == StrandViewKind::Plane) return {"center-x", "center-y", "half-height"};
  return {};
}

/// The fields of `v` that a workload of `kind` reads, as one line (the Strands section, the log).
inline std::string strand_view_text(StrandViewKind kind, const StrandViewParams& v) {
  std::ostringstream s;
  s.precision(kind == StrandViewKind::Orbit ? 6 : 12);
  switch (kind) {
    case StrandViewKind::Orbit:
      s << "azimuth " << v.azimuth_deg << " deg, elevation " << v.elevation_deg << " deg, distance " << v.distance;
      break;
    case StrandViewKind::Plane:
      s << "centre (" << v.center_x << ", " << v.center_y << "), half-height " << v.half_height;
      break;
    case StrandViewKind::Fixed:
      s << "fixed (the scene's camera)";
      break;
  }
  return s.str();
}

/// Drag by (dx, dy) screen pixels (x right, y down) over an image shown `shown_height` pixels tall (> 0).
/// Orbit: a drag across the image height turns 180° (right: azimuth down, down: elevation up, clamped to
/// [−89, 89]). Plane: the centre moves with the cursor, so the point grabbed stays under it. Fixed: `v`.
inline StrandViewParams strand_view_drag(StrandViewKind kind, StrandViewParams v, float dx, float dy,
                                         float shown_height) {
  if (!(shown_height > 0.f) || kind == StrandViewKind::Fixed) return v;
  if (kind == StrandViewKind::Orbit) {
    const float deg_per_px = 180.f / shown_height;
    v.azimuth_deg = std::remainder(v.azimuth_deg - dx * deg_per_px, 360.f);
    v.elevation_deg = std::fmin(89.f, std::fmax(-89.f, v.elevation_deg + dy * deg_per_px));
  } else {
    const double units_per_px = 2.0 * v.half_height / shown_height;
    v.center_x -= dx * units_per_px;
    v.center_y += dy * units_per_px;  // row 0 at the top is the largest imaginary part
  }
  return v;
}

/// `steps` wheel steps (positive: towards the image) scale the distance (Orbit) or the half-height (Plane)
/// by 0.9^steps. Plane zooms around the cursor at (ox, oy) pixels from the image's centre (x right, y down),
/// which keeps the point under it in place. The results stay inside strand_view_knobs()' ranges. Fixed: `v`.
inline StrandViewParams strand_view_zoom(StrandViewKind kind, StrandViewParams v, float steps, float ox, float oy,
                                         float shown_height) {
  if (kind == StrandViewKind::Fixed) return v;
  const double f = std::pow(0.9, static_cast<double>(steps));
  if (kind == StrandViewKind::Orbit) {
    v.distance = std::fmin(kMaxStrandDistance, std::fmax(kMinStrandDistance, static_cast<float>(v.distance * f)));
    return v;
  }
  const double hh = std::fmin(1e3, std::fmax(1e-12, v.half_height * f));
  if (shown_height > 0.f) {
    const double per_px_change = 2.0 * (v.half_height - hh) / shown_height;
    v.center_x += ox * per_px_change;
    v.center_y -= oy * per_px_change;
  }
  v.half_height = hh;
  return v;
}

/// The mandelbrot's real and imaginary ranges for `v` on a width × height image: x = center_x ± half_height ·
/// width/height, y = center_y ± half_height, computed in double and rounded once to float (so the default
/// view at a square size gives exactly today's −2.1f, 1.1f, −1.6f, 1.6f).
struct MandelbrotRegion {
  float x0, x1, y0, y1;
};
inline MandelbrotRegion mandelbrot_region(const StrandViewParams& v, uint32_t width, uint32_t height) {
  const double hw = v.half_height * (static_cast<double>(width) / static_cast<double>(height));
  return {static_cast<float>(v.center_x - hw), static_cast<float>(v.center_x + hw),
          static_cast<float>(v.center_y - v.half_height), static_cast<float>(v.center_y + v.half_height)};
}

}  // namespace mv
