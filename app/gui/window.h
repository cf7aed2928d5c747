// The application window: GLFW with an OpenGL 4.5 core context whose functions glad has loaded.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

struct GLFWwindow;

namespace mv::gui {

/// GLFW could not start, or the window or its GL 4.5 context could not be created (no display, no GL 4.5).
/// `what()` reads "cannot open a window (no display?): <GLFW's message>".
class WindowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Owns GLFW (init/terminate), one window and its GL context, current on the constructing thread. Only one
/// Window may exist at a time. Not copyable or movable.
class Window {
 public:
  /// Opens a resizable window of `width` × `height` screen units, made smaller where needed to fit 90 % of
  /// the primary monitor's work area (glfwGetMonitorWorkarea: the screen less task bars and docks), and
  /// centred in it. Throws WindowError.
  /// Create it before ImGui's GLFW back end, which chains to the key callback installed here.
  Window(int width, int height, const char* title);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  GLFWwindow* handle() const { return window_; }
  /// Resizes to `width` × `height` screen units within 90 % of the work area (as the constructor does),
  /// keeping the window inside the work area.
  void resize_within_screen(int width, int height);
  bool should_close() const;
  /// 1: wait for vertical sync on swap, 0: swap at once.
  void set_swap_interval(int interval);
  void swap_buffers();
  /// Processes pending window events and returns at once.
  void poll_events();
  /// Waits up to `timeout_s` seconds for an event, then processes pending events (idle frames).
  void wait_events(double timeout_s);
  /// Framebuffer size in pixels (differs from the window size on high-DPI screens).
  void framebuffer_size(int& width, int& height) const;
  /// Starts latching presses of `glfw_key` for take_key_press.
  void watch_key(int glfw_key) { watched_keys_.push_back(glfw_key); }
  /// True if `glfw_key` (watched) was pressed since the last call. Presses are latched by a key callback,
  /// so one shorter than a frame is not lost.
  bool take_key_press(int glfw_key);
  /// Reads the back buffer (what the next swap shows) as packed RGBA8 (R in the low byte, alpha 255),
  /// rows top to bottom, for window shots.
  std::vector<uint32_t> read_back_buffer(int& width, int& height) const;
  /// "renderer, version" of the GL context (e.g. "llvmpipe (LLVM 15.0.6, 256 bits), 4.5 (Core Profile) Mesa").
  std::string gl_description() const;

 private:
  static void on_key(GLFWwindow* window, int key, int scancode, int action, int mods);
  GLFWwindow* window_ = nullptr;
  std::vector<int> watched_keys_;
  std::vector<int> pressed_keys_;  // latched presses of watched keys, not yet taken
};

}  // namespace mv::gui
