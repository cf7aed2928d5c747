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
  const std::string why = s.gpu_in_use() ? "strategy " + s.strategy().name + " runs on the CPU" : s.cpu_reason();
  return "CPU \xC2\xB7 " + why;
}

}  // namespace

Display::Display()
    : program_(build_program("display.vert", "display.frag")), vertex_array_(make_vertex_array()) {}

bool Display::ensure_texture(int width, int height, bool want_interop) {
  bool created = false;
  if (!texture_ || width != tex_width_ || height != tex_height_) {
    interop_.reset();  // unregister before the texture goes away
    texture_ = make_rgba8_texture(width, height);
    tex_width_ = width;
    tex_height_ = height;
    created = true;
  }
  // Try interop once per texture, and never again on this context after it failed once.
  if (want_interop && !interop_ && stats_.interop_failure.empty()) {
    interop_ = CudaGlImage::try_register(texture_.id(), stats_.interop_failure);
    if (!interop_) {
      spdlog::warn("display: CUDA-GL interop unavailable: {}; frames are copied through the host",
                   stats_.interop_failure);
    } else if (!interop_logged_) {
      spdlog::info("display: CUDA-GL interop active (texture {}x{} RGBA8, write-discard)", width, height);
      interop_logged_ = true;
    }
  }
  return created;
}

DisplayPath Display::choose_path(const Session& s) const {
  if (!s.gpu_in_use() || s.side() == Side::Host) return DisplayPath::Cpu;
  return interop_ && !force_host_copy_ ? DisplayPath::Interop : DisplayPath::HostCopy;
}

void Display::upload_host_pixels() {
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(texture_.id(), 0, 0, 0, tex_width_, tex_height_, GL_RGBA, GL_UNSIGNED_BYTE, host_rgba_.data());
}

void Display::update(Session& s, const ToneMapSettings& tm, bool film_changed) {
  const int width = static_cast<int>(s.width()), height = static_cast<int>(s.height());
  const bool device_film = s.gpu_in_use() && s.side() == Side::Device;
  const bool new_texture = ensure_texture(width, height, device_film);
  DisplayPath path = choose_path(s);
  if (!film_changed && !new_texture && path == stats_.path && stats_.updates > 0 && same_settings(tm, last_tm_))
    return;

  const auto t0 = Clock::now();
  double device_ms = 0.0;
  if (path == DisplayPath::Cpu) {
    s.tonemap_to_host(tm, host_rgba_);
    upload_host_pixels();
  } else {
    const size_t pixels = static_cast<size_t>(width) * height;
    d_rgba_.resize(pixels);
    if (!timer_) timer_ = std::make_unique<DeviceTimer>();
    timer_->begin();
    s.tonemap_to_device(tm, d_rgba_.data());
    if (path == DisplayPath::Interop) {
      try {
        interop_->copy_from(d_rgba_.data(), width, height);
      } catch (const CudaError& e) {
        // A context that registered but cannot map: keep showing the film through the host.
        spdlog::warn("display: CUDA-GL interop copy failed, switching to the host copy: {}", e.what());
        stats_.interop_failure = e.what();
        interop_.reset();
        path = DisplayPath::HostCopy;
      }
    }
    if (path == DisplayPath::HostCopy) {
      host_rgba_.resize(pixels);
      d_rgba_.download(host_rgba_.data(), pixels);
    }
    timer_->end();
    device_ms = timer_->elapsed_ms();  // also orders the host copy's download before the upload below
    if (path == DisplayPath::HostCopy) upload_host_pixels();
  }
  const std::string label = path_label(path, s);
  if (label != stats_.label) spdlog::info("display: path {}", label);
  stats_.label = label;
  stats_.path = path;
  stats_.update_ms = ms_since(t0);
  stats_.device_ms = device_ms;
  stats_.updates += 1;
  stats_.total_update_ms += stats_.update_ms;
  stats_.total_device_ms += device_ms;
  last_tm_ = tm;
}

void Display::draw(int fb_width, int fb_height, const PixelRect& area) {
  const auto t0 = Clock::now();
  glViewport(0, 0, fb_width, fb_height);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(0.09f, 0.09f, 0.10f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (texture_ && area.width > 0 && area.height > 0) {
    // Fit the image into `area` with its aspect ratio kept (the shader's u_half_extent, in NDC).
    const float image_aspect = static_cast<float>(tex_width_) / static_cast<float>(tex_height_);
    const float area_aspect = static_cast<float>(area.width) / static_cast<float>(area.height);
    const float half_w = image_aspect < area_aspect ? image_aspect / area_aspect : 1.f;
    const float half_h = image_aspect < area_aspect ? 1.f : area_aspect / image_aspect;
    glViewport(area.x, area.y, area.width, area.height);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glUseProgram(program_.id());
    glUniform2f(0, half_w, half_h);
    glBindTextureUnit(0, texture_.id());
    glBindVertexArray(vertex_array_.id());
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glBindVertexArray(0);
    glUseProgram(0);
    glViewport(0, 0, fb_width, fb_height);
  }
  stats_.draw_ms = ms_since(t0);
}

}  // namespace mv::gui
