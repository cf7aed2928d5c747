#version 450 core
// Film display, fragment stage: samples the RGBA8 texture that CUDA (or the host) filled with the
// tone-mapped film. Tone mapping and the heat-map overlay happen before, in render/tonemap.h, so the
// window shows exactly what screenshots save.
//
// Split view (Kerbl 2012 Fig 8, app/session/split.h): film columns [0, u_split_column) come from u_film
// (the left session), the others from u_film_right (the right session, same size), and a thin amber
// line about two screen pixels wide marks the divider. u_split_column < 0: single view, u_film only.

layout(binding = 0) uniform sampler2D u_film;
layout(binding = 1) uniform sampler2D u_film_right;
layout(location = 1) uniform int u_split_column;  // first film column of the right session; < 0: no split

in vec2 v_uv;
layout(location = 0) out vec4 o_color;

const vec3 kDividerColor = vec3(1.0, 0.78, 0.0);

void main() {
  if (u_split_column < 0) {
    o_color = vec4(texture(u_film, v_uv).rgb, 1.0);
    return;
  }
  const float x = v_uv.x * float(textureSize(u_film, 0).x);  // film column, fractional
  const float texels_per_pixel = max(fwidth(x), 1e-6);
  const float column = float(u_split_column);
  vec3 c = x < column ? texture(u_film, v_uv).rgb : texture(u_film_right, v_uv).rgb;
  if (abs(x - column) < texels_per_pixel) c = kDividerColor;
  o_color = vec4(c, 1.0);
}
