#include "render/field/volume_io.h"

#include <cuda_runtime.h>
#include <nifti2_io.h>
#include <spdlog/spdlog.h>
#include <teem/biff.h>
#include <teem/nrrd.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/errors.h"
#include "render/field/kernel.h"
#include "render/gpu.h"

namespace mv {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

std::string dims_str(int nx, int ny, int nz) {
  return std::to_string(nx) + "×" + std::to_string(ny) + "×" + std::to_string(nz);
}

/// Throws InputError(path, "file", ...) unless `path` names an existing regular file.
void require_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, "file", "no such file");
  if (fs::is_directory(st)) throw InputError(path, "file", "is a directory, not a volume file");
}

/// Smallest number of samples per axis any reconstruction kernel can work with: tent's support, 2·R.
constexpr int64_t kMinSamplesPerAxis = 2 * kernel_radius(KernelKind::Tent);

/// Refuses an axis with fewer samples than kMinSamplesPerAxis (a 1-sample axis has no extent to sample)
/// or more than kMaxVolumeSide, naming `field`.
void check_axis_size(const std::string& path, const std::string& field, const std::string& what, int64_t size) {
  if (size < kMinSamplesPerAxis)
    throw InputError(path, field,
                     what + "is " + std::to_string(size) + ": a degenerate volume; every axis needs at least " +
                         std::to_string(kMinSamplesPerAxis) + " samples (the support of the tent kernel; ctmr and "
                         "bspln3 need " + std::to_string(2 * kMaxKernelRadius) + ")");
  if (size > kMaxVolumeSide)
    throw InputError(path, field,
                     what + "is " + std::to_string(size) + ", out of range [" + std::to_string(kMinSamplesPerAxis) + ", " +
                         std::to_string(kMaxVolumeSide) + "] samples per axis");
}

/// Logs one warning when samples are NaN or infinite (they render as nothing, or poison a kernel's
/// neighbourhood), with their count.
void warn_non_finite(const std::string& path, const std::vector<float>& data) {
  size_t bad = 0;
  for (float x : data) bad += !std::isfinite(x);
  if (bad > 0)
    spdlog::warn("{}: data: {} of {} samples are not finite (NaN or infinite); they render as empty space", path,
                 bad, data.size());
}

// ---------------------------------------------------------------------------------------------------
// NRRD (Teem)

struct NrrdDeleter {
  void operator()(Nrrd* n) const { nrrdNuke(n); }
};
struct NioDeleter {
  void operator()(NrrdIoState* n) const { nrrdIoStateNix(n); }
};
using NrrdPtr = std::unique_ptr<Nrrd, NrrdDeleter>;

