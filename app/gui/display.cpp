#include "app/gui/display.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace mv::gui {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool same_settings(const ToneMapSettings& a, const ToneMapSettings& b) {
  return a.mode == b.mode && a.exposure_ev == b.exposure_ev && a.gamma == b.gamma && a.heat_map == b.heat_map &&
         a.heat_opacity == b.heat_opacity && a.target_spp == b.target_spp;
}

std::string path_label(DisplayPath path, const Session& s) {
  switch (path) {
    case DisplayPath::Interop: return "GPU \xC2\xB7 interop";
    case DisplayPath::HostCopy: return "GPU \xC2\xB7 host copy";
    case DisplayPath::Cpu: break;
  }
  if (s.gpu_in_use()) return "CPU \xC2\xB7 strategy " + s.strategy().name + " runs on the CPU";
  if (s.options().force_cpu) return "CPU \xC2\xB7 " + s.cpu_reason();
  return "CPU \xC2\xB7 " + s.cpu_reason() + ": rendering on the CPU";
}

}  // namespace

ImageRect letterbox(const PixelRect& area, int image_width, int image_height) {
  if (area.width <= 0 || area.height <= 0 || image_width <= 0 || image_height <= 0) return {};
  const float image_aspect = static_cast<float>(image_width) / static_cast<float>(image_height);
  const float area_aspect = static_cast<float>(area.width) / static_cast<float>(area.height);
  const float half_w = image_aspect < area_aspect ? image_aspect / area_aspect : 1.f;
  const float half_h = image_aspect < area_aspect ? 1.f : area_aspect / image_aspect;
  ImageRect r;
  r.width = half_w * static_cast<float>(area.width);
  r.height = half_h * static_cast<float>(area.height);
  r.x = static_cast<float>(area.x) + 0.5f * (static_cast<float>(area.width) - r.width);
  r.y = static_cast<float>(area.y) + 0.5f * (static_cast<float>(area.height) - r.height);
  return r;
}

Display::Display()
    : program_(build_program("display.vert", "display.frag")), vertex_array_(make_vertex_array()) {}

bool Display::ensure_texture(FilmLayer& l, int width, int height, bool want_interop) {
  bool created = false;
  if (!l.texture || width != l.width || height != l.height) {
    l.interop.reset();  // unregister before the texture goes away
    l.texture = make_rgba8_texture(width, height);
    l.width = width;
    l.height = height;
    created = true;
  }
  // Try interop once per texture, and never again on this context after it failed once.
  if (want_interop && !l.interop && interop_failure_.empty()) {
    l.interop = CudaGlImage::try_register(l.texture.id(), interop_failure_);
    if (!l.interop) {
      spdlog::warn("display: CUDA-GL interop unavailable: {}; frames are copied through the host", interop_failure_);
    } else if (!interop_logged_) {
      spdlog::info("display: CUDA-GL interop active (texture {}x{} RGBA8, write-discard)", width, height);
      interop_logged_ = true;
    }
  }
  l.stats.interop_failure = interop_failure_;
  return created;
}

DisplayPath Display::choose_path(const FilmLayer& l, const Session& s) const {
  if (!s.gpu_in_use() || s.side() == Side::Host) return DisplayPath::Cpu;
  return l.interop && !force_host_copy_ ? DisplayPath::Interop : DisplayPath::HostCopy;
}

void Display::upload_host_pixels(FilmLayer& l) {
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(l.texture.id(), 0, 0, 0, l.width, l.height, GL_RGBA, GL_UNSIGNED_BYTE, l.host_rgba.data());
}

void Display::release_right() {
  FilmLayer& l = layers_[index(Layer::Right)];
  l.interop.reset();  // unregister before the texture goes away
  l.texture = GlTexture{};
  l.width = l.height = 0;
  l.d_rgba = DeviceBuffer<uint32_t>{};
  l.host_rgba = {};
  l.stats = DisplayStats{};
}

