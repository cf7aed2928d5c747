#include "app/gui/window.h"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace mv::gui {

namespace {

std::string& last_glfw_error() {
  static std::string message;
  return message;
}

void on_glfw_error(int code, const char* description) {
  last_glfw_error() = std::string(description ? description : "unknown error") + " (GLFW error " +
                      std::to_string(code) + ")";
}

[[noreturn]] void fail(const std::string& fallback) {
  const std::string& glfw = last_glfw_error();
  throw WindowError("cannot open a window (no display?): " + (glfw.empty() ? fallback : glfw));
}

/// The primary monitor's work area (x, y, width, height); false without a monitor (or a zero-sized one).
bool work_area(int& x, int& y, int& w, int& h) {
  x = y = w = h = 0;
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  if (!monitor) return false;
  glfwGetMonitorWorkarea(monitor, &x, &y, &w, &h);
  return w > 0 && h > 0;
}

/// `width` × `height` shrunk to at most 90 % of the work area (each side at least 1).
void fit_work_area(int& width, int& height) {
  int x, y, w, h;
  if (!work_area(x, y, w, h)) return;
  width = std::clamp(width, 1, std::max(1, static_cast<int>(0.9 * w)));
  height = std::clamp(height, 1, std::max(1, static_cast<int>(0.9 * h)));
}

/// Centres the window in the work area.
void centre(GLFWwindow* window) {
  int x, y, w, h;
  if (!work_area(x, y, w, h)) return;
  int ww = 0, wh = 0;
  glfwGetWindowSize(window, &ww, &wh);
  glfwSetWindowPos(window, x + std::max(0, (w - ww) / 2), y + std::max(0, (h - wh) / 2));
}

}  // namespace

Window::Window(int width, int height, const char* title) {
  last_glfw_error().clear();
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) fail("glfwInit failed");
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
  width = std::max(width, 1);
  height = std::max(height, 1);
  fit_work_area(width, height);
  window_ = glfwCreateWindow(width, height, title, nullptr, nullptr);
  if (!window_) {
    glfwTerminate();
    fail("glfwCreateWindow failed (no OpenGL 4.5 core context?)");
  }
  centre(window_);
  glfwMakeContextCurrent(window_);
  if (gladLoadGL(glfwGetProcAddress) == 0) {
    glfwDestroyWindow(window_);
    glfwTerminate();
    throw WindowError("cannot open a window (no display?): the OpenGL 4.5 functions could not be loaded");
  }
  glfwSetWindowUserPointer(window_, this);
  glfwSetKeyCallback(window_, on_key);
  spdlog::info("window: OpenGL {}", gl_description());
}

void Window::on_key(GLFWwindow* window, int key, int /*scancode*/, int action, int /*mods*/) {
  auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window));
  const auto& watched = self->watched_keys_;
  if (action == GLFW_PRESS && std::find(watched.begin(), watched.end(), key) != watched.end())
    self->pressed_keys_.push_back(key);
}

void Window::resize_within_screen(int width, int height) {
  width = std::max(width, 1);
  height = std::max(height, 1);
  fit_work_area(width, height);
  int w = 0, h = 0;
  glfwGetWindowSize(window_, &w, &h);
  if (w == width && h == height) return;
  glfwSetWindowSize(window_, width, height);
  centre(window_);
}

Window::~Window() {
  glfwDestroyWindow(window_);
  glfwTerminate();
}

bool Window::should_close() const { return glfwWindowShouldClose(window_) != 0; }

void Window::set_swap_interval(int interval) { glfwSwapInterval(interval); }

void Window::swap_buffers() { glfwSwapBuffers(window_); }

void Window::poll_events() { glfwPollEvents(); }

void Window::wait_events(double timeout_s) { glfwWaitEventsTimeout(timeout_s); }

void Window::framebuffer_size(int& width, int& height) const { glfwGetFramebufferSize(window_, &width, &height); }

bool Window::take_key_press(int glfw_key) {
  const auto it = std::find(pressed_keys_.begin(), pressed_keys_.end(), glfw_key);
  if (it == pressed_keys_.end()) return false;
  pressed_keys_.erase(std::remove(pressed_keys_.begin(), pressed_keys_.end(), glfw_key), pressed_keys_.end());
  return true;
}

std::vector<uint32_t> Window::read_back_buffer(int& width, int& height) const {
  framebuffer_size(width, height);
  std::vector<uint32_t> bottom_up(static_cast<size_t>(width) * height);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
  std::vector<uint32_t> rgba(bottom_up.size());
  for (int y = 0; y < height; ++y) {
    const uint32_t* src = bottom_up.data() + static_cast<size_t>(height - 1 - y) * width;
    std::transform(src, src + width, rgba.begin() + static_cast<ptrdiff_t>(y) * width,
                   [](uint32_t p) { return p | 0xff000000u; });
  }
  return rgba;
}

std::string Window::gl_description() const {
  const auto str = [](GLenum name) {
    const auto* s = reinterpret_cast<const char*>(glGetString(name));
    return std::string(s ? s : "?");
  };
  return str(GL_RENDERER) + ", " + str(GL_VERSION);
}

}  // namespace mv::gui
