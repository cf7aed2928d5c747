// The volume strand workloads built by name for the strand bench and the CLI: the volume is loaded once
// per process and shared; CPU strategies get a workload over its host samples, GPU strategies one over a
// DeviceVolume uploaded on first use. For app/session/strand_workloads.cu's registry (one line each, with
// the strategy's side: StrategyInfo::side → Side::Device).
#pragma once

#include <cstdint>
#include <string>

#include "app/session/strand_view_params.h"
#include "base/common.h"
#include "base/params.h"
#include "render/field/volume.h"
#include "render/strands/illust_vr.h"
#include "render/strands/ridge3d.h"
#include "render/strands/vr_lite_cam.h"
#include "sched/strand_image.h"
#include "sched/strand_strategy.h"

namespace mv {

/// The view of volume `name` (default_volume_path: a path, $MEGAVIEW_VOLUMES/name…, or "ch2") on `side`.
/// The first call per name loads it (load_volume); the first Side::Device call per name uploads it
/// (DeviceVolume: check_volume_fits(v, true), and std::runtime_error without a GPU). Both stay until the
/// process ends, so the returned reference stays valid. Thread-safe. Throws what those throw.
const VolumeView& shared_volume_view(const std::string& name, Side side);
/// The camera of `view` on ch2: ch2_camera() for the default view (bit for bit today's), else
/// orbit_camera(ch2, view.azimuth_deg, view.elevation_deg, view.distance, kCh2Fov).
/// Throws InputError("view", field, …) for a bad view.
PinholeCamera ch2_view_camera(const VolumeView& ch2, const StrandViewParams& view);

/// The ray casters' own knobs (StrandWorkloadEntry::knobs, app/session/strand_workloads.h): which volume
/// they render, its pre-blur, the reconstruction kernel and the ray step. The defaults are the registry's
/// runs of Lehmann 2023 Appendix A.1/A.2 on ch2.
struct VolumeKnobs {
  std::string volume = "ch2";  ///< a name or file for default_volume_path (.nrrd, .nii, .nii.gz)
  float smooth = 0.f;          ///< Gaussian pre-blur σ in voxels (render/field/volume_filter.h), [0, 16]
  KernelKind kernel = KernelKind::Ctmr;  ///< reconstruction kernel (render/field/kernel.h)
  /// Ray step in voxels, [kMinStrandStepVoxels, 16]: the steps per ray grow as 1 / step, so the bound
  /// keeps the work per strand within 10× the default's.
  float step = 0.5f;
  /// Transfer function: a JSON file of points (render/strands/transfer_function.h parse_tf1d; the presets
  /// assets/tf-ch2-vr-lite.json and assets/tf-ch2-illust.json show the format); empty: the workload's preset.
  std::string tf;
};
/// The smallest ray step the `step` knob takes, in voxels.
inline constexpr double kMinStrandStepVoxels = 0.05;
/// The specs of VolumeKnobs (knobs "volume" (Text), "smooth", "kernel", "step", "tf" (Text)), bound to its fields.
const ParamTable<VolumeKnobs>& volume_knob_table();
/// `defaults` with `values` applied by name (names that are not volume knobs are ignored). Throws
/// InputError("", "--name", …) for a value out of range, and InputError("", "--volume", …) for an empty
/// volume name.
VolumeKnobs volume_knobs(const ParamValues& values, VolumeKnobs defaults = {});

/// The camera of `view` on volume `name`: ch2_view_camera on ch2; on any other volume, orbit_camera with the
/// view's angles at the view's distance, or framing the grid (distance 0) where the view keeps ch2's
/// default distance, which need not suit another volume. Throws InputError("view", field, …).
PinholeCamera volume_view_camera(const VolumeView& volume, const std::string& name, const StrandViewParams& view);

/// A ray caster's knob defaults: ch2 unblurred, with the kernel and step of its Params{} (VrLiteCamParams:
/// ctmr; IllustVrParams: bspln3, since its curvature needs second derivatives; both 0.5 voxel).
template <class Params>
VolumeKnobs volume_knob_defaults() {
  VolumeKnobs k;
  k.kernel = Params{}.kernel;
  k.step = Params{}.step_voxels;
  return k;
}

/// vr-lite-cam with the default parameters (Lehmann 2023 Fig 3.2's 460 × 360 by default) at width × height,
/// over `knobs` (volume_knobs over volume_knob_defaults<VrLiteCamParams>()) on `side`, seen through
/// volume_view_camera(view).
VrLiteCam vr_lite_cam_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view = {},
                               const ParamValues& knobs = {});
/// illust-vr with the default parameters (640 × 480 in the paper) at width × height, over `knobs`
/// (volume_knobs over volume_knob_defaults<IllustVrParams>()) on `side`, seen through volume_view_camera(view).
IllustVr illust_vr_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view = {},
                            const ParamValues& knobs = {});
/// ridge3d on ch2 pre-blurred by kRidge3dCh2Smooth voxels (loaded, blurred and uploaded once per process,
/// like shared_volume_view) with the default parameters: a width × width × (height / width) seed grid (120 × 14400 is
/// Fig 3.2's 120³), the strands laid out as height / width slices of width × width stacked top to bottom,
/// over ch2's samples on `side` (the view is unused: the particles have no camera). Throws
/// InputError("", "--size", …) when height is not a multiple of width.
Ridge3dStrands ridge3d_workload(uint32_t width, uint32_t height, Side side, const StrandViewParams& view = {});
/// Size of ridge3d's splat picture (StrandResult::view_rgba), and the world radius of one particle's disc
/// (mm: ch2's voxels are 1 mm; the default 120³ seeds are ~1.5 mm apart).
inline constexpr uint32_t kRidge3dViewWidth = 800, kRidge3dViewHeight = 600;
inline constexpr float kRidge3dSplatRadius = 0.6f;

/// ridge3d's picture of a run: its converged particles as splats (ridge3d_splats) seen through
/// ch2_view_camera(view) at kRidge3dViewWidth × kRidge3dViewHeight, into r.view_rgba / view_width /
/// view_height. Throws InputError for a bad view.
void add_view_image(const Ridge3dStrands& w, const StrandRun<Ridge3dStrands>& run, const StrandViewParams& view,
                    StrandResult& r);

}  // namespace mv
