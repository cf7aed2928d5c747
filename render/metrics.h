// Error metrics against a ground truth.
//
// MSE is the mean over all pixels and the three channels of (film mean − reference)², in linear
// radiance; a pixel without samples counts as black. This is what the GUI plots, what `render
// --reference` prints and what mse-curve records (Kerbl 2012 Fig 9 computes it on the normalised output
// images, i.e. on the pixel means, as here).
#pragma once

#include <vector>

#include "render/film.h"
#include "render/math.h"

namespace mv {

/// Squared error of one pixel, summed over r, g, b.
MV_HD MV_INLINE double pixel_squared_error(const FilmView& f, uint32_t idx, const float* ref_rgb) {
  const Vec3 m = f.mean(idx);
  const double dr = static_cast<double>(m.x) - ref_rgb[3 * idx];
  const double dg = static_cast<double>(m.y) - ref_rgb[3 * idx + 1];
  const double db = static_cast<double>(m.z) - ref_rgb[3 * idx + 2];
  return dr * dr + dg * dg + db * db;
}

/// MSE of a host film against `ref_rgb` (width × height × 3 floats, row 0 at the top).
double mse_host(const FilmView& host_film, const float* ref_rgb);
/// MSE of two linear RGB images of `pixels` pixels.
double mse_images(const float* a_rgb, const float* b_rgb, size_t pixels);
/// MSE of a device film against a device reference. `d_scratch` holds one double.
double mse_device(const FilmView& device_film, const float* d_ref_rgb, double* d_scratch);

}  // namespace mv
