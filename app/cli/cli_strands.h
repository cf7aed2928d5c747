// `megaview strands`: a headless look at a strand workload (render/strands/): runs every strand to
// completion on the CPU (run_item per pixel under TBB; the reference every strand strategy must agree
// with), writes the image as a PNG (never over an existing file) and prints the step statistics of
// Lehmann 2023 Fig 3.2 (count, μ, σ, CV = σ/μ, min, max).
#pragma once

#include <string>

#include "render/strands/volume_ray.h"

namespace mv {

/// The smallest ray step `megaview strands --step` takes, in voxels: the steps per ray grow as 1 / step,
/// so this bounds the work per strand at 10 times that of the default step 0.5.
inline constexpr double kMinStrandStepVoxels = 0.05;

/// The workloads `megaview strands` runs: the two ray casters (with the volume and camera options),
/// mandelbrot, lic2d and ridge3d (its image: the converged particles as splats through ch2's default view).
inline constexpr const char* kStrandsCommandWorkloads = "vr-lite-cam, illust-vr, mandelbrot, lic2d, ridge3d";

struct StrandsCommand {
  std::string workload = "vr-lite-cam";  ///< one of kStrandsCommandWorkloads
  std::string volume = "ch2";            ///< a name or path for default_volume_path (volume workloads)
  std::string size;                      ///< "WxH"; empty: the workload's (Fig 3.2's strand count)
  std::string kernel;                    ///< tent, ctmr or bspln3; empty: the workload's
  float step_voxels = 0.f;               ///< [kMinStrandStepVoxels, 16]: ray step in voxels; 0: the workload's (0.5)
  /// The camera: orbit_camera(volume, azimuth, elevation, distance) (render/strands/volume_ray.h).
  float azimuth = kCh2Azimuth, elevation = kCh2Elevation;  ///< degrees
  float distance = 0.f;  ///< world units; 0: kCh2Distance for ch2 (= ch2_camera()), else framing the grid
  float smooth = 0.f;                    ///< Gaussian pre-blur σ in voxels (render/field/volume_filter.h), [0, 16]
  std::string out;                       ///< F.png (required)
};

/// Throws InputError for a bad size, workload, kernel, step, camera, volume, an output path that cannot
/// be written or already exists (checked before any work), or strands that would not fit in host memory.
/// Progress on stderr (app/cli/progress.h) while the strands run.
void run_strands(const StrandsCommand& c);

}  // namespace mv
