// Minimal raster line plots for the headless commands (mse-curve): a linear x axis, a logarithmic y
// axis with decade labels, one coloured polyline per series and a legend, drawn into packed RGBA8 for
// write_png. Text uses a built-in 5×7 bitmap font (letters are drawn upper case).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mv {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  ///< same length; points with y <= 0 or non-finite values are left out
};

struct PlotOptions {
  std::string title, x_label, y_label;
  int width = 960, height = 600;  ///< pixels, at least 320 × 240
};

/// Draws the series; returns width × height pixels (R in the low byte), row 0 at the top. The x axis
/// spans the data (from 0 when all x are non-negative), the y axis the decades around the data.
std::vector<uint32_t> render_log_plot(const PlotOptions& options, const std::vector<PlotSeries>& series);

}  // namespace mv
