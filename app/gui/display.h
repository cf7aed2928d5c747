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
//
// Split view (app/session/split.h, app/gui/panels_split.cpp): a second layer (texture, interop registration, device buffer) holds
// the right session's film, brought up to date through the same paths; draw() with a divider column
// lets the shader take each fragment from the left or the right texture and draw the divider line. The
// single view uses layer 0 only, exactly as before (one texture, one sample a fragment).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/session/session.h"
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

/// Where an image_width × image_height film appears in `area`: centred, scaled to fit, aspect ratio kept
/// (letterboxed), as Display::draw draws it. Fractional pixels are kept (the mouse maps through it).
struct ImageRect {
  float x = 0.f, y = 0.f, width = 0.f, height = 0.f;
};
ImageRect letterbox(const PixelRect& area, int image_width, int image_height);

/// The two layers of the display: the single view's film (and the split view's left side), the right side.
enum class Layer { Left = 0, Right = 1 };

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
  /// `layer` Right is the split view's right session (same film size as the left).
  void update(Session& session, const ToneMapSettings& tm, bool film_changed, Layer layer = Layer::Left);
  /// Shows a host image instead of a film (the strand mode): `rgba` is width × height RGBA8
  /// (R in the low byte, row 0 at the top, as tonemap_to_host writes), uploaded into the left layer's
  /// texture with glTextureSubImage2D like the CPU path's film. The next film update() must pass
  /// film_changed = true to put the film back.
  void show_image(const uint32_t* rgba, int width, int height, const std::string& label);
  /// Clears the framebuffer (fb_width × fb_height pixels) and draws the film centred in `area`, scaled
  /// to fit with its aspect ratio kept (letterboxed). `split_column` ≥ 0: split view, film columns
  /// [0, split_column) from the left layer, the rest from the right layer, with the divider line drawn.
  void draw(int fb_width, int fb_height, const PixelRect& area, int split_column = -1);
  /// The left layer's path and cost (the status bar's); stats(Layer::Right) the right layer's.
  const DisplayStats& stats(Layer layer = Layer::Left) const { return layers_[index(layer)].stats; }
  /// Copy through the host even where interop works (to compare the two paths live).
  void set_force_host_copy(bool force) { force_host_copy_ = force; }
  /// Whether the left layer's texture is registered with CUDA.
  bool interop_active() const { return layers_[0].interop != nullptr; }
  /// Frees the right layer (split view turned off).
  void release_right();

 private:
  /// One film's texture and what fills it.
  struct FilmLayer {
    GlTexture texture;                    // declared before interop: unregistered before it is deleted
    std::unique_ptr<CudaGlImage> interop;
    int width = 0, height = 0;
    DeviceBuffer<uint32_t> d_rgba;
    std::unique_ptr<DeviceTimer> timer;
    std::vector<uint32_t> host_rgba;
    ToneMapSettings last_tm{};
    DisplayStats stats;
  };
  static size_t index(Layer layer) { return static_cast<size_t>(layer); }
  bool ensure_texture(FilmLayer& l, int width, int height, bool want_interop);
  DisplayPath choose_path(const FilmLayer& l, const Session& session) const;
  static void upload_host_pixels(FilmLayer& l);

  GlProgram program_;
  GlVertexArray vertex_array_;
  FilmLayer layers_[2];
  bool force_host_copy_ = false;
  bool interop_logged_ = false;
  std::string interop_failure_;  // why interop failed on this context (tried once; shared by the layers)
};

}  // namespace mv::gui
