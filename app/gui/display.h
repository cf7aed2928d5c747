// The film on screen: tone map (CUDA or CPU) → RGBA8 GL texture → letterboxed quad (shaders/display.*).
//
// The path is chosen every update from what the session and the GL context allow:
//   GPU · interop    the device film is tone-mapped into a device buffer (Session::tonemap_to_device) and
//                    copied into the texture through CUDA-GL interop: map, mapped array,
//                    cudaMemcpy2DToArray device → array, unmap. No host round trip.
//   GPU · host copy  the same device tone map, downloaded to the host and uploaded with
//                    glTextureSubImage2D: when the GL context cannot be registered with CUDA (Mesa/llvmpipe,
//                    a remote X server) or when forced for comparison.
//   CPU · <reason>   the film lives on the host (no CUDA device in use, or a CPU strategy is active):
//                    Session::tonemap_to_host, then glTextureSubImage2D.
// Tone mapping (and the heat-map overlay) stays in render/tonemap.h, shared with captures; the shader only
// samples and letterboxes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/core/session.h"
#include "app/gui/cuda_gl_image.h"
#include "app/gui/device_timer.h"
#include "app/gui/gl_resources.h"
#include "base/device_buffer.h"

namespace mv::gui {

enum class DisplayPath { Interop, HostCopy, Cpu };

/// What the display path costs, for the status bar and for benchmarks (read through Display::stats()).
struct DisplayStats {
  DisplayPath path = DisplayPath::Cpu;
  std::string label;            ///< status-bar text: "GPU · interop", "GPU · host copy" or "CPU · <reason>"
  std::string interop_failure;  ///< why CUDA-GL interop is unavailable (empty if it works or was not tried)
  double update_ms = 0.0;       ///< CPU wall clock of the last update: tone map + copy into the texture
  double device_ms = 0.0;       ///< CUDA-event time of the last update's device part (0 on the CPU path)
  double draw_ms = 0.0;         ///< CPU wall clock of the last draw (clear + quad submission)
  uint64_t updates = 0;         ///< updates so far (frames whose film reached the texture)
  double total_update_ms = 0.0; ///< sum of update_ms over all updates (mean = total / updates)
  double total_device_ms = 0.0; ///< sum of device_ms over all updates

  double mean_update_ms() const { return updates ? total_update_ms / static_cast<double>(updates) : 0.0; }
  double mean_device_ms() const { return updates ? total_device_ms / static_cast<double>(updates) : 0.0; }
};

/// A rectangle in framebuffer pixels, origin at the bottom left (GL convention).
struct PixelRect {
  int x = 0, y = 0, width = 0, height = 0;
};

/// Owns the display texture, its interop registration, the device RGBA8 buffer and the shader program.
/// Needs a current GL 4.5 context for its whole life. Not copyable.
class Display {
 public:
  /// Builds the shader program; throws std::runtime_error if it does not compile.
  Display();
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

  /// Brings the texture up to date with `session`'s film under `tm`. Skips the work when nothing the
  /// picture depends on changed: the film (`film_changed`), `tm`, the size or the path. Throws what the
  /// Session and CUDA calls throw (CudaError, InputError).
  void update(Session& session, const ToneMapSettings& tm, bool film_changed);
  /// Clears the framebuffer (fb_width × fb_height pixels) and draws the film centred in `area`, scaled
  /// to fit with its aspect ratio kept (letterboxed).
  void draw(int fb_width, int fb_height, const PixelRect& area);
  const DisplayStats& stats() const { return stats_; }
  /// Copy through the host even where interop works (to compare the two paths live).
  void set_force_host_copy(bool force) { force_host_copy_ = force; }
  /// Whether the current texture is registered with CUDA.
  bool interop_active() const { return interop_ != nullptr; }

 private:
  bool ensure_texture(int width, int height, bool want_interop);
  DisplayPath choose_path(const Session& session) const;
  void upload_host_pixels();

  GlProgram program_;
  GlVertexArray vertex_array_;
  GlTexture texture_;                   // declared before interop_: unregistered before it is deleted
  std::unique_ptr<CudaGlImage> interop_;
  int tex_width_ = 0, tex_height_ = 0;
  bool force_host_copy_ = false;
  bool interop_logged_ = false;
  DeviceBuffer<uint32_t> d_rgba_;
  std::unique_ptr<DeviceTimer> timer_;
  std::vector<uint32_t> host_rgba_;
  ToneMapSettings last_tm_{};
  DisplayStats stats_;
};

}  // namespace mv::gui
