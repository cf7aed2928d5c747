// Dear ImGui on a GLFW window with the OpenGL 3 renderer back end (GLSL 4.50).
#pragma once

struct GLFWwindow;

namespace mv::gui {

/// Owns the ImGui context and both back ends for one window. Construct after the window and its GL
/// context, destroy before them. Does not write imgui.ini (panel positions are set in code).
class ImGuiLayer {
 public:
  explicit ImGuiLayer(GLFWwindow* window);
  ~ImGuiLayer();
  ImGuiLayer(const ImGuiLayer&) = delete;
  ImGuiLayer& operator=(const ImGuiLayer&) = delete;

  /// Starts a frame: read input, then build panels with ImGui:: calls.
  void begin_frame();
  /// Renders the frame's panels into the current framebuffer.
  void end_frame();
};

}  // namespace mv::gui
