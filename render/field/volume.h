// A scalar volume on a regular grid with its index ↔ world transform (Lehmann 2023 §2: Diderot's
// images; the field is the volume convolved with a reconstruction kernel, render/field/field.h).
//
// Samples are float32, x fastest: value(i, j, k) = data[(k·ny + j)·nx + i]. Index space puts sample
// (i, j, k) at integer coordinates; world = M·index + t with M the 3×3 matrix whose columns are the
// axis directions scaled by the spacings (from the file's space directions / NIfTI sform or qform).
#pragma once

#include <string>
#include <vector>

#include "render/math.h"

namespace mv {

/// World = m · index + origin (m row-major).
struct Affine3 {
  float m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  Vec3 origin{0.f};
  MV_HD Vec3 apply(Vec3 p) const {
    return {m[0] * p.x + m[1] * p.y + m[2] * p.z + origin.x, m[3] * p.x + m[4] * p.y + m[5] * p.z + origin.y,
            m[6] * p.x + m[7] * p.y + m[8] * p.z + origin.z};
  }
  /// The linear part alone (for directions and gradients).
  MV_HD Vec3 linear(Vec3 v) const {
    return {m[0] * v.x + m[1] * v.y + m[2] * v.z, m[3] * v.x + m[4] * v.y + m[5] * v.z,
            m[6] * v.x + m[7] * v.y + m[8] * v.z};
  }
  /// det(m): the signed volume of one index cell in world units (zero: a degenerate transform).
  MV_HD float determinant() const {
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
  }
  /// The inverse transform (index = m⁻¹·(world − origin)), by cofactors. The caller checks that
  /// determinant() is not zero (make_view does, render/field/volume.cpp).
  MV_HD Affine3 inverse() const {
    const float inv_det = 1.f / determinant();
    Affine3 r;
    r.m[0] = (m[4] * m[8] - m[5] * m[7]) * inv_det;
    r.m[1] = (m[2] * m[7] - m[1] * m[8]) * inv_det;
    r.m[2] = (m[1] * m[5] - m[2] * m[4]) * inv_det;
    r.m[3] = (m[5] * m[6] - m[3] * m[8]) * inv_det;
    r.m[4] = (m[0] * m[8] - m[2] * m[6]) * inv_det;
    r.m[5] = (m[2] * m[3] - m[0] * m[5]) * inv_det;
    r.m[6] = (m[3] * m[7] - m[4] * m[6]) * inv_det;
    r.m[7] = (m[1] * m[6] - m[0] * m[7]) * inv_det;
    r.m[8] = (m[0] * m[4] - m[1] * m[3]) * inv_det;
    r.origin = -r.linear(origin);
    return r;
  }
};

/// Trivially copyable view of a volume (host or device data pointer).
struct VolumeView {
  const float* data = nullptr;
  /// The file the samples came from (Volume::source), for messages; null when unknown. Lives as long as
  /// the Volume, like `data`.
  const char* source = nullptr;
  int nx = 0, ny = 0, nz = 0;
  Affine3 index_to_world;
  Affine3 world_to_index;  ///< inverse of index_to_world
  MV_HD float at(int i, int j, int k) const { return data[(static_cast<size_t>(k) * ny + j) * nx + i]; }
};

/// A volume on the host.
struct Volume {
  std::string source;  ///< file it came from, or a description for analytic volumes
  int nx = 0, ny = 0, nz = 0;
  std::vector<float> data;  ///< nx·ny·nz samples, x fastest
  Affine3 index_to_world;
  size_t bytes() const { return data.size() * sizeof(float); }
};

/// A host view of `v` (data = v.data.data()), with world_to_index = index_to_world.inverse().
/// Throws InputError(v.source, ...) when the sizes do not match the data or the transform is singular
/// or not finite. Defined in render/field/volume.cpp.
VolumeView make_view(const Volume& v);

}  // namespace mv
