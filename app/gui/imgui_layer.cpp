#include "app/gui/imgui_layer.h"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_internal.h>  // ImGuiSettingsHandler: ImGui 1.86 registers settings handlers in the context
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace mv::gui {

namespace {

constexpr const char* kSettingsType = "Megaview";

ImGuiLayer*& layer_of(ImGuiSettingsHandler* h) { return *reinterpret_cast<ImGuiLayer**>(&h->UserData); }

}  // namespace

std::string imgui_ini_path(std::string* why) {
  namespace fs = std::filesystem;
  fs::path dir;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const bool from_xdg = xdg && *xdg && fs::path(xdg).is_absolute();
  if (from_xdg)
    dir = fs::path(xdg) / "megaview";
  else if (home && *home)
    dir = fs::path(home) / ".config" / "megaview";
  else {
    if (why) *why = "neither XDG_CONFIG_HOME (an absolute path) nor HOME is set";
    return {};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::error_code dir_ec;
  if (!fs::is_directory(dir, dir_ec)) {
    if (why)
      *why = std::string(from_xdg ? "$XDG_CONFIG_HOME" : "$HOME") + ": cannot create the folder " + dir.string() +
             (ec ? " (" + ec.message() + ")" : std::string());
    return {};
  }
  return (dir / "imgui.ini").string();
}

ImGuiLayer::ImGuiLayer(GLFWwindow* window, std::string ini_path) : window_(window), ini_path_(std::move(ini_path)) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = ini_path_.empty() ? nullptr : ini_path_.c_str();
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 4.f;

  // The GLFW window's size as one more settings entry, next to ImGui's own windows.
  ImGuiSettingsHandler h;
  h.TypeName = kSettingsType;
  h.TypeHash = ImHashStr(kSettingsType);
  h.UserData = this;
  h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler*, const char* name) -> void* {
    return std::strcmp(name, "Window") == 0 ? reinterpret_cast<void*>(1) : nullptr;
  };
  h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, void*, const char* line) {
    int w = 0, ht = 0;
    if (std::sscanf(line, "Size=%d,%d", &w, &ht) == 2 && w >= 1 && ht >= 1 && w <= 1 << 15 && ht <= 1 << 15)
      layer_of(handler)->saved_size_ = std::make_pair(w, ht);
  };
  h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* out) {
    const ImGuiLayer* self = layer_of(handler);
    const auto [w, ht] = self->window_size_.first > 0 ? self->window_size_ : self->saved_size_.value_or(std::make_pair(0, 0));
    if (w <= 0 || ht <= 0) return;
    out->appendf("[%s][Window]\nSize=%d,%d\n\n", kSettingsType, w, ht);
  };
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
  if (io.IniFilename) ImGui::LoadIniSettingsFromDisk(io.IniFilename);  // a missing file reads as empty

  if (!ImGui_ImplGlfw_InitForOpenGL(window, true)) {
    ImGui::DestroyContext();
    throw std::runtime_error("ImGui: the GLFW back end failed to start");
  }
  if (!ImGui_ImplOpenGL3_Init("#version 450")) {
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    throw std::runtime_error("ImGui: the OpenGL 3 back end failed to start");
  }
}

ImGuiLayer::~ImGuiLayer() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();  // writes the settings file (ImGui ignores one it cannot open)
}

void ImGuiLayer::begin_frame() {
  // Remember the window's size while it is neither maximized nor iconified, and have ImGui save it.
  if (!glfwGetWindowAttrib(window_, GLFW_ICONIFIED) && !glfwGetWindowAttrib(window_, GLFW_MAXIMIZED)) {
    int w = 0, h = 0;
    glfwGetWindowSize(window_, &w, &h);
    if (w > 0 && h > 0 && std::make_pair(w, h) != window_size_) {
      window_size_ = {w, h};
      ImGui::MarkIniSettingsDirty();
    }
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void ImGuiLayer::end_frame() {
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}  // namespace mv::gui
