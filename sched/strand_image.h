// The image of a strand run and the workload-independent result the bench and the tests compare.
//
// The image is composed on the host from the final strand states, for every strategy alike: strand i
// writes color(state_i, status_i) at pixel(i) (row-major) unless it died. Colouring on the host keeps
// the comparison between strategies about the strand arithmetic: color() may use math-library functions
// (log2f, cosf) whose CPU and GPU implementations round differently, while the states themselves must
// agree bit for bit. It also keeps colouring out of every strategy's timed region.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/strand_stats.h"
#include "sched/strand_strategy.h"

namespace mv {

/// RGBA of pixels that no strand writes and of dead strands' pixels (Diderot's `die` drops the output).
inline constexpr float kStrandBackground[4] = {0.f, 0.f, 0.f, 0.f};

/// A run without its workload-specific states: what the bench prints and the tests compare.
struct StrandResult {
  uint32_t width = 0, height = 0;
  std::vector<float> rgba;           ///< width × height × 4 floats, row 0 at the top; alpha 1 where a strand wrote
  std::vector<WorkStatus> status;  ///< per strand, index order
  std::vector<uint32_t> steps;       ///< per strand update calls
  std::vector<uint32_t> finish_order;///< per strand place in the finishing order (recorded runs only)
  /// Per strand, the pixel it writes (W::pixel), when that is not strand i → pixel i for every strand (e.g.
  /// path-tracer's patch-major order); empty for the identity. Filled with the image (finish_strand_run).
  std::vector<uint32_t> pixel;
  /// A workload's own picture of the result where one pixel per strand is not one (ridge3d: its converged
  /// particles as splats seen through the run's view): view_width × view_height × 4 floats, row 0 at the top;
  /// empty for the workloads whose strands are pixels. The viewer shows it instead of `rgba`.
  std::vector<float> view_rgba;
  uint32_t view_width = 0, view_height = 0;
  StrandTimings timing;

