// Image files: linear RGB EXR (tinyexr, Debian libtinyexr-dev) and 8-bit PNG (stb_image_write, libstb).
// Rows run top to bottom. Errors throw InputError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mv {

struct ImageRgb {
  int width = 0, height = 0;
  std::vector<float> rgb;  ///< width × height × 3, linear
};

/// Reads an EXR's R, G, B channels (A ignored; a single Y channel is replicated). Throws InputError.
ImageRgb read_exr(const std::string& path);
/// Writes linear RGB as a 32-bit float EXR (ZIP compressed). Throws InputError if it cannot be written.
void write_exr(const std::string& path, const float* rgb, int width, int height);
/// Writes packed RGBA8 (R in the low byte) as PNG. Throws InputError if it cannot be written.
void write_png(const std::string& path, const uint32_t* rgba, int width, int height);
/// Reads a PNG into packed RGBA8 (for tests and window-shot checks). Throws InputError.
std::vector<uint32_t> read_png(const std::string& path, int& width, int& height);

}  // namespace mv
