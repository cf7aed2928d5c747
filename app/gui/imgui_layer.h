// Dear ImGui on a GLFW window with the OpenGL 3 renderer back end (GLSL 4.50), and its settings file.
#pragma once

#include <optional>
#include <string>
#include <utility>

struct GLFWwindow;

namespace mv::gui {

/// Where the viewer keeps Dear ImGui's settings (panel sizes and positions, the window's size):
/// $XDG_CONFIG_HOME/megaview/imgui.ini when XDG_CONFIG_HOME is an absolute path, else
/// $HOME/.config/megaview/imgui.ini. The folder is created when missing. Empty (no settings file) when
/// neither variable gives a path or the folder cannot be created; `why` (if given) then receives the reason,
/// naming the variable and the folder.
std::string imgui_ini_path(std::string* why = nullptr);

/// Owns the ImGui context and both back ends for one window. Construct after the window and its GL
/// context, destroy before them.
class ImGuiLayer {
 public:
  /// `ini_path`: Dear ImGui's settings file (imgui_ini_path()); empty: none. It is read here and written
  /// by ImGui when something changed and at destruction; a file that cannot be read or written is
  /// ignored (the viewer runs on the defaults). Besides ImGui's windows it holds the GLFW window's size,
  /// as the entry [Megaview][Window] Size=W,H (screen units).
  ImGuiLayer(GLFWwindow* window, std::string ini_path = {});
  ~ImGuiLayer();
  ImGuiLayer(const ImGuiLayer&) = delete;
  ImGuiLayer& operator=(const ImGuiLayer&) = delete;

  /// The window size the settings file held when it was read, if any (screen units, each ≥ 1).
  std::optional<std::pair<int, int>> saved_window_size() const { return saved_size_; }
  const std::string& ini_path() const { return ini_path_; }

  /// Starts a frame: read input, then build panels with ImGui:: calls.
  void begin_frame();
  /// Renders the frame's panels into the current framebuffer.
  void end_frame();

 private:
  GLFWwindow* window_;
  std::string ini_path_;  // ImGui keeps a pointer to it (io.IniFilename)
  std::optional<std::pair<int, int>> saved_size_;
  std::pair<int, int> window_size_{0, 0};  // the latest size of the window while neither maximized nor iconified
};

}  // namespace mv::gui
