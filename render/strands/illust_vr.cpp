// Host side of render/strands/illust_vr.h: parameter validation and the factory.
#include "render/strands/illust_vr.h"

#include "render/strands/param_check.h"

namespace mv {

namespace {
const char* const kContext = "illust-vr";
}

void IllustVrParams::validate() const {
  using namespace param_check;
  validate_volume_ray(volume_ray_spec(*this, IllustVr::kDerivatives), kContext);
  curvature.validate(kContext);
  if (convention != CurvatureConvention::Kindlmann && convention != CurvatureConvention::Megaview)
    throw InputError(kContext, "convention", "unknown curvature convention");
  range(kContext, "contour_thickness", contour_thickness, 0.0, 1e6);
  range(kContext, "contour_strength", contour_strength, 0.0, 1.0);
  color(kContext, "contour_color", contour_color);
  headlight(kContext, ka, kd, min_gradient);
}

IllustVr make_illust_vr(const VolumeView& volume, const IllustVrParams& p) {
  p.validate();
  IllustVr w;
  w.ray = make_volume_ray_caster(volume, volume_ray_spec(p, IllustVr::kDerivatives), kContext);
  static_cast<IllustVrStyle&>(w) = p;
  w.flat_color = p.curvature.flat;
  w.curvature_tf = sample_curvature_tf(p.curvature, kContext);
  return w;
}

}  // namespace mv