/// Teem's accumulated error text for NRRD (biffGetDone frees Teem's copy; we free the string).
std::string take_biff() {
  char* err = biffGetDone(NRRD);
  if (!err) return "";
  std::string s(err);
  std::free(err);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

/// Guesses which header field Teem's error text is about, so the InputError names it.
std::string nrrd_field_from_biff(const std::string& err) {
  // Field parse errors read: ... trouble parsing <field> info "<line>" / trouble parsing field "<field>".
  static const char* const fields[] = {"space directions", "space origin", "space dimension", "space units",
                                       "measurement frame", "sizes", "spacings", "dimension", "encoding",
                                       "endian", "data file", "byte skip", "line skip", "kinds", "type",
                                       "centers", "thicknesses", "axis mins", "axis maxs", "space"};
  const std::string l = lower(err);
  if (l.find("magic") != std::string::npos) return "magic";
  // A detached header whose data file is missing: "couldn't open "x.raw" (data file 1 of 1)".
  if (l.find("couldn't open") != std::string::npos &&
      (l.find("data file") != std::string::npos || l.find("datafile") != std::string::npos))
    return "data file";
  for (const char* f : fields) {
    const std::string key(f);
    for (const std::string& pat : {"parsing " + key, "\"" + key + "\"", key + ":", "_nrrdreadnrrdparse_" + key}) {
      if (l.find(pat) != std::string::npos) return key;
    }
  }
  if (l.find("fread") != std::string::npos || l.find("_read: ") != std::string::npos ||
      l.find("data") != std::string::npos || l.find("gz") != std::string::npos)
    return "data";
  return "header";
}

Affine3 nrrd_transform(const std::string& path, const Nrrd* n, const unsigned axes[3]) {
  Affine3 a;
  if (n->spaceDim > 0) {
    if (n->spaceDim != 3) {
      throw InputError(path, "space dimension",
                       std::to_string(n->spaceDim) + "-D world space" +
                           (n->space ? std::string(" (") + airEnumStr(nrrdSpace, n->space) + ")" : std::string()) +
                           "; a 3-D space is needed");
    }
    for (int c = 0; c < 3; ++c) {
      const double* d = n->axis[axes[c]].spaceDirection;
      if (!std::isfinite(d[0]) || !std::isfinite(d[1]) || !std::isfinite(d[2])) {
        throw InputError(path, "space directions",
                         "spatial axis " + std::to_string(axes[c]) + " has no direction (\"none\")");
      }
      for (int r = 0; r < 3; ++r) a.m[r * 3 + c] = static_cast<float>(d[r]);
    }
    double o[3];
    for (int r = 0; r < 3; ++r) o[r] = std::isfinite(n->spaceOrigin[r]) ? n->spaceOrigin[r] : 0.0;
    a.origin = {static_cast<float>(o[0]), static_cast<float>(o[1]), static_cast<float>(o[2])};
    // To RAS+: LPS (DICOM; scanner-xyz coincides with it for a supine head-first patient) flips x and y,
    // LAS flips x. Other spaces are taken as given.
    bool flip_x = false, flip_y = false;
    if (n->space == nrrdSpaceLeftPosteriorSuperior || n->space == nrrdSpaceScannerXYZ) flip_x = flip_y = true;
    if (n->space == nrrdSpaceLeftAnteriorSuperior) flip_x = true;
    for (int r = 0; r < 2; ++r) {
      if ((r == 0 && !flip_x) || (r == 1 && !flip_y)) continue;
      for (int c = 0; c < 3; ++c) a.m[r * 3 + c] = -a.m[r * 3 + c];
      a.origin[r] = -a.origin[r];
    }
    return a;
  }
  for (int c = 0; c < 3; ++c) {
    const double s = n->axis[axes[c]].spacing;
    a.m[c * 3 + c] = (std::isfinite(s) && s != 0.0) ? static_cast<float>(s) : 1.f;
  }
  return a;
}

/// Throws InputError(path, "magic", ...) unless the file starts with NRRD's magic "NRRD000" (Teem's
/// nrrdLoad would also read PNM, VTK and plain-text files, which a .nrrd/.nhdr name does not promise).
void require_nrrd_magic(const std::string& path) {
  char buf[8] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(buf, sizeof buf);
  const std::streamsize got = f.gcount();
  if (got >= 7 && std::memcmp(buf, "NRRD000", 7) == 0) return;
  std::string shown;
  for (std::streamsize i = 0; i < got; ++i) {
    const unsigned char c = static_cast<unsigned char>(buf[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      shown += esc;
    }
  }
  throw InputError(path, "magic", "not a NRRD file: it starts with \"" + shown + "\", not \"NRRD000\"");
}

Volume load_nrrd(const std::string& path) {
  require_nrrd_magic(path);
  // Header first (no samples read), so a malformed or oversized file is refused before allocating.
  // (Teem still opens a detached header's data file, so a missing one is reported here.)
  NrrdPtr hdr(nrrdNew());
  {
    std::unique_ptr<NrrdIoState, NioDeleter> nio(nrrdIoStateNew());
    nrrdIoStateSet(nio.get(), nrrdIoStateSkipData, AIR_TRUE);
    if (nrrdLoad(hdr.get(), path.c_str(), nio.get())) {
      const std::string err = take_biff();
      const std::string field = nrrd_field_from_biff(err);
      throw InputError(path, field,
                       (field == "data file" ? "cannot open the data file the header names (Teem: "
                                             : "not a readable NRRD header (Teem: ") +
                           err + ")");
    }
  }
  const Nrrd* h = hdr.get();
  std::ostringstream sizes;
  for (unsigned a = 0; a < h->dim; ++a) sizes << (a ? " " : "") << h->axis[a].size;
  unsigned axes[3] = {0, 1, 2};
  if (h->dim == 4) {
    // Accept one extra axis of size 1 (e.g. a single time step or a stub component axis).
    int drop = -1;
    for (int a = 3; a >= 0; --a) {
      if (h->axis[a].size != 1) continue;
      const bool spatial = h->spaceDim > 0 && std::isfinite(h->axis[a].spaceDirection[0]);
      if (drop < 0 || !spatial) drop = a;
      if (!spatial) break;
    }
    if (drop < 0) {
      std::string what = "a 4-D array (time series or multi-component samples)";
      for (unsigned a = 0; a < 4; ++a) {
        const int kind = h->axis[a].kind;
        if (kind != nrrdKindUnknown && kind != nrrdKindDomain && kind != nrrdKindSpace && kind != nrrdKindTime)
          what = std::string("vector-valued (axis ") + std::to_string(a) + " is " + airEnumStr(nrrdKind, kind) + ")";
      }
      throw InputError(path, "sizes",
                       "sizes " + sizes.str() + ": " + what + "; megaview needs a scalar 3-D volume");
    }
    for (unsigned a = 0, o = 0; a < 4; ++a)
      if (static_cast<int>(a) != drop) axes[o++] = a;
  } else if (h->dim != 3) {
    throw InputError(path, "dimension",
                     std::to_string(h->dim) + "-D array (sizes " + sizes.str() + "); megaview needs a scalar 3-D volume");
  }
  if (h->type <= nrrdTypeUnknown || h->type >= nrrdTypeBlock) {
    throw InputError(path, "type",
                     std::string("sample type \"") + airEnumStr(nrrdType, h->type) + "\" is not a numeric scalar");
  }
  for (int c = 0; c < 3; ++c) {
    const size_t n = h->axis[axes[c]].size;
    check_axis_size(path, "sizes", "axis " + std::to_string(axes[c]) + " of \"" + sizes.str() + "\" ",
                    n > static_cast<size_t>(kMaxVolumeSide) ? kMaxVolumeSide + 1 : static_cast<int64_t>(n));
  }

  Volume v;
  v.source = path;
  v.nx = static_cast<int>(h->axis[axes[0]].size);
  v.ny = static_cast<int>(h->axis[axes[1]].size);
  v.nz = static_cast<int>(h->axis[axes[2]].size);
  v.index_to_world = nrrd_transform(path, h, axes);
  check_volume_fits(v, false);

  NrrdPtr full(nrrdNew());
  if (nrrdLoad(full.get(), path.c_str(), nullptr)) {
    const std::string err = take_biff();
    const std::string field = nrrd_field_from_biff(err);
    throw InputError(path, field == "header" ? "data" : field,
                     "cannot read the " + dims_str(v.nx, v.ny, v.nz) + " " + airEnumStr(nrrdType, h->type) +
                         " samples (Teem: " + err + ")");
  }
  const size_t count = static_cast<size_t>(v.nx) * v.ny * v.nz;
  if (nrrdElementNumber(full.get()) != count || full->type != h->type) {
    throw InputError(path, "sizes", "header changed between reads");  // a file rewritten while loading
  }
  v.data.resize(count);
  double (*lookup)(const void*, size_t) = nrrdDLookup[full->type];
  if (full->type == nrrdTypeFloat) {
    std::memcpy(v.data.data(), full->data, count * sizeof(float));
  } else {
    for (size_t i = 0; i < count; ++i) v.data[i] = static_cast<float>(lookup(full->data, i));
  }
  warn_non_finite(path, v.data);
  return v;
}

// ---------------------------------------------------------------------------------------------------
// NIfTI-1 / NIfTI-2 (nifti2_io)

struct NimDeleter {
  void operator()(nifti_image* n) const { nifti_image_free(n); }
};
using NimPtr = std::unique_ptr<nifti_image, NimDeleter>;

/// The first (up to) 540 bytes of a NIfTI header file, uncompressed (gzread also reads plain files);
/// returns how many were read.
int read_header_bytes(const std::string& path, unsigned char (&buf)[540]) {
  std::memset(buf, 0, sizeof buf);
  int got = 0;
  if (gzFile f = gzopen(path.c_str(), "rb")) {
    got = gzread(f, buf, sizeof buf);
    gzclose(f);
  }
  return std::max(got, 0);
}

/// The fields of a raw NIfTI-1 or NIfTI-2 header (either byte order) that are range-checked before
/// nifti_image_read sees them; parse_raw_nifti returns false when the bytes are not one.
struct RawNiftiHeader {
  int version = 1;          ///< 1 or 2
  int sizeof_hdr = 348;     ///< 348 or 540
  bool single_file = true;  ///< magic "n+1"/"n+2" (samples in the same file) rather than "ni1"/"ni2" (.hdr/.img)
  int64_t dim[8] = {};
  int datatype = 0;
  double pixdim[8] = {};
  double vox_offset = 0.0;
};
bool parse_raw_nifti(const unsigned char (&buf)[540], int got, RawNiftiHeader& h) {
  int32_t size = 0;
  std::memcpy(&size, buf, 4);
  const bool swap = size != 348 && size != 540;
  if (swap) size = static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(size)));
  auto i16 = [&](int off) {
    uint16_t v;
    std::memcpy(&v, buf + off, 2);
    return static_cast<int16_t>(swap ? __builtin_bswap16(v) : v);
  };
  auto f32 = [&](int off) {
    uint32_t v;
    std::memcpy(&v, buf + off, 4);
    if (swap) v = __builtin_bswap32(v);
    float f;
    std::memcpy(&f, &v, 4);
    return static_cast<double>(f);
  };
  auto u64 = [&](int off) {
    uint64_t v;
    std::memcpy(&v, buf + off, 8);
    return swap ? __builtin_bswap64(v) : v;
  };
  auto f64 = [&](int off) {
    const uint64_t v = u64(off);
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  };
  // NIfTI-1: dim short[8] at 40, datatype at 70, pixdim float[8] at 76, vox_offset float at 108, magic at
  // 344. NIfTI-2: magic at 4, datatype at 12, dim int64[8] at 16, pixdim double[8] at 104, vox_offset int64
  // at 168.
  if (size == 348 && got >= 348) {
    h.version = 1;
    h.sizeof_hdr = 348;
    h.single_file = std::memcmp(buf + 344, "n+1", 3) == 0;
    for (int d = 0; d < 8; ++d) h.dim[d] = i16(40 + 2 * d);
    h.datatype = i16(70);
    for (int d = 0; d < 8; ++d) h.pixdim[d] = f32(76 + 4 * d);
    h.vox_offset = f32(108);
    return true;
  }
  if (size == 540 && got >= 540) {
    h.version = 2;
    h.sizeof_hdr = 540;
    h.single_file = std::memcmp(buf + 4, "n+2", 3) == 0;
    for (int d = 0; d < 8; ++d) h.dim[d] = static_cast<int64_t>(u64(16 + 8 * d));
    h.datatype = i16(12);
    for (int d = 0; d < 8; ++d) h.pixdim[d] = f64(104 + 8 * d);
    h.vox_offset = static_cast<double>(static_cast<int64_t>(u64(168)));
    return true;
  }
  return false;
}

