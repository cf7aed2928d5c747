// The grey images behind the gibbs workload's image and volume λ maps (render/lattice/poisson_ising.h,
// LambdaMap::Image and LambdaMap::Volume): a picture's luminance through stb_image, or one slice of a
// NRRD/NIfTI volume through the project's reader (render/field/volume_io.h).
#pragma once

#include <string>

#include "render/lattice/poisson_ising.h"

namespace mv {

/// The luminance of the PNG or JPEG (or any format stb_image reads) at `path`, in [0, 1] (stb's grey
/// conversion (77 R + 150 G + 29 B) / 256 of the stored 8-bit values, divided by 255), row 0 at the top.
/// Throws InputError(path, "--lambda-image", …) for an empty path, a missing file, a directory or a file
/// stb_image cannot decode (its reason is included).
LambdaGrid read_lambda_image(const std::string& path);

/// Slice `index` across index axis `axis` (0: x, 1: y, 2: z — axial for RAS-ordered files such as ch2;
/// −1: the middle slice, n / 2) of the volume `volume` (resolved by default_volume_path: a file, a name
/// under $MEGAVIEW_VOLUMES, or "ch2"), normalised by the slice's own min and max to [0, 1] (a constant
/// slice gives 1 everywhere). The slice's columns run along the lower remaining axis, its rows along the
/// higher one with the last index at the top (axial slices of ch2: anterior up). Throws InputError("",
/// "--volume", …) for a volume that cannot be found or read (with load_volume's message), and
/// InputError("", "--slice", …) naming the allowed range [0, n − 1] (or −1) for an index outside it.
LambdaGrid read_lambda_slice(const std::string& volume, int axis, int index);

}  // namespace mv
