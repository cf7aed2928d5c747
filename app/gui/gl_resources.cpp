#include "app/gui/gl_resources.h"

#include <stdexcept>
#include <string>

#include "shaders_embedded.h"

namespace mv::gui {

namespace {

std::string info_log(GLuint object, bool is_program) {
  GLint length = 0;
  if (is_program)
    glGetProgramiv(object, GL_INFO_LOG_LENGTH, &length);
  else
    glGetShaderiv(object, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(length > 0 ? length : 1), '\0');
  if (is_program)
    glGetProgramInfoLog(object, length, nullptr, log.data());
  else
    glGetShaderInfoLog(object, length, nullptr, log.data());
  return log.c_str();
}

GlShader compile(GLenum stage, const char* name) {
  const char* source = shaders::find(name);
  if (!source) throw std::runtime_error(std::string("shader ") + name + " is not embedded in the binary");
  GlShader shader(glCreateShader(stage));
  glShaderSource(shader.id(), 1, &source, nullptr);
  glCompileShader(shader.id());
  GLint ok = GL_FALSE;
  glGetShaderiv(shader.id(), GL_COMPILE_STATUS, &ok);
  if (ok != GL_TRUE) throw std::runtime_error(std::string("shader ") + name + ": " + info_log(shader.id(), false));
  return shader;
}

}  // namespace

GlTexture make_rgba8_texture(int width, int height) {
  GLuint id = 0;
  glCreateTextures(GL_TEXTURE_2D, 1, &id);
  GlTexture texture(id);
  glTextureStorage2D(id, 1, GL_RGBA8, width, height);
  glTextureParameteri(id, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(id, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTextureParameteri(id, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(id, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return texture;
}

GlVertexArray make_vertex_array() {
  GLuint id = 0;
  glCreateVertexArrays(1, &id);
  return GlVertexArray(id);
}

GlProgram build_program(const char* vertex_name, const char* fragment_name) {
  const GlShader vs = compile(GL_VERTEX_SHADER, vertex_name);
  const GlShader fs = compile(GL_FRAGMENT_SHADER, fragment_name);
  GlProgram program(glCreateProgram());
  glAttachShader(program.id(), vs.id());
  glAttachShader(program.id(), fs.id());
  glLinkProgram(program.id());
  GLint ok = GL_FALSE;
  glGetProgramiv(program.id(), GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE)
    throw std::runtime_error(std::string("shader program ") + vertex_name + " + " + fragment_name + ": " +
                             info_log(program.id(), true));
  glDetachShader(program.id(), vs.id());
  glDetachShader(program.id(), fs.id());
  return program;
}

}  // namespace mv::gui
