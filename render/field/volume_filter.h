// Pre-filtering a volume before it is probed (illust-vr): a separable Gaussian blur. Curvature
// is a second-derivative measure, so measurement noise in MRI (ch2) shows as speckled curvature classes;
// blurring by about one voxel first, as Kindlmann et al. 2003 §3 recommend (filtered reconstruction for
// derivatives), keeps the shapes and removes the speckle. Host only.
#pragma once

#include "render/field/volume.h"

namespace mv {

/// `v` convolved with a Gaussian of standard deviation `sigma_voxels` along each index axis (truncated at
/// ±ceil(3σ) samples and renormalised; borders replicated), same grid and transform. sigma 0 returns a
/// copy. Source gets " (gaussian σ=…)" appended. Throws InputError(v.source, "smooth", …) for σ outside
/// [0, 16] and whatever make_view(v) throws for a malformed volume.
Volume smooth_volume(const Volume& v, float sigma_voxels);

}  // namespace mv
