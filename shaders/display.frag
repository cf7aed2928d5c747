#version 450 core
// Film display, fragment stage: samples the RGBA8 texture that CUDA (or the host) filled with the
// tone-mapped film. Tone mapping and the heat-map overlay happen before, in render/tonemap.h, so the
// window shows exactly what screenshots save.

layout(binding = 0) uniform sampler2D u_film;

in vec2 v_uv;
layout(location = 0) out vec4 o_color;

void main() {
  o_color = vec4(texture(u_film, v_uv).rgb, 1.0);
}
