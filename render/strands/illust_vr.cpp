// Host side of render/strands/illust_vr.h: parameter validation and the factory.
#include "render/strands/illust_vr.h"

#include "render/strands/param_check.h"

namespace mv {

namespace {
const char* const kContext = "illust-vr";
}

void IllustVrParams::validate() const {
  using namespace param_check;
  range(kContext, "width", width, 1, 16384);
  range(kContext, "height", height, 1, 16384);
  make_ray_camera(camera, width, height, kContext);
  if (kernel_max_derivative(kernel) < 2)
    throw InputError(kContext, "kernel",
                     std::string(kernel_name(kernel)) + " has no usable Hessian (curvature needs ctmr or bspln3)");
  range(kContext, "step_voxels", step_voxels, 0.0, 16.0, true);
  range(kContext, "opacity_threshold", opacity_threshold, 0.0, 1.0, true);
  tf.validate(kContext);
  curvature.validate(kContext);
  if (convention != CurvatureConvention::Kindlmann && convention != CurvatureConvention::Megaview)
    throw InputError(kContext, "convention", "unknown curvature convention");
  range(kContext, "contour_thickness", contour_thickness, 0.0, 1e6);
  range(kContext, "contour_strength", contour_strength, 0.0, 1.0);
  color(kContext, "contour_color", contour_color);
  range(kContext, "ka", ka, 0.0, 4.0);
  range(kContext, "kd", kd, 0.0, 4.0);
  range(kContext, "min_gradient", min_gradient, 0.0, 3e38);
  color(kContext, "background", background);
}

IllustVr make_illust_vr(const VolumeView& volume, const IllustVrParams& p) {
  p.validate();
  check_strand_volume(volume, p.kernel, kContext);
  IllustVr w;
  w.vol = volume;
  w.kernel = p.kernel;
  w.convention = p.convention;
  w.box = field_box(volume, p.kernel);
  w.cam = make_ray_camera(p.camera, p.width, p.height, kContext);
  w.step = p.step_voxels * min_spacing(volume);
  w.threshold = p.opacity_threshold;
  w.ka = p.ka;
  w.kd = p.kd;
  w.min_gradient = p.min_gradient;
  w.thickness = p.contour_thickness;
  w.contour_strength = p.contour_strength;
  w.contour_color = p.contour_color;
  w.flat_color = p.curvature.flat;
  w.background = p.background;
  w.tf = sample_tf1d(p.tf, p.step_voxels, kContext);
  w.curvature_tf = sample_curvature_tf(p.curvature, kContext);
  return w;
}

}  // namespace mv
