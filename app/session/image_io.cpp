#include "app/session/image_io.h"

#include <stb_image.h>
#include <stb_image_write.h>
#include <tinyexr.h>

#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/errors.h"

namespace mv {

ImageRgb read_exr(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "", std::string("cannot read EXR: ") +
                                   (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  float* data = nullptr;
  int w = 0, h = 0;
  const char* err = nullptr;
  if (LoadEXR(&data, &w, &h, path.c_str(), &err) != TINYEXR_SUCCESS) {
    std::string msg = err ? err : "unknown error";
    if (err) FreeEXRErrorMessage(err);
    throw InputError(path, "", "cannot read EXR: " + msg);
  }
  if (w <= 0 || h <= 0) {
    free(data);
    throw InputError(path, "", "cannot read EXR: empty image (" + std::to_string(w) + "x" + std::to_string(h) + ")");
  }
  ImageRgb img;
  img.width = w;
  img.height = h;
  img.rgb.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i)
    for (int c = 0; c < 3; ++c) img.rgb[3 * i + c] = data[4 * i + c];  // LoadEXR returns RGBA
  free(data);
  return img;
}

void write_exr(const std::string& path, const float* rgb, int width, int height) {
  const char* err = nullptr;
  // SaveEXR writes float32 channels when save_as_fp16 = 0.
  if (SaveEXR(rgb, width, height, 3, 0, path.c_str(), &err) != TINYEXR_SUCCESS) {
    std::string msg = err ? err : "unknown error";
    if (err) FreeEXRErrorMessage(err);
    throw InputError(path, "", "cannot write EXR: " + msg);
  }
}

void write_png(const std::string& path, const uint32_t* rgba, int width, int height) {
  if (!stbi_write_png(path.c_str(), width, height, 4, rgba, width * 4))
    throw InputError(path, "", "cannot write PNG");
}

std::vector<uint32_t> read_png(const std::string& path, int& width, int& height) {
  int comp = 0;
  unsigned char* px = stbi_load(path.c_str(), &width, &height, &comp, 4);
  if (!px) throw InputError(path, "", std::string("cannot read PNG: ") + stbi_failure_reason());
  std::vector<uint32_t> out(static_cast<size_t>(width) * height);
  std::memcpy(out.data(), px, out.size() * 4);
  stbi_image_free(px);
  return out;
}

}  // namespace mv