void Display::show_image(const uint32_t* rgba, int width, int height, const std::string& label) {
  FilmLayer& l = layers_[0];
  const auto t0 = Clock::now();
  ensure_texture(l, width, height, false);
  l.host_rgba.assign(rgba, rgba + static_cast<size_t>(width) * height);
  upload_host_pixels(l);
  DisplayStats& stats = l.stats;
  if (label != stats.label) spdlog::info("display: path {}", label);
  stats.label = label;
  stats.path = DisplayPath::Cpu;
  stats.update_ms = ms_since(t0);
  stats.device_ms = 0.0;
  stats.updates += 1;
  stats.total_update_ms += stats.update_ms;
}

void Display::update(Session& s, const ToneMapSettings& tm, bool film_changed, Layer layer) {
  FilmLayer& l = layers_[index(layer)];
  DisplayStats& stats = l.stats;
  const int width = static_cast<int>(s.width()), height = static_cast<int>(s.height());
  const bool device_film = s.gpu_in_use() && s.side() == Side::Device;
  const bool new_texture = ensure_texture(l, width, height, device_film);
  DisplayPath path = choose_path(l, s);
  if (!film_changed && !new_texture && path == stats.path && stats.updates > 0 && same_settings(tm, l.last_tm))
    return;

  const auto t0 = Clock::now();
  double device_ms = 0.0;
  if (path == DisplayPath::Cpu) {
    s.tonemap_to_host(tm, l.host_rgba);
    upload_host_pixels(l);
  } else {
    const size_t pixels = static_cast<size_t>(width) * height;
    l.d_rgba.resize(pixels);
    if (!l.timer) l.timer = std::make_unique<DeviceTimer>();
    l.timer->begin();
    s.tonemap_to_device(tm, l.d_rgba.data());
    if (path == DisplayPath::Interop) {
      try {
        l.interop->copy_from(l.d_rgba.data(), width, height);
      } catch (const CudaError& e) {
        // A context that registered but cannot map: keep showing the film through the host.
        spdlog::warn("display: CUDA-GL interop copy failed, switching to the host copy: {}", e.what());
        interop_failure_ = e.what();
        stats.interop_failure = interop_failure_;
        for (FilmLayer& other : layers_) other.interop.reset();
        path = DisplayPath::HostCopy;
      }
    }
    if (path == DisplayPath::HostCopy) {
      l.host_rgba.resize(pixels);
      l.d_rgba.download(l.host_rgba.data(), pixels);
    }
    l.timer->end();
    device_ms = l.timer->elapsed_ms();  // also orders the host copy's download before the upload below
    if (path == DisplayPath::HostCopy) upload_host_pixels(l);
  }
  const std::string label = path_label(path, s);
  if (label != stats.label)
    spdlog::info("display: {}path {}", layer == Layer::Right ? "split view's right side: " : "", label);
  stats.label = label;
  stats.path = path;
  stats.update_ms = ms_since(t0);
  stats.device_ms = device_ms;
  stats.updates += 1;
  stats.total_update_ms += stats.update_ms;
  stats.total_device_ms += device_ms;
  l.last_tm = tm;
}

void Display::draw(int fb_width, int fb_height, const PixelRect& area, int split_column) {
  const auto t0 = Clock::now();
  FilmLayer& left = layers_[0];
  const FilmLayer& right = layers_[1];
  glViewport(0, 0, fb_width, fb_height);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(0.09f, 0.09f, 0.10f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (left.texture && area.width > 0 && area.height > 0) {
    // Fit the image into `area` with its aspect ratio kept (the shader's u_half_extent, in NDC).
    const ImageRect r = letterbox(area, left.width, left.height);
    const float half_w = r.width / static_cast<float>(area.width);
    const float half_h = r.height / static_cast<float>(area.height);
    const bool split = split_column >= 0 && right.texture && right.width == left.width && right.height == left.height;
    glViewport(area.x, area.y, area.width, area.height);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glUseProgram(program_.id());
    glUniform2f(0, half_w, half_h);
    glUniform1i(1, split ? split_column : -1);
    glBindTextureUnit(0, left.texture.id());
    glBindTextureUnit(1, split ? right.texture.id() : left.texture.id());
    glBindVertexArray(vertex_array_.id());
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glBindVertexArray(0);
    glUseProgram(0);
    glViewport(0, 0, fb_width, fb_height);
  }
  left.stats.draw_ms = ms_since(t0);
}

}  // namespace mv::gui
