// Host side of render/strands/illust_vr.h: parameter validation and the factory.
#include "render/strands/illust_vr.h"

#include "render/strands/param_check.h"

namespace mv {

void IllustVrParams::validate() const {
  using namespace param_check;
  validate_volume_ray(volume_ray_spec(*this, IllustVr::kDerivatives), IllustVr::kName);
  curvature.validate(IllustVr::kName);
  if (convention != CurvatureConvention::Kindlmann && convention != CurvatureConvention::Megaview)
    throw InputError(IllustVr::kName, "convention", "unknown curvature convention");
  range(IllustVr::kName, "contour_thickness", contour_thickness, 0.0, 1e6);
  range(IllustVr::kName, "contour_strength", contour_strength, 0.0, 1.0);
  color(IllustVr::kName, "contour_color", contour_color);
  headlight(IllustVr::kName, ka, kd, min_gradient);
}

IllustVr make_illust_vr(const VolumeView& volume, const IllustVrParams& p) {
  p.validate();
  IllustVr w;
  w.ray = make_volume_ray_caster(volume, volume_ray_spec(p, IllustVr::kDerivatives), IllustVr::kName);
  static_cast<IllustVrStyle&>(w) = p;
  w.flat_color = p.curvature.flat;
  w.curvature_tf = sample_curvature_tf(p.curvature, IllustVr::kName);
  return w;
}

}  // namespace mv