/// Refuses dim[0] outside 1…7 (field "dim[0]") and a non-positive dim[i], 1 ≤ i ≤ dim[0] (field
/// "dim[i]"): nifti_image_read silently reads a non-positive dim[i] as 1, a different grid than the file's.
void check_raw_nifti_dims(const std::string& path, const RawNiftiHeader& h) {
  if (h.dim[0] < 1 || h.dim[0] > 7)
    throw InputError(path, "dim[0]", "is " + std::to_string(h.dim[0]) + "; the number of dimensions must be 1 to 7");
  for (int d = 1; d <= h.dim[0]; ++d) {
    if (h.dim[d] < 1)
      throw InputError(path, "dim[" + std::to_string(d) + "]",
                       "is " + std::to_string(h.dim[d]) + "; sizes must be at least 1 (nifti_image_read would read it as 1)");
  }
}

/// Bytes the uncompressed stream of `path` holds, read up to `limit` (gzread also reads plain files):
/// min(size, limit), so a huge vox_offset costs at most the file's own length to check.
double stream_bytes_up_to(const std::string& path, double limit) {
  double total = 0;
  if (gzFile f = gzopen(path.c_str(), "rb")) {
    std::vector<char> buf(1 << 16);
    while (total < limit) {
      const int got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
      if (got <= 0) break;
      total += got;
    }
    gzclose(f);
  }
  return std::min(total, limit);
}

