// Display transform: film → 8-bit RGBA, with the optional heat-map overlay of samples per patch.
//
// Modes: `max-to-white` divides by the largest pixel mean in the image (the mapping of Kerbl 2012 §6.3),
// `exposure` multiplies by 2^EV. Then clamp to [0, 1] and encode with 1/gamma (gamma 2.2 by default).
// The heat map colours each patch by spp/target through a perceptual ramp (dark blue → yellow) and
// blends it over the image with the given opacity. The same MV_HD function serves the GPU kernels
// (interop texture, device buffer) and the CPU path, so screenshots equal what is shown.
#pragma once

#include "render/film.h"
#include "render/math.h"

namespace mv {

enum class ToneMapMode : uint32_t { Exposure = 0, MaxToWhite = 1 };

struct ToneMapSettings {
  ToneMapMode mode = ToneMapMode::Exposure;
  float exposure_ev = 0.f;    ///< stops, [-20, 20] (Exposure mode)
  float gamma = 2.2f;         ///< display gamma, [0.1, 10]
  bool heat_map = false;      ///< overlay samples per patch
  float heat_opacity = 0.5f;  ///< [0, 1]
  uint32_t target_spp = 512;  ///< heat-map scale: a finished patch shows the top colour
};

/// Scale applied to linear radiance before clamping; `max_mean` is the image's largest channel mean.
MV_HD MV_INLINE float tonemap_scale(const ToneMapSettings& s, float max_mean) {
  if (s.mode == ToneMapMode::MaxToWhite) return max_mean > 0.f ? 1.f / max_mean : 1.f;
  return exp2f(s.exposure_ev);
}

/// Heat colour for t in [0, 1] (a short piecewise-linear ramp close to "viridis").
MV_HD MV_INLINE Vec3 heat_color(float t) {
  t = fminf(fmaxf(t, 0.f), 1.f);
  const Vec3 c0{0.267f, 0.005f, 0.329f}, c1{0.229f, 0.322f, 0.546f}, c2{0.128f, 0.567f, 0.551f},
      c3{0.369f, 0.789f, 0.383f}, c4{0.993f, 0.906f, 0.144f};
  const float x = t * 4.f;
  if (x < 1.f) return c0 + (c1 - c0) * x;
  if (x < 2.f) return c1 + (c2 - c1) * (x - 1.f);
  if (x < 3.f) return c2 + (c3 - c2) * (x - 2.f);
  return c3 + (c4 - c3) * (x - 3.f);
}

MV_HD MV_INLINE uint32_t pack_rgba8(Vec3 c) {
  const auto q = [](float v) { return static_cast<uint32_t>(fminf(fmaxf(v, 0.f), 1.f) * 255.f + 0.5f); };
  return q(c.x) | (q(c.y) << 8) | (q(c.z) << 16) | (255u << 24);
}

/// Display value of a linear colour already multiplied by tonemap_scale: each channel clamped to [0, 1], then
/// raised to 1/gamma. Returns channels in [0, 1] (a NaN channel becomes 0: fmaxf drops it).
MV_HD MV_INLINE Vec3 tonemap_encode(Vec3 scaled, float gamma) {
  const float inv_g = 1.f / gamma;
  return Vec3{powf(fminf(fmaxf(scaled.x, 0.f), 1.f), inv_g), powf(fminf(fmaxf(scaled.y, 0.f), 1.f), inv_g),
              powf(fminf(fmaxf(scaled.z, 0.f), 1.f), inv_g)};
}

/// Displayed colour of pixel (x, y) as packed RGBA8 (R in the low byte).
MV_HD MV_INLINE uint32_t tonemap_pixel(const FilmView& f, int x, int y, const ToneMapSettings& s, float scale) {
  const uint32_t idx = static_cast<uint32_t>(y * f.grid.width + x);
  Vec3 c = tonemap_encode(f.mean(idx) * scale, s.gamma);
  if (s.heat_map) {
    const float t = static_cast<float>(f.patch_spp[f.grid.patch_of(x, y)]) / static_cast<float>(s.target_spp);
    c = c * (1.f - s.heat_opacity) + heat_color(t) * s.heat_opacity;
  }
  return pack_rgba8(c);
}

/// Heat-map colour alone (for the heat-map capture).
MV_HD MV_INLINE uint32_t heat_pixel(const FilmView& f, int x, int y, uint32_t target_spp) {
  return pack_rgba8(heat_color(static_cast<float>(f.patch_spp[f.grid.patch_of(x, y)]) / static_cast<float>(target_spp)));
}

// ---- drivers ----
/// Largest channel of any pixel mean (host film).
float max_mean_host(const FilmView& host_film);
/// Tone-maps the host film into `rgba` (width × height, row 0 at the top).
void tonemap_host(const FilmView& host_film, const ToneMapSettings& s, uint32_t* rgba);
/// Heat map of the host film into `rgba`.
void heatmap_host(const FilmView& host_film, uint32_t target_spp, uint32_t* rgba);
/// Tone-maps the device film into a device RGBA8 buffer. `scratch` holds one float (the max reduction).
void tonemap_device(const FilmView& device_film, const ToneMapSettings& s, uint32_t* d_rgba, float* d_scratch,
                    cudaStream_t stream = nullptr);

}  // namespace mv
