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

/// A rectangle of pixels: columns [x0, x1) × rows [y0, y1), row 0 at the top. The MSE functions clamp it
/// to the film; an empty region (after clamping) has MSE 0. The split view's halves are column ranges.
struct PixelRegion {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  /// The whole width × height image.
  static PixelRegion whole(int width, int height) { return {0, 0, width, height}; }
  /// Columns [x0, x1) over all `height` rows.
  static PixelRegion columns(int x0, int x1, int height) { return {x0, 0, x1, height}; }
};

/// `r` clamped to a width × height image (x1 ≥ x0 and y1 ≥ y0 afterwards).
PixelRegion clamp_region(PixelRegion r, int width, int height);
/// Pixels in `r` (after clamp_region).
size_t region_pixels(const PixelRegion& r);

/// MSE of a host film against `ref_rgb` (width × height × 3 floats, row 0 at the top).
double mse_host(const FilmView& host_film, const float* ref_rgb);
/// MSE over the pixels of `region` only (the mean over its pixels and the three channels); 0 if empty.
double mse_host(const FilmView& host_film, const float* ref_rgb, PixelRegion region);
/// MSE of two linear RGB images of `pixels` pixels.
double mse_images(const float* a_rgb, const float* b_rgb, size_t pixels);
/// MSE of a device film against a device reference. `d_scratch` holds one double.
double mse_device(const FilmView& device_film, const float* d_ref_rgb, double* d_scratch);
/// MSE of a device film over the pixels of `region` only (as mse_host with a region). Throws CudaError.
double mse_device(const FilmView& device_film, const float* d_ref_rgb, double* d_scratch, PixelRegion region);

}  // namespace mv