/// Range checks on the raw header of `header_file` (the .hdr of a pair) before nifti_image_read, which
/// reads a NaN or huge vox_offset as some other offset, a non-positive pixdim as 1 and a product of dims
/// that overflows as a wrapped count. Fields: "dim[0]", "dim[i]" (1 … 7), "dim" (the product), "datatype",
/// "pixdim[i]" (1 … 3), "vox_offset". Returns quietly when the bytes are not a NIfTI header
/// (throw_nifti_header_error explains those).
void check_raw_nifti_header(const std::string& path, const std::string& header_file) {
  unsigned char buf[540];
  const int got = read_header_bytes(header_file, buf);
  RawNiftiHeader h;
  if (!parse_raw_nifti(buf, got, h)) return;
  check_raw_nifti_dims(path, h);
  for (int d = 1; d <= h.dim[0]; ++d) {
    if (h.dim[d] > kMaxVolumeSide)
      throw InputError(path, "dim[" + std::to_string(d) + "]",
                       "is " + std::to_string(h.dim[d]) + ", out of range [1, " + std::to_string(kMaxVolumeSide) + "]");
  }
  if (!nifti_is_valid_datatype(h.datatype))
    throw InputError(path, "datatype", "unknown NIfTI datatype code " + std::to_string(h.datatype));
  int nbyper = 0, swapsize = 0;
  nifti_datatype_sizes(h.datatype, &nbyper, &swapsize);
  double bytes = std::max(nbyper, 1);
  std::ostringstream dims;
  for (int d = 1; d <= h.dim[0]; ++d) {
    bytes *= static_cast<double>(h.dim[d]);
    dims << (d > 1 ? "×" : "") << h.dim[d];
  }
  if (bytes > 0x1p62)
    throw InputError(path, "dim", dims.str() + " samples of " + std::to_string(nbyper) +
                                      " bytes overflow a 64-bit byte count");
  for (int d = 1; d <= std::min<int64_t>(h.dim[0], 3); ++d) {
    if (!std::isfinite(h.pixdim[d]) || !(h.pixdim[d] > 0.0)) {
      std::ostringstream v;
      v << h.pixdim[d];
      throw InputError(path, "pixdim[" + std::to_string(d) + "]",
                       "is " + v.str() + "; a voxel spacing must be a finite number > 0");
    }
  }
  // The samples start at vox_offset: in a single file after the header (NIfTI-1 asks for 352, the header
  // and its 4 extension bytes; nifti_image_read moves anything smaller up to the header's end), in a
  // pair's .img anywhere from 0. It must lie within the file that holds them.
  const double lo = h.single_file ? h.sizeof_hdr : 0.0;
  std::ostringstream v;
  v << h.vox_offset;
  if (!std::isfinite(h.vox_offset) || h.vox_offset < lo) {
    throw InputError(path, "vox_offset",
                     "is " + v.str() + "; the samples' byte offset must be a finite number >= " +
                         std::to_string(static_cast<int>(lo)) + (h.single_file ? " (the header's size)" : ""));
  }
  if (h.single_file) {
    const double size = stream_bytes_up_to(header_file, h.vox_offset + 1.0);
    if (h.vox_offset > size) {
      std::ostringstream n;
      n << std::fixed << std::setprecision(0) << size;
      throw InputError(path, "vox_offset",
                       "is " + v.str() + ", past the end of the file (" + n.str() + " bytes" +
                           (nifti_is_gzfile(header_file.c_str()) ? " uncompressed" : "") + "); allowed: [" +
                           std::to_string(static_cast<int>(lo)) + ", " + n.str() + "]");
    }
  }
}

