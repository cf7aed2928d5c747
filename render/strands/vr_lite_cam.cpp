// Host side of render/strands/vr_lite_cam.h: parameter validation and the factory.
#include "render/strands/vr_lite_cam.h"

#include "render/strands/param_check.h"

namespace mv {

void VrLiteCamParams::validate() const {
  using namespace param_check;
  validate_volume_ray(volume_ray_spec(*this, VrLiteCam::kDerivatives), VrLiteCam::kName);
  headlight(VrLiteCam::kName, ka, kd, min_gradient);
  range(VrLiteCam::kName, "ks", ks, 0.0, 4.0);
  range(VrLiteCam::kName, "shininess", shininess, 1, 1024);
}

VrLiteCam make_vr_lite_cam(const VolumeView& volume, const VrLiteCamParams& p) {
  p.validate();
  VrLiteCam w;
  w.ray = make_volume_ray_caster(volume, volume_ray_spec(p, VrLiteCam::kDerivatives), VrLiteCam::kName);
  static_cast<VrLiteCamShading&>(w) = p;
  return w;
}

}  // namespace mv
