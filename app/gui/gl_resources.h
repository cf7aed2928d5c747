// RAII owners of OpenGL objects and the display's shader program. Need a current GL context (glad loaded)
// for construction and destruction.
#pragma once

#include <glad/gl.h>

#include <utility>

namespace mv::gui {

/// Owns one GL object name; `Deleter` frees it. Move-only; a zero name is empty.
template <class Deleter>
class GlHandle {
 public:
  GlHandle() = default;
  explicit GlHandle(GLuint id) : id_(id) {}
  ~GlHandle() {
    if (id_) Deleter{}(id_);
  }
  GlHandle(const GlHandle&) = delete;
  GlHandle& operator=(const GlHandle&) = delete;
  GlHandle(GlHandle&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
  GlHandle& operator=(GlHandle&& o) noexcept {
    if (this != &o) {
      if (id_) Deleter{}(id_);
      id_ = std::exchange(o.id_, 0);
    }
    return *this;
  }
  GLuint id() const { return id_; }
  explicit operator bool() const { return id_ != 0; }

 private:
  GLuint id_ = 0;
};

struct TextureDeleter {
  void operator()(GLuint id) const { glDeleteTextures(1, &id); }
};
struct VertexArrayDeleter {
  void operator()(GLuint id) const { glDeleteVertexArrays(1, &id); }
};
struct ShaderDeleter {
  void operator()(GLuint id) const { glDeleteShader(id); }
};
struct ProgramDeleter {
  void operator()(GLuint id) const { glDeleteProgram(id); }
};

using GlTexture = GlHandle<TextureDeleter>;
using GlVertexArray = GlHandle<VertexArrayDeleter>;
using GlShader = GlHandle<ShaderDeleter>;
using GlProgram = GlHandle<ProgramDeleter>;

/// An immutable GL_RGBA8 2D texture (one level), linear minification, nearest magnification (pixels stay
/// crisp when zoomed in), clamped at the edges.
GlTexture make_rgba8_texture(int width, int height);
/// An empty vertex array object (the display quad is generated from gl_VertexID).
GlVertexArray make_vertex_array();
/// Compiles and links the embedded shaders `vertex_name` and `fragment_name` (shaders/, embedded by
/// tools/embed_files.py). Throws std::runtime_error with the GL info log on failure.
GlProgram build_program(const char* vertex_name, const char* fragment_name);

}  // namespace mv::gui