/// Why nifti_image_read refused the header, from the raw bytes.
[[noreturn]] void throw_nifti_header_error(const std::string& path) {
  unsigned char buf[540];
  const int got = read_header_bytes(path, buf);
  if (got < 348) {
    throw InputError(path, "header",
                     "only " + std::to_string(got) + " bytes, shorter than a NIfTI-1 header (348 bytes)");
  }
  int32_t le = 0;
  std::memcpy(&le, buf, 4);
  const int32_t be = static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(le)));
  if (le != 348 && le != 540 && be != 348 && be != 540) {
    throw InputError(path, "sizeof_hdr",
                     "is " + std::to_string(le) + ", not 348 (NIfTI-1) or 540 (NIfTI-2): not a NIfTI file");
  }
  const bool v2 = le == 540 || be == 540;
  const unsigned char* magic = v2 ? buf + 4 : buf + 344;
  if (got < (v2 ? 540 : 348) || (std::memcmp(magic, v2 ? "n+2" : "n+1", 3) != 0 &&
                                 std::memcmp(magic, v2 ? "ni2" : "ni1", 3) != 0)) {
    throw InputError(path, "magic", std::string("not \"") + (v2 ? "n+2" : "n+1") + "\" or \"" +
                                        (v2 ? "ni2" : "ni1") + "\": a corrupt NIfTI-" + (v2 ? "2" : "1") + " header");
  }
  check_raw_nifti_header(path, path);
  throw InputError(path, "header",
                   "nifti_image_read rejected the header (invalid dim[], datatype or vox_offset)");
}