  /// FNV-1a 64 of the float RGBA bytes: equal images ⇔ equal checksums (up to collisions).
  uint64_t checksum() const { return fnv1a64(rgba.data(), rgba.size() * sizeof(float)); }
};

/// How closely two runs of one workload must agree (bitwise for mandelbrot, within a stated
/// tolerance for the volume renderers, whose probes nvcc and the host compiler contract into FMAs
/// differently, so a ray's opacity can cross the termination threshold one or two steps apart).
struct StrandTolerance {
  bool exact = true;              ///< true: identical statuses, step counts and image bytes
  uint32_t max_step_diff = 2;     ///< |Δsteps| of any strand
  double min_same_steps = 0.995;  ///< share of strands with identical step counts and status
  float pixel_tol = 2e-3f;        ///< per-channel |Δ| that counts a pixel as matching
  double min_close_pixels = 0.995;///< share of pixels within pixel_tol
  float max_pixel_diff = 0.1f;    ///< per-channel |Δ| no pixel may exceed
};

/// Empty if `r` agrees with `ref` under `tol`; otherwise what differs (for the bench's error line). The
/// images are compared only when both have one and `compare_images`.
inline std::string strand_disagreement(const StrandResult& ref, const StrandResult& r, const StrandTolerance& tol,
                                       bool compare_images = true) {
  if (ref.steps.size() != r.steps.size() || ref.status.size() != r.status.size()) return "strand counts differ";
  size_t same = 0;
  uint32_t worst = 0;
  for (size_t i = 0; i < ref.steps.size(); ++i) {
    const uint32_t d = ref.steps[i] > r.steps[i] ? ref.steps[i] - r.steps[i] : r.steps[i] - ref.steps[i];
    worst = d > worst ? d : worst;
    same += d == 0 && ref.status[i] == r.status[i];
  }
  const bool images = compare_images && !ref.rgba.empty() && !r.rgba.empty();
  if (tol.exact) {
    if (same != ref.steps.size()) return "step counts differ";
    if (images && ref.checksum() != r.checksum()) return "image differs";
    return {};
  }
  const double n = ref.steps.empty() ? 1.0 : static_cast<double>(ref.steps.size());
  if (worst > tol.max_step_diff || same < tol.min_same_steps * n)
    return "step counts differ beyond tolerance (max |Δ| " + std::to_string(worst) + ", " +
           std::to_string(100.0 * same / n) + " % identical)";
  if (!images) return {};
  if (ref.rgba.size() != r.rgba.size()) return "image sizes differ";
  size_t close = 0;
  float max_diff = 0.f;
  for (size_t p = 0; p < ref.rgba.size() / 4; ++p) {
    float d = 0.f;
    for (int c = 0; c < 4; ++c) {
      const float e = ref.rgba[4 * p + c] > r.rgba[4 * p + c] ? ref.rgba[4 * p + c] - r.rgba[4 * p + c]
                                                              : r.rgba[4 * p + c] - ref.rgba[4 * p + c];
      d = e > d ? e : d;
    }
    max_diff = d > max_diff ? d : max_diff;
    close += d <= tol.pixel_tol;
  }
  const double pixels = static_cast<double>(ref.rgba.size() / 4);
  if (max_diff > tol.max_pixel_diff || close < tol.min_close_pixels * pixels)
    return "image differs beyond tolerance (max |Δ| " + std::to_string(max_diff) + ", " +
           std::to_string(100.0 * close / pixels) + " % of pixels within " + std::to_string(tol.pixel_tol) + ")";
  return {};
}

/// Colours the strands of `run` into a width × height RGBA image. Throws std::out_of_range if a strand's
/// pixel() is outside the image (a workload bug).
template <class W>
std::vector<float> strand_image(const W& w, const StrandRun<W>& run, uint32_t width, uint32_t height) {
  const size_t pixels = static_cast<size_t>(width) * height;
  std::vector<float> rgba(pixels * 4);
  for (size_t p = 0; p < pixels; ++p)
    for (int c = 0; c < 4; ++c) rgba[4 * p + c] = kStrandBackground[c];
  for (uint32_t i = 0; i < static_cast<uint32_t>(run.status.size()); ++i) {
    const uint32_t p = w.pixel(i);
    if (p >= pixels)
      throw std::out_of_range("strand " + std::to_string(i) + " writes pixel " + std::to_string(p) +
                              " outside the " + std::to_string(width) + "x" + std::to_string(height) + " image");
    if (run.status[i] == WorkStatus::Dead) continue;
    const auto c = w.color(run.state[i], run.status[i]);
    float* o = &rgba[4 * static_cast<size_t>(p)];
    o[0] = c.x;
    o[1] = c.y;
    o[2] = c.z;
    o[3] = 1.f;
  }
  return rgba;
}

/// Moves `run`'s per-strand arrays into a StrandResult with its image.
template <class W>
StrandResult finish_strand_run(const W& w, StrandRun<W>&& run, uint32_t width, uint32_t height) {
  StrandResult r;
  r.width = width;
  r.height = height;
  r.rgba = strand_image(w, run, width, height);
  const uint32_t n = static_cast<uint32_t>(run.status.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (w.pixel(i) == i) continue;
    r.pixel.resize(n);  // not the identity: keep the whole map
    for (uint32_t j = 0; j < n; ++j) r.pixel[j] = w.pixel(j);
    break;
  }
  r.status = std::move(run.status);
  r.steps = std::move(run.steps);
  r.finish_order = std::move(run.finish_order);
  r.timing = std::move(run.timing);
  return r;
}

/// Packs float RGBA into RGBA8 (R in the low byte) for write_png: each channel clamped to [0, 1] and
/// rounded to the nearest of 0..255.
inline std::vector<uint32_t> rgba8(const std::vector<float>& rgba) {
  std::vector<uint32_t> out(rgba.size() / 4);
  auto q = [](float v) -> uint32_t {
    const float c = v > 0.f ? (v < 1.f ? v : 1.f) : 0.f;  // NaN → 0
    return static_cast<uint32_t>(c * 255.f + 0.5f);
  };
  for (size_t p = 0; p < out.size(); ++p)
    out[p] = q(rgba[4 * p]) | (q(rgba[4 * p + 1]) << 8) | (q(rgba[4 * p + 2]) << 16) | (q(rgba[4 * p + 3]) << 24);
  return out;
}

}  // namespace mv
