// Loading scalar volumes from NRRD (Teem) and NIfTI-1/-2 (nifti2_io) files, finding named volumes, and
// refusing volumes that are malformed, degenerate or would not fit in memory.
//
// Conventions of the loaded mv::Volume (render/field/volume.h):
//  - Samples are float32, x (the file's fastest axis) fastest: value(i, j, k) = data[(k·ny + j)·nx + i].
//    Integer and double samples are converted; NIfTI samples are scaled by scl_slope/scl_inter
//    (value = slope·stored + inter, when slope is finite and non-zero, per the NIfTI-1 standard).
//  - index_to_world maps the index (i, j, k) of a sample's centre to its world position, in the file's
//    length unit (millimetres for every medical file met so far; NIfTI's xyz_units is not converted).
//  - World is RAS+ (x to the subject's Right, y Anterior, z Superior), NIfTI's convention:
//      NIfTI: the sform if sform_code > 0, else the qform if qform_code > 0, else the pixdim scaling
//             diag(pixdim[1..3]) with origin 0 (NIfTI "method 1"; non-positive pixdims read as 1).
//      NRRD:  "space directions" (columns of M) and "space origin" (t). A `space` of
//             left-posterior-superior (DICOM, also scanner-xyz) has x and y negated to give RAS;
//             left-anterior-superior has x negated; right-anterior-superior is kept. Spaces without
//             anatomical meaning (3D-right-handed, 3D-left-handed, or only "space dimension: 3") are
//             taken as they are. Without space directions: diag(spacings) with origin 0; an axis
//             without a spacing gets 1 (unit index space).
//  - Only scalar 3-D volumes are accepted. A 4-D file is accepted when its fourth axis has size 1
//    (NIfTI: dim[4..7] all 1; NRRD: exactly one extra axis, of size 1). Anything else (2-D images,
//    time series, vector- or tensor-valued, complex or RGB samples) is an InputError naming the file
//    and the offending field (`dim[0]`, `dim[5]`, `datatype`, `dimension`, `sizes`, `type`, `data`, ...).
#pragma once

#include <cstdint>
#include <string>

#include "render/field/volume.h"

namespace mv {

/// Largest number of samples along one axis a volume file may declare (a sanity bound: far beyond any
/// volume that fits in memory, small enough that the product of three sizes and the sample size cannot
/// overflow).
inline constexpr int64_t kMaxVolumeSide = int64_t{1} << 20;

/// Reads the scalar volume at `path`: `.nrrd`/`.nhdr` through Teem's nrrdLoad, `.nii`/`.nii.gz` (also
/// `.hdr`/`.img` pairs) through nifti2_io's nifti_image_read (NIfTI-1 and NIfTI-2). The extension
/// decides the reader (case-insensitive). Volume::source is set to `path`.
/// Before the samples are read, the header's size is checked against free host memory
/// (check_volume_fits(v, false)).
/// Throws InputError(path, field, message) for a missing or unreadable file, an unknown extension, a
/// malformed header, truncated data or a volume that is not scalar 3-D; Teem's own error text (biff) and
/// the NIfTI header values involved are included in the message. Fields: "file" (missing, a directory),
/// "extension"; NRRD: "magic" (not starting with NRRD000: Teem alone would also read PNM, VTK and text
/// files), a header field Teem complained about ("sizes", "type", "space directions", ...), "data file"
/// (a detached header's data file cannot be opened), "dimension"/"sizes" (not scalar 3-D), "data"
/// (truncated or undecodable samples); NIfTI: "header" (too short or rejected), "sizeof_hdr", "magic",
/// "dim[0]" … "dim[7]" (including a non-positive size, which nifti_image_read alone would read as 1, and
/// one above kMaxVolumeSide), "dim" (the byte count overflows), "datatype", "pixdim[1]" … "pixdim[3]"
/// (not a finite number > 0), "vox_offset" (not finite, before the header's end in a single file, or
/// past the file's end), "data" (truncated samples); both: "size" (check_volume_fits).
/// Degenerate volumes are refused too: an axis with fewer samples than the smallest kernel support (2, the
/// tent's; render/field/kernel.h) is an InputError naming "sizes" (NRRD) or "dim[i]" (NIfTI).
/// NaN or infinite samples give one warning (spdlog) naming the file and their count; NRRD keeps them (they
/// render as empty space), NIfTI's reader turns them into 0.
Volume load_volume(const std::string& path);

/// Resolves a volume name to a file. In order, the first that exists wins:
///  1. `name` itself, as a path (relative to the working directory or absolute);
///  2. when `name` has no '/': `$MEGAVIEW_VOLUMES/name`, then with `.nrrd`, `.nhdr`, `.nii.gz`, `.nii`
///     appended (MEGAVIEW_VOLUMES is a directory; unset or empty skips this step);
///  3. built-in names: "ch2" → /usr/share/mricron/templates/ch2.nii.gz (Colin27 T1 MRI, 181×217×181
///     at 1 mm, from Debian's mricron-data).
/// Throws InputError(name, "", "no volume found; tried: ...") listing every path tried.
std::string default_volume_path(const std::string& name);

/// Available host memory in bytes: MemAvailable of /proc/meminfo, else sysconf(_SC_AVPHYS_PAGES) pages;
/// infinity when neither can be read.
double host_available_bytes();

/// Refuses a volume that would not fit: throws InputError(v.source, "size", ...) with the volume's size
/// (nx·ny·nz·4 bytes — computed from the dimensions, not from data.size(), so a header-only Volume can
/// be checked before its samples are allocated) and the free memory, both in MiB, when
///  - it exceeds half of the host's available memory (MemAvailable of /proc/meminfo, else
///    sysconf(_SC_AVPHYS_PAGES)), or
///  - `on_device` and a GPU is used (gpu_available()): size + margin exceeds cudaMemGetInfo's free
///    device memory, the margin being max(256 MiB, 5 % of the device's total) kept for films, queues
///    and the CUDA context.
/// Non-positive dimensions are refused too (field "dimensions").
void check_volume_fits(const Volume& v, bool on_device);

}  // namespace mv