/// Non-finite float32 / float64 samples in the data file of `h`, counted from the raw bytes: nifti_image_load
/// replaces them by 0 without saying so, so the warning must look before it does. 0 for integer types.
size_t count_non_finite_nifti(const nifti_image* h) {
  if ((h->datatype != DT_FLOAT32 && h->datatype != DT_FLOAT64) || !h->iname) return 0;
  gzFile f = gzopen(h->iname, "rb");
  if (!f) return 0;
  size_t bad = 0;
  if (gzseek(f, static_cast<z_off_t>(h->iname_offset), SEEK_SET) == static_cast<z_off_t>(h->iname_offset)) {
    const bool swap = h->byteorder != nifti_short_order();
    const size_t size = static_cast<size_t>(h->nbyper);
    std::vector<unsigned char> buf(size * 16384);
    for (int64_t left = h->nvox; left > 0;) {
      const size_t want = static_cast<size_t>(std::min<int64_t>(left, 16384)) * size;
      const int got = gzread(f, buf.data(), static_cast<unsigned>(want));
      if (got <= 0) break;
      for (size_t at = 0; at + size <= static_cast<size_t>(got); at += size) {
        unsigned char* p = buf.data() + at;
        if (swap) std::reverse(p, p + size);
        if (size == 4) {
          float x;
          std::memcpy(&x, p, 4);
          bad += !std::isfinite(x);
        } else {
          double x;
          std::memcpy(&x, p, 8);
          bad += !std::isfinite(x);
        }
      }
      left -= got / static_cast<int64_t>(size);
    }
  }
  gzclose(f);
  return bad;
}

/// Samples of type T converted to float and scaled.
template <typename T>
void convert(const void* src, size_t n, double slope, double inter, float* dst) {
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(static_cast<double>(s[i]) * slope + inter);
}

