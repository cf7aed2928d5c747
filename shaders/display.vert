#version 450 core
// Film display, vertex stage: a quad drawn as a 4-vertex triangle strip without vertex buffers,
// centred in the viewport and scaled by u_half_extent so the film keeps its aspect ratio (letterboxed).
// The film's row 0 is the top row of the image and the first row of the texture (t = 0).

layout(location = 0) uniform vec2 u_half_extent;  // half width and height of the image in NDC, each <= 1

out vec2 v_uv;

void main() {
  const vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));  // (0,0) (1,0) (0,1) (1,1)
  v_uv = vec2(corner.x, 1.0 - corner.y);
  gl_Position = vec4((2.0 * corner - 1.0) * u_half_extent, 0.0, 1.0);
}
