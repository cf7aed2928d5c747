// Host side of render/strands/vr_lite_cam.h: parameter validation and the factory.
#include "render/strands/vr_lite_cam.h"

#include "render/strands/param_check.h"

namespace mv {

namespace {
const char* const kContext = "vr-lite-cam";
}

void VrLiteCamParams::validate() const {
  using namespace param_check;
  range(kContext, "width", width, 1, 16384);
  range(kContext, "height", height, 1, 16384);
  make_ray_camera(camera, width, height, kContext);
  range(kContext, "step_voxels", step_voxels, 0.0, 16.0, true);
  range(kContext, "opacity_threshold", opacity_threshold, 0.0, 1.0, true);
  tf.validate(kContext);
  range(kContext, "ka", ka, 0.0, 4.0);
  range(kContext, "kd", kd, 0.0, 4.0);
  range(kContext, "ks", ks, 0.0, 4.0);
  range(kContext, "shininess", shininess, 1, 1024);
  range(kContext, "min_gradient", min_gradient, 0.0, 3e38);
  color(kContext, "background", background);
}

VrLiteCam make_vr_lite_cam(const VolumeView& volume, const VrLiteCamParams& p) {
  p.validate();
  check_strand_volume(volume, p.kernel, kContext);
  VrLiteCam w;
  w.vol = volume;
  w.kernel = p.kernel;
  w.box = field_box(volume, p.kernel);
  w.cam = make_ray_camera(p.camera, p.width, p.height, kContext);
  w.step = p.step_voxels * min_spacing(volume);
  w.threshold = p.opacity_threshold;
  w.ka = p.ka;
  w.kd = p.kd;
  w.ks = p.ks;
  w.shininess = p.shininess;
  w.min_gradient = p.min_gradient;
  w.background = p.background;
  w.tf = sample_tf1d(p.tf, p.step_voxels, kContext);
  return w;
}

}  // namespace mv