Volume load_nifti(const std::string& path) {
  static const bool quiet = [] {
    nifti_set_debug_level(0);  // our messages carry the cause; the library's stderr lines would repeat it
    return true;
  }();
  (void)quiet;
  {
    // The header file of a .hdr/.img pair, or the file itself; checked before nifti_image_read reads it.
    char* header = nifti_findhdrname(path.c_str());
    const std::string header_file = header ? header : path;
    std::free(header);
    check_raw_nifti_header(path, header_file);
  }
  NimPtr nim(nifti_image_read(path.c_str(), 0));
  if (!nim) throw_nifti_header_error(path);
  const nifti_image* h = nim.get();

  std::ostringstream dims;
  for (int64_t d = 1; d <= std::clamp<int64_t>(h->dim[0], 0, 7); ++d) dims << (d > 1 ? "×" : "") << h->dim[d];
  if (h->dim[0] < 3) {
    throw InputError(path, "dim[0]",
                     std::to_string(h->dim[0]) + "-D image (" + dims.str() + "); megaview needs a scalar 3-D volume");
  }
  for (int d = 4; d <= std::min<int64_t>(h->dim[0], 7); ++d) {
    if (h->dim[d] != 1) {
      const char* what = d == 4 ? "time points" : "components per voxel (vector- or tensor-valued)";
      throw InputError(path, "dim[" + std::to_string(d) + "]",
                       std::to_string(h->dim[d]) + " " + what + " in a " + std::to_string(h->dim[0]) + "-D image (" +
                           dims.str() + "); megaview needs a scalar 3-D volume (a 4th axis of size 1 is accepted)");
    }
  }
  for (int d = 1; d <= 3; ++d) check_axis_size(path, "dim[" + std::to_string(d) + "]", "", h->dim[d]);
  switch (h->datatype) {
    case DT_UINT8: case DT_INT8: case DT_INT16: case DT_UINT16: case DT_INT32: case DT_UINT32:
    case DT_INT64: case DT_UINT64: case DT_FLOAT32: case DT_FLOAT64:
      break;
    default: {
      const char* name = nifti_datatype_to_string(h->datatype);
      throw InputError(path, "datatype",
                       std::string(name ? name : "?") + " (code " + std::to_string(h->datatype) +
                           ") is not a real scalar type; megaview needs one value per voxel");
    }
  }

  Volume v;
  v.source = path;
  v.nx = static_cast<int>(h->dim[1]);
  v.ny = static_cast<int>(h->dim[2]);
  v.nz = static_cast<int>(h->dim[3]);
  // Index → world (RAS+, mm): sform, else qform, else pixdim scaling (NIfTI-1 standard, methods 3, 2, 1).
  Affine3& a = v.index_to_world;
  const nifti_dmat44* m = h->sform_code > 0 ? &h->sto_xyz : h->qform_code > 0 ? &h->qto_xyz : nullptr;
  if (m) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) a.m[r * 3 + c] = static_cast<float>(m->m[r][c]);
      a.origin[r] = static_cast<float>(m->m[r][3]);
    }
  } else {
    for (int d = 0; d < 3; ++d) {
      const double s = h->pixdim[d + 1];
      a.m[d * 3 + d] = (std::isfinite(s) && s > 0.0) ? static_cast<float>(s) : 1.f;
    }
  }
  for (float x : a.m)
    if (!std::isfinite(x)) throw InputError(path, h->sform_code > 0 ? "srow_x" : "quatern_b", "non-finite transform");
  check_volume_fits(v, false);

  if (nifti_image_load(nim.get()) < 0 || !nim->data) {
    const double want = static_cast<double>(h->nvox) * h->nbyper;
    std::string msg = "cannot read " + std::to_string(static_cast<long long>(want)) + " bytes of samples (" +
                      dims.str() + " × " + std::to_string(h->nbyper) + " bytes) from offset " +
                      std::to_string(h->iname_offset);
    std::error_code ec;
    const std::string data_file = h->iname ? h->iname : path;
    const auto size = fs::file_size(data_file, ec);
    if (!ec && !nifti_is_gzfile(data_file.c_str())) msg += "; " + data_file + " has only " + std::to_string(size) + " bytes";
    throw InputError(path, "data", msg + " (truncated file?)");
  }
  const size_t count = static_cast<size_t>(v.nx) * v.ny * v.nz;
  double slope = h->scl_slope, inter = h->scl_inter;
  if (!std::isfinite(slope) || slope == 0.0) slope = 1.0, inter = 0.0;  // NIfTI: slope 0 means unscaled
  if (!std::isfinite(inter)) inter = 0.0;
  v.data.resize(count);
  float* out = v.data.data();
  const void* src = nim->data;
  switch (h->datatype) {
    case DT_UINT8: convert<uint8_t>(src, count, slope, inter, out); break;
    case DT_INT8: convert<int8_t>(src, count, slope, inter, out); break;
    case DT_INT16: convert<int16_t>(src, count, slope, inter, out); break;
    case DT_UINT16: convert<uint16_t>(src, count, slope, inter, out); break;
    case DT_INT32: convert<int32_t>(src, count, slope, inter, out); break;
    case DT_UINT32: convert<uint32_t>(src, count, slope, inter, out); break;
    case DT_INT64: convert<int64_t>(src, count, slope, inter, out); break;
    case DT_UINT64: convert<uint64_t>(src, count, slope, inter, out); break;
    case DT_FLOAT32: convert<float>(src, count, slope, inter, out); break;
    case DT_FLOAT64: convert<double>(src, count, slope, inter, out); break;
  }
  if (const size_t bad = count_non_finite_nifti(h))
    spdlog::warn("{}: data: {} of {} samples are not finite (NaN or infinite); nifti_image_read reads them as 0", path,
                 bad, count);
  else
    warn_non_finite(path, v.data);  // finite samples that scl_slope/scl_inter take out of range
  return v;
}

}  // namespace

double host_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  while (f >> key) {
    if (key == "MemAvailable:") {
      double kib = 0;
      if (f >> kib) return kib * 1024.0;
      break;
    }
    f.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * page : std::numeric_limits<double>::infinity();
}

Volume load_volume(const std::string& path) {
  require_file(path);
  const std::string l = lower(path);
  if (ends_with(l, ".nrrd") || ends_with(l, ".nhdr")) return load_nrrd(path);
  if (ends_with(l, ".nii") || ends_with(l, ".nii.gz") || ends_with(l, ".hdr") || ends_with(l, ".img"))
    return load_nifti(path);
  const std::string ext = fs::path(path).extension().string();
  throw InputError(path, "extension",
                   "unknown volume format \"" + ext + "\"; expected .nrrd, .nhdr (NRRD) or .nii, .nii.gz (NIfTI)");
}

std::string default_volume_path(const std::string& name) {
  std::vector<std::string> tried;
  auto exists = [&](const std::string& p) {
    tried.push_back(p);
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  if (name.empty()) throw InputError("", "volume", "empty volume name");
  if (exists(name)) return name;
  if (name.find('/') == std::string::npos) {
    if (const char* dir = std::getenv("MEGAVIEW_VOLUMES"); dir && *dir) {
      for (const char* ext : {"", ".nrrd", ".nhdr", ".nii.gz", ".nii"}) {
        const std::string p = (fs::path(dir) / (name + ext)).string();
        if (exists(p)) return p;
      }
    }
    if (name == "ch2") {
      const std::string p = "/usr/share/mricron/templates/ch2.nii.gz";
      if (exists(p)) return p;
    }
  }
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw InputError(name, "", "no volume found; tried: " + list +
                                 " (set MEGAVIEW_VOLUMES to a directory of volumes, or give a path)");
}

void check_volume_fits(const Volume& v, bool on_device) {
  const std::string dims = dims_str(v.nx, v.ny, v.nz);
  if (v.nx <= 0 || v.ny <= 0 || v.nz <= 0) throw InputError(v.source, "dimensions", dims + " is empty");
  const double bytes = static_cast<double>(v.nx) * v.ny * v.nz * sizeof(float);
  const double host_free = host_available_bytes();
  if (bytes > 0.5 * host_free) {
    throw InputError(v.source, "size",
                     "volume of " + dims + " float32 samples needs " + mib(bytes) + ", more than half of the " +
                         mib(host_free) + " of free host memory");
  }
  if (on_device && gpu_available()) {
    size_t free_b = 0, total_b = 0;
    MV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double margin = std::max(256.0 * 1024 * 1024, 0.05 * static_cast<double>(total_b));
    if (bytes + margin > static_cast<double>(free_b)) {
      throw InputError(v.source, "size",
                       "volume of " + dims + " float32 samples needs " + mib(bytes) + " (+ " + mib(margin) +
                           " margin), more than the " + mib(static_cast<double>(free_b)) + " of free GPU memory (" +
                           gpu_info().name + ")");
    }
  }
}

}  // namespace mv
