// Volume files (render/field/volume_io.h): NRRD through Teem and NIfTI-1/-2 through nifti2_io, written
// here with the libraries' own writers (or by hand for malformed files) into a TempDir and read back:
// samples, sizes, index → world (spacings, origins, directions, LPS/LAS → RAS), scl_slope/scl_inter, and
// every class of bad input as an InputError naming the file and the field. Also the Colin27 MRI template
// where default_volume_path finds it ($MEGAVIEW_VOLUMES or Debian's mricron-data), volume lookup by name
// and the size check.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <nifti2_io.h>
#include <teem/nrrd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.h"
#include "render/field/field.h"
#include "render/field/volume.h"
#include "render/field/volume_io.h"
#include "render/strands/volume_ray.h"
#include "test_support.h"
#include "volume_strand_cases.h"

namespace mv {
namespace {

using test::expect_input_error;

namespace fs = std::filesystem;
using test::TempDir;

const char* const kColin27 = "/usr/share/mricron/templates/ch2.nii.gz";

/// The test pattern: sample (i, j, k) = i + 10 j + 100 k.
float pattern(int i, int j, int k) { return float(i + 10 * j + 100 * k); }

template <class T>
std::vector<T> pattern_data(int nx, int ny, int nz) {
  std::vector<T> d;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) d.push_back(static_cast<T>(pattern(i, j, k)));
  return d;
}

void expect_pattern(const Volume& v, int nx, int ny, int nz, float slope = 1.f, float inter = 0.f) {
  ASSERT_EQ(v.nx, nx);
  ASSERT_EQ(v.ny, ny);
  ASSERT_EQ(v.nz, nz);
  ASSERT_EQ(v.data.size(), size_t(nx) * ny * nz);
  const VolumeView view = make_view(v);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) ASSERT_FLOAT_EQ(view.at(i, j, k), slope * pattern(i, j, k) + inter) << i << " " << j << " " << k;
}

/// Expects index_to_world = (columns c0, c1, c2; origin o) to 1e-5.
void expect_transform(const Affine3& a, Vec3 c0, Vec3 c1, Vec3 c2, Vec3 o) {
  const Vec3 cols[3] = {c0, c1, c2};
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) EXPECT_NEAR(a.m[3 * r + c], cols[c][r], 1e-5f) << "m[" << r << "][" << c << "]";
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(a.origin[r], o[r], 1e-5f) << "origin[" << r << "]";
}


// ---------------------------------------------------------------------------------------------------
// NRRD, written with Teem

struct NrrdSpec {
  int type = nrrdTypeFloat;
  std::vector<size_t> sizes;
  int space = nrrdSpaceUnknown;          ///< nrrdSpaceUnknown: no space, spacings only
  std::vector<Vec3> directions;          ///< per spatial axis (with space)
  Vec3 origin{0.f};
  std::vector<double> spacings;          ///< without space (empty: none)
  std::vector<int> kinds;                ///< empty: none
  bool gzip = false;
};

void write_nrrd(const std::string& path, void* data, const NrrdSpec& s) {
  Nrrd* n = nrrdNew();
  ASSERT_EQ(nrrdWrap_nva(n, data, s.type, unsigned(s.sizes.size()), s.sizes.data()), 0) << biffGetDone(NRRD);
  if (s.space != nrrdSpaceUnknown) {
    ASSERT_EQ(nrrdSpaceSet(n, s.space), 0);
    double o[NRRD_SPACE_DIM_MAX] = {s.origin.x, s.origin.y, s.origin.z};
    ASSERT_EQ(nrrdSpaceOriginSet(n, o), 0);
    double dirs[NRRD_DIM_MAX][NRRD_SPACE_DIM_MAX];
    for (unsigned a = 0; a < NRRD_DIM_MAX; ++a)
      for (unsigned r = 0; r < NRRD_SPACE_DIM_MAX; ++r) dirs[a][r] = AIR_NAN;
    for (size_t a = 0; a < s.directions.size(); ++a)
      for (int r = 0; r < 3; ++r) dirs[a][r] = s.directions[a][r];
    nrrdAxisInfoSet_nva(n, nrrdAxisInfoSpaceDirection, dirs);
  }
  if (!s.spacings.empty()) {
    double sp[NRRD_DIM_MAX];
    for (unsigned a = 0; a < NRRD_DIM_MAX; ++a) sp[a] = a < s.spacings.size() ? s.spacings[a] : AIR_NAN;
    nrrdAxisInfoSet_nva(n, nrrdAxisInfoSpacing, sp);
  }
  if (!s.kinds.empty()) {
    int k[NRRD_DIM_MAX] = {};
    for (size_t a = 0; a < s.kinds.size(); ++a) k[a] = s.kinds[a];
    nrrdAxisInfoSet_nva(n, nrrdAxisInfoKind, k);
  }
  NrrdIoState* nio = nrrdIoStateNew();
  if (s.gzip) nrrdIoStateEncodingSet(nio, nrrdEncodingGzip);
  const int rc = nrrdSave(path.c_str(), n, nio);
  nrrdIoStateNix(nio);
  nrrdNix(n);  // the data belongs to the caller
  ASSERT_EQ(rc, 0) << biffGetDone(NRRD);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

TEST(VolumeIoNrrd, FloatWithSpacingsRoundTrips) {
  TempDir dir("vol");
  auto data = pattern_data<float>(5, 4, 3);
  NrrdSpec s;
  s.sizes = {5, 4, 3};
  s.spacings = {0.5, 2.0, 1.25};
  write_nrrd(dir / "a.nrrd", data.data(), s);
  const Volume v = load_volume(dir / "a.nrrd");
  EXPECT_EQ(v.source, dir / "a.nrrd");
  expect_pattern(v, 5, 4, 3);
  expect_transform(v.index_to_world, {0.5f, 0, 0}, {0, 2.f, 0}, {0, 0, 1.25f}, {0, 0, 0});
  // Upper-case extensions pick the reader too.
  fs::copy_file(dir / "a.nrrd", dir / "B.NRRD");
  expect_pattern(load_volume(dir / "B.NRRD"), 5, 4, 3);
}

TEST(VolumeIoNrrd, NoSpacingMeansUnitIndexSpace) {
  TempDir dir("vol");
  auto data = pattern_data<float>(3, 3, 3);
  NrrdSpec s;
  s.sizes = {3, 3, 3};
  write_nrrd(dir / "plain.nrrd", data.data(), s);
  expect_transform(load_volume(dir / "plain.nrrd").index_to_world, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0});
}

TEST(VolumeIoNrrd, RasSpaceDirectionsAndOriginAreKept) {
  TempDir dir("vol");
  auto data = pattern_data<float>(4, 3, 2);
  NrrdSpec s;
  s.sizes = {4, 3, 2};
  s.space = nrrdSpaceRightAnteriorSuperior;
  s.directions = {{0.f, 0.9f, 0.1f}, {-1.2f, 0.f, 0.f}, {0.f, 0.2f, 2.f}};  // oblique, anisotropic
  s.origin = {10.f, -20.f, 30.f};
  write_nrrd(dir / "ras.nrrd", data.data(), s);
  const Volume v = load_volume(dir / "ras.nrrd");
  expect_pattern(v, 4, 3, 2);
  expect_transform(v.index_to_world, s.directions[0], s.directions[1], s.directions[2], s.origin);
  // The field sees the same: sample (1, 2, 1) sits at its world position.
  const VolumeView view = make_view(v);
  const Vec3 w = v.index_to_world.apply({1, 2, 1});
  EXPECT_NEAR(probe(view, KernelKind::Tent, w, 0).value, pattern(1, 2, 1), 1e-4f);
}

TEST(VolumeIoNrrd, LpsAndLasSpacesAreConvertedToRas) {
  TempDir dir("vol");
  auto data = pattern_data<float>(3, 3, 3);
  NrrdSpec s;
  s.sizes = {3, 3, 3};
  s.directions = {{1.f, 0.f, 0.f}, {0.f, 2.f, 0.f}, {0.1f, 0.2f, 3.f}};
  s.origin = {-5.f, 6.f, 7.f};
  s.space = nrrdSpaceLeftPosteriorSuperior;  // RAS = (−x, −y, z)
  write_nrrd(dir / "lps.nrrd", data.data(), s);
  expect_transform(load_volume(dir / "lps.nrrd").index_to_world, {-1, 0, 0}, {0, -2, 0}, {-0.1f, -0.2f, 3}, {5, -6, 7});
  s.space = nrrdSpaceScannerXYZ;  // Teem: the same as LPS
  write_nrrd(dir / "scanner.nrrd", data.data(), s);
  expect_transform(load_volume(dir / "scanner.nrrd").index_to_world, {-1, 0, 0}, {0, -2, 0}, {-0.1f, -0.2f, 3},
                   {5, -6, 7});
  s.space = nrrdSpaceLeftAnteriorSuperior;  // RAS = (−x, y, z)
  write_nrrd(dir / "las.nrrd", data.data(), s);
  expect_transform(load_volume(dir / "las.nrrd").index_to_world, {-1, 0, 0}, {0, 2, 0}, {-0.1f, 0.2f, 3}, {5, 6, 7});
  s.space = nrrdSpace3DRightHanded;  // no anatomical meaning: as given
  write_nrrd(dir / "rh.nrrd", data.data(), s);
  expect_transform(load_volume(dir / "rh.nrrd").index_to_world, {1, 0, 0}, {0, 2, 0}, {0.1f, 0.2f, 3}, {-5, 6, 7});
}

TEST(VolumeIoNrrd, IntegerTypesAndGzipAreConverted) {
  TempDir dir("vol");
  auto shorts = pattern_data<int16_t>(6, 5, 4);
  NrrdSpec s;
  s.type = nrrdTypeShort;
  s.sizes = {6, 5, 4};
  s.gzip = true;
  write_nrrd(dir / "s.nrrd", shorts.data(), s);
  expect_pattern(load_volume(dir / "s.nrrd"), 6, 5, 4);
  auto bytes = pattern_data<uint8_t>(6, 5, 2);  // values up to 5 + 40 + 100 < 256
  s.type = nrrdTypeUChar;
  s.sizes = {6, 5, 2};
  s.gzip = false;
  write_nrrd(dir / "u.nrrd", bytes.data(), s);
  expect_pattern(load_volume(dir / "u.nrrd"), 6, 5, 2);
  auto doubles = pattern_data<double>(2, 3, 4);
  s.type = nrrdTypeDouble;
  s.sizes = {2, 3, 4};
  write_nrrd(dir / "d.nrrd", doubles.data(), s);
  expect_pattern(load_volume(dir / "d.nrrd"), 2, 3, 4);
}

TEST(VolumeIoNrrd, DetachedHeaderReadsItsDataFile) {
  TempDir dir("vol");
  auto data = pattern_data<float>(4, 4, 2);
  NrrdSpec s;
  s.sizes = {4, 4, 2};
  s.spacings = {1, 1, 2};
  write_nrrd(dir / "det.nhdr", data.data(), s);  // .nhdr: Teem writes det.raw beside it
  EXPECT_TRUE(fs::exists(dir / "det.raw"));
  const Volume v = load_volume(dir / "det.nhdr");
  expect_pattern(v, 4, 4, 2);
  fs::remove(dir / "det.raw");
  expect_input_error([&] { load_volume(dir / "det.nhdr"); }, dir / "det.nhdr", "data file", {"det.raw", "cannot open"});
}

TEST(VolumeIoNrrd, FourDWithOneSizeOneAxisIsAccepted) {
  TempDir dir("vol");
  auto data = pattern_data<float>(3, 4, 5);
  NrrdSpec s;
  s.sizes = {3, 4, 5, 1};
  s.spacings = {1.5, 2, 2.5, 1};
  write_nrrd(dir / "t1.nrrd", data.data(), s);
  const Volume v = load_volume(dir / "t1.nrrd");
  expect_pattern(v, 3, 4, 5);
  expect_transform(v.index_to_world, {1.5f, 0, 0}, {0, 2, 0}, {0, 0, 2.5f}, {0, 0, 0});
  // A leading size-1 stub axis (a one-component "vector") is dropped as well.
  s.sizes = {1, 3, 4, 5};
  s.spacings = {AIR_NAN, 1.5, 2, 2.5};
  write_nrrd(dir / "stub.nrrd", data.data(), s);
  const Volume w = load_volume(dir / "stub.nrrd");
  expect_pattern(w, 3, 4, 5);
  expect_transform(w.index_to_world, {1.5f, 0, 0}, {0, 2, 0}, {0, 0, 2.5f}, {0, 0, 0});
}

TEST(VolumeIoNrrd, VectorTwoDAndFourDDataAreRefused) {
  TempDir dir("vol");
  std::vector<float> data(3 * 4 * 4 * 2, 1.f);
  NrrdSpec s;
  s.sizes = {3, 4, 4, 2};
  s.kinds = {nrrdKind3Vector, nrrdKindSpace, nrrdKindSpace, nrrdKindSpace};
  write_nrrd(dir / "vec.nrrd", data.data(), s);
  expect_input_error([&] { load_volume(dir / "vec.nrrd"); }, dir / "vec.nrrd", "sizes", {"3-vector", "scalar 3-D"});
  s.kinds.clear();
  s.sizes = {4, 4, 2, 3};  // a time series
  write_nrrd(dir / "time.nrrd", data.data(), s);
  expect_input_error([&] { load_volume(dir / "time.nrrd"); }, dir / "time.nrrd", "sizes", {"4 4 2 3", "4-D"});
  s.sizes = {8, 12};
  write_nrrd(dir / "image.nrrd", data.data(), s);
  expect_input_error([&] { load_volume(dir / "image.nrrd"); }, dir / "image.nrrd", "dimension", {"2-D", "8 12"});
}

/// A hand-written attached NRRD header followed by `bytes` bytes of zeros.
std::string nrrd_text(const std::string& fields, size_t bytes) {
  return "NRRD0004\n" + fields + "\n" + std::string(bytes, '\0');
}

TEST(VolumeIoNrrd, TruncatedDataIsRefusedNamingTheData) {
  TempDir dir("vol");
  const std::string hdr = "type: float\ndimension: 3\nsizes: 4 3 2\nencoding: raw\nendian: little\n";
  write_text(dir / "ok.nrrd", nrrd_text(hdr, 4 * 3 * 2 * 4));
  EXPECT_EQ(load_volume(dir / "ok.nrrd").data.size(), 24u);
  write_text(dir / "short.nrrd", nrrd_text(hdr, 4 * 3 * 2 * 4 - 10));
  expect_input_error([&] { load_volume(dir / "short.nrrd"); }, dir / "short.nrrd", "data", {"4×3×2"});
}

TEST(VolumeIoNrrd, MalformedHeadersNameTheField) {
  TempDir dir("vol");
  // A PGM image named .nrrd (Teem alone would read it as a 2-D array).
  write_text(dir / "magic.nrrd", "P5\n4 3\n255\n" + std::string(12, 'x'));
  expect_input_error([&] { load_volume(dir / "magic.nrrd"); }, dir / "magic.nrrd", "magic", {"P5\\x0a4 3", "NRRD000"});
  write_text(dir / "empty.nhdr", "");
  expect_input_error([&] { load_volume(dir / "empty.nhdr"); }, dir / "empty.nhdr", "magic");
  write_text(dir / "sizes.nrrd",
             nrrd_text("type: float\ndimension: 3\nsizes: 4 x 2\nencoding: raw\nendian: little\n", 100));
  expect_input_error([&] { load_volume(dir / "sizes.nrrd"); }, dir / "sizes.nrrd", "sizes", {"Teem"});
  write_text(dir / "type.nrrd",
             nrrd_text("type: quaternion\ndimension: 3\nsizes: 2 2 2\nencoding: raw\nendian: little\n", 32));
  expect_input_error([&] { load_volume(dir / "type.nrrd"); }, dir / "type.nrrd", "type");
  write_text(dir / "dirs.nrrd",
             nrrd_text("type: float\ndimension: 3\nspace: RAS\nsizes: 2 2 2\nspace directions: (1,0,0) (0,1) (0,0,1)\n"
                       "encoding: raw\nendian: little\n",
                       32));
  expect_input_error([&] { load_volume(dir / "dirs.nrrd"); }, dir / "dirs.nrrd", "space directions");
  write_text(dir / "sing.nrrd",
             nrrd_text("type: float\ndimension: 3\nspace: RAS\nsizes: 2 2 2\nspace directions: (1,0,0) (2,0,0) (0,0,1)\n"
                       "encoding: raw\nendian: little\n",
                       32));
  // Teem accepts parallel axes; the view refuses the singular transform.
  const Volume sing = load_volume(dir / "sing.nrrd");
  expect_input_error([&] { make_view(sing); }, dir / "sing.nrrd", "index_to_world", {"singular"});
}

TEST(VolumeIoNrrd, HeaderOfAnAbsurdVolumeIsRefusedBeforeReadingData) {
  // 100000³ float32 = 3.8e9 MiB behind a detached header whose data file is empty: the size check comes
  // before any sample is read or allocated.
  TempDir dir("vol");
  write_text(dir / "huge.nhdr",
             "NRRD0004\ntype: float\ndimension: 3\nsizes: 100000 100000 100000\nencoding: raw\nendian: little\n"
             "data file: huge.raw\n");
  write_text(dir / "huge.raw", "");
  expect_input_error([&] { load_volume(dir / "huge.nhdr"); }, dir / "huge.nhdr", "size",
                     {"100000×100000×100000", "3814697265.6 MiB", "free host memory"});
}

// ---------------------------------------------------------------------------------------------------
// NIfTI, written with nifti2_io

struct NiftiSpec {
  std::vector<int64_t> dims;  ///< dim[1..]: sizes
  int datatype = DT_FLOAT32;
  Vec3 pixdim{1.f};
  int sform_code = 0;
  double srow[3][4] = {};
  int qform_code = 0;
  double quatern[3] = {0, 0, 0};  ///< b, c, d
  Vec3 qoffset{0.f};
  double qfac = 1.0;
  double slope = 0.0, inter = 0.0;
  int nifti_type = NIFTI_FTYPE_NIFTI1_1;
};

/// Writes `spec` with the pattern (converted to the datatype; zeros for types without a conversion).
void write_nifti(const std::string& path, const NiftiSpec& s) {
  int64_t dims[8] = {int64_t(s.dims.size()), 1, 1, 1, 1, 1, 1, 1};
  for (size_t d = 0; d < s.dims.size(); ++d) dims[d + 1] = s.dims[d];
  nifti_image* nim = nifti_make_new_nim(dims, s.datatype, 1);
  ASSERT_NE(nim, nullptr);
  const int64_t nx = dims[1], ny = dims[2], nz = s.dims.size() >= 3 ? dims[3] : 1;
  for (int64_t k = 0, at = 0; k < nz; ++k)
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i, ++at) {
        if (at >= nim->nvox) break;
        const float p = pattern(int(i), int(j), int(k));
        switch (s.datatype) {
          case DT_FLOAT32: static_cast<float*>(nim->data)[at] = p; break;
          case DT_INT16: static_cast<int16_t*>(nim->data)[at] = int16_t(p); break;
          case DT_UINT8: static_cast<uint8_t*>(nim->data)[at] = uint8_t(p); break;
          case DT_FLOAT64: static_cast<double*>(nim->data)[at] = p; break;
          default: break;
        }
      }
  nim->dx = nim->pixdim[1] = s.pixdim.x;
  nim->dy = nim->pixdim[2] = s.pixdim.y;
  nim->dz = nim->pixdim[3] = s.pixdim.z;
  nim->sform_code = s.sform_code;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) nim->sto_xyz.m[r][c] = s.srow[r][c];
  nim->qform_code = s.qform_code;
  nim->quatern_b = s.quatern[0];
  nim->quatern_c = s.quatern[1];
  nim->quatern_d = s.quatern[2];
  nim->qoffset_x = s.qoffset.x;
  nim->qoffset_y = s.qoffset.y;
  nim->qoffset_z = s.qoffset.z;
  nim->qfac = s.qfac;
  nim->scl_slope = s.slope;
  nim->scl_inter = s.inter;
  ASSERT_EQ(nifti_set_filenames(nim, path.c_str(), 0, 1), 0);
  nim->nifti_type = s.nifti_type;
  if (s.nifti_type == NIFTI_FTYPE_NIFTI2_1) {
    // nifti2_io 3.0.1 (Debian 12) writes single-file NIfTI-2 with vox_offset 0, the samples over the
    // header; so the library converts the header and the test lays out the file: header, the 4-byte
    // extension flag, samples at 544.
    nifti_2_header h;
    ASSERT_EQ(nifti_convert_nim2n2hdr(nim, &h), 0);
    h.vox_offset = 544;
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write("\0\0\0\0", 4);
    f.write(static_cast<const char*>(nim->data), std::streamsize(nim->nvox * nim->nbyper));
  } else {
    nifti_image_write(nim);
  }
  nifti_image_free(nim);
  ASSERT_TRUE(fs::exists(path)) << path;
}

/// Overwrites `bytes` at byte `offset` of a (plain) file.
void poke(const std::string& path, long offset, const void* bytes, size_t n) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  f.write(static_cast<const char*>(bytes), std::streamsize(n));
}

TEST(VolumeIoNifti, PixdimOnlyRoundTripsInEveryContainer) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {5, 4, 3};
  s.pixdim = {0.5f, 0.75f, 2.f};
  for (const char* name : {"a.nii", "a.nii.gz"}) {
    write_nifti(dir / name, s);
    const Volume v = load_volume(dir / name);
    expect_pattern(v, 5, 4, 3);
    expect_transform(v.index_to_world, {0.5f, 0, 0}, {0, 0.75f, 0}, {0, 0, 2}, {0, 0, 0});
  }
  s.nifti_type = NIFTI_FTYPE_NIFTI2_1;
  write_nifti(dir / "two.nii", s);
  {
    std::ifstream f(dir / "two.nii", std::ios::binary);
    int32_t sizeof_hdr = 0;
    f.read(reinterpret_cast<char*>(&sizeof_hdr), 4);
    EXPECT_EQ(sizeof_hdr, 540);  // really NIfTI-2
  }
  const Volume two = load_volume(dir / "two.nii");
  expect_pattern(two, 5, 4, 3);
  expect_transform(two.index_to_world, {0.5f, 0, 0}, {0, 0.75f, 0}, {0, 0, 2}, {0, 0, 0});
  s.nifti_type = NIFTI_FTYPE_NIFTI1_2;  // .hdr + .img pair
  write_nifti(dir / "pair.hdr", s);
  EXPECT_TRUE(fs::exists(dir / "pair.img"));
  expect_pattern(load_volume(dir / "pair.hdr"), 5, 4, 3);
}

TEST(VolumeIoNifti, SformWinsOverQform) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {4, 3, 2};
  s.sform_code = NIFTI_XFORM_MNI_152;
  const double srow[3][4] = {{0, -1.5, 0, 90}, {1.1, 0, 0.2, -126}, {0, 0, 2, -72}};
  std::memcpy(s.srow, srow, sizeof srow);
  s.qform_code = NIFTI_XFORM_SCANNER_ANAT;  // different; ignored since the sform is set
  s.qoffset = {1, 2, 3};
  write_nifti(dir / "s.nii", s);
  const Volume v = load_volume(dir / "s.nii");
  expect_pattern(v, 4, 3, 2);
  expect_transform(v.index_to_world, {0, 1.1f, 0}, {-1.5f, 0, 0}, {0, 0.2f, 2}, {90, -126, -72});
}

TEST(VolumeIoNifti, QformRotationScalingAndQfac) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {4, 3, 2};
  s.pixdim = {0.9f, 1.1f, 1.3f};
  s.qform_code = NIFTI_XFORM_SCANNER_ANAT;
  s.quatern[2] = std::sqrt(0.5);  // 90° about z: i → +y, j → −x
  s.qoffset = {-10, 20, 5};
  s.qfac = -1;  // k flipped
  write_nifti(dir / "q.nii", s);
  const Volume v = load_volume(dir / "q.nii");
  expect_pattern(v, 4, 3, 2);
  expect_transform(v.index_to_world, {0, 0.9f, 0}, {-1.1f, 0, 0}, {0, 0, -1.3f}, {-10, 20, 5});
}

TEST(VolumeIoNifti, SclSlopeAndInterScaleTheSamples) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {4, 3, 2};
  s.datatype = DT_INT16;
  s.slope = 0.5;
  s.inter = -10;
  write_nifti(dir / "scaled.nii", s);
  expect_pattern(load_volume(dir / "scaled.nii"), 4, 3, 2, 0.5f, -10.f);
  s.slope = 0;  // slope 0: unscaled, whatever the intercept (NIfTI-1)
  s.inter = 7;
  write_nifti(dir / "unscaled.nii", s);
  expect_pattern(load_volume(dir / "unscaled.nii"), 4, 3, 2);
  s.datatype = DT_UINT8;
  s.slope = 2;
  s.inter = 1;
  write_nifti(dir / "u8.nii", s);
  expect_pattern(load_volume(dir / "u8.nii"), 4, 3, 2, 2.f, 1.f);
}

TEST(VolumeIoNifti, FourDWithOneTimePointIsAccepted) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {4, 3, 2, 1};
  write_nifti(dir / "t1.nii", s);
  expect_pattern(load_volume(dir / "t1.nii"), 4, 3, 2);
}

TEST(VolumeIoNifti, NonScalarOrNon3DImagesAreRefused) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {8, 6};
  write_nifti(dir / "slice.nii", s);
  expect_input_error([&] { load_volume(dir / "slice.nii"); }, dir / "slice.nii", "dim[0]", {"2-D", "8×6"});
  s.dims = {4, 3, 2, 5};
  write_nifti(dir / "series.nii", s);
  expect_input_error([&] { load_volume(dir / "series.nii"); }, dir / "series.nii", "dim[4]", {"5 time points"});
  s.dims = {4, 3, 2, 1, 3};
  write_nifti(dir / "vector.nii", s);
  expect_input_error([&] { load_volume(dir / "vector.nii"); }, dir / "vector.nii", "dim[5]", {"vector"});
  s.dims = {4, 3, 2};
  s.datatype = DT_COMPLEX64;
  write_nifti(dir / "complex.nii", s);
  expect_input_error([&] { load_volume(dir / "complex.nii"); }, dir / "complex.nii", "datatype", {"COMPLEX64"});
  s.datatype = DT_RGB24;
  write_nifti(dir / "rgb.nii", s);
  expect_input_error([&] { load_volume(dir / "rgb.nii"); }, dir / "rgb.nii", "datatype", {"RGB24"});
}

TEST(VolumeIoNifti, TruncatedDataIsRefusedNamingTheData) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {10, 10, 10};
  write_nifti(dir / "cut.nii", s);
  const auto full = fs::file_size(dir / "cut.nii");
  fs::resize_file(dir / "cut.nii", full - 1000);
  expect_input_error([&] { load_volume(dir / "cut.nii"); }, dir / "cut.nii", "data",
                     {"4000 bytes", "10×10×10", "truncated"});
  // The same inside gzip.
  write_nifti(dir / "cut.nii.gz", s);
  std::vector<char> raw;
  {
    gzFile f = gzopen((dir / "cut.nii").c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    int got;
    while ((got = gzread(f, buf, sizeof buf)) > 0) raw.insert(raw.end(), buf, buf + got);
    gzclose(f);
  }
  gzFile g = gzopen((dir / "cutgz.nii.gz").c_str(), "wb");
  gzwrite(g, raw.data(), unsigned(raw.size()));
  gzclose(g);
  expect_input_error([&] { load_volume(dir / "cutgz.nii.gz"); }, dir / "cutgz.nii.gz", "data", {"truncated"});
}

TEST(VolumeIoNifti, BadHeadersNameTheField) {
  TempDir dir("vol");
  write_text(dir / "tiny.nii", std::string(100, '\1'));
  expect_input_error([&] { load_volume(dir / "tiny.nii"); }, dir / "tiny.nii", "header", {"100 bytes", "348"});
  write_text(dir / "junk.nii", std::string(400, '\1'));
  expect_input_error([&] { load_volume(dir / "junk.nii"); }, dir / "junk.nii", "sizeof_hdr", {"not a NIfTI file"});
  // Valid headers with one field broken (NIfTI-1: short dim[8] at byte 40, short datatype at 70).
  NiftiSpec s;
  s.dims = {4, 3, 2};
  const int16_t minus3 = -3, nine = 9, zero = 0, bad_type = 9999;
  write_nifti(dir / "neg.nii", s);
  poke(dir / "neg.nii", 40 + 2 * 2, &minus3, 2);  // nifti_image_read alone reads it as 1
  expect_input_error([&] { load_volume(dir / "neg.nii"); }, dir / "neg.nii", "dim[2]", {"is -3"});
  write_nifti(dir / "rank.nii", s);
  poke(dir / "rank.nii", 40, &nine, 2);
  expect_input_error([&] { load_volume(dir / "rank.nii"); }, dir / "rank.nii", "dim[0]", {"is 9"});
  write_nifti(dir / "zero.nii", s);
  poke(dir / "zero.nii", 40 + 2 * 1, &zero, 2);
  expect_input_error([&] { load_volume(dir / "zero.nii"); }, dir / "zero.nii", "dim[1]", {"is 0"});
  write_nifti(dir / "type.nii", s);
  poke(dir / "type.nii", 70, &bad_type, 2);
  expect_input_error([&] { load_volume(dir / "type.nii"); }, dir / "type.nii", "datatype", {"9999"});
}

TEST(VolumeIoNifti, HeaderOfAnAbsurdVolumeIsRefusedBeforeReadingData) {
  // A NIfTI-1 header for 30000³ float32 (1.1e14 bytes) and no samples at all.
  TempDir dir("vol");
  const int64_t dims[8] = {3, 30000, 30000, 30000, 1, 1, 1, 1};
  nifti_1_header* h = nifti_make_new_n1_header(dims, DT_FLOAT32);
  ASSERT_NE(h, nullptr);
  h->vox_offset = 352;
  std::memcpy(h->magic, "n+1", 4);
  {
    std::ofstream f(dir / "huge.nii", std::ios::binary);
    f.write(reinterpret_cast<const char*>(h), sizeof *h);
    f.write("\0\0\0\0", 4);
  }
  free(h);
  expect_input_error([&] { load_volume(dir / "huge.nii"); }, dir / "huge.nii", "size",
                     {"30000×30000×30000", "102996826.2 MiB"});
}

// The header fields nifti_image_read would take as something else are range-checked: vox_offset (NIfTI-1:
// float at byte 108), pixdim (float[8] at 76), the dims' upper bound; each error names the file and field.
TEST(VolumeIoNifti, VoxOffsetPixdimAndHugeDimsAreRangeChecked) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {4, 3, 2};
  const float bad_offsets[] = {1e12f, std::nanf(""), 100.f, -352.f, INFINITY};
  const char* shown[] = {"is 1e+12, past the end of the file", "is nan", "is 100", "is -352", "is inf"};
  for (int i = 0; i < 5; ++i) {
    const std::string f = dir / ("off" + std::to_string(i) + ".nii");
    write_nifti(f, s);
    poke(f, 108, &bad_offsets[i], 4);
    expect_input_error([&] { load_volume(f); }, f, "vox_offset", {shown[i], i == 0 ? "[348, " : ">= 348"});
  }
  // Past the end of a gzipped file: the uncompressed length counts.
  {
    write_nifti(dir / "plain.nii", s);
    std::ifstream in(dir / "plain.nii", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const float far = 5000.f;
    std::memcpy(raw.data() + 108, &far, 4);
    gzFile g = gzopen((dir / "far.nii.gz").c_str(), "wb");
    gzwrite(g, raw.data(), unsigned(raw.size()));
    gzclose(g);
    expect_input_error([&] { load_volume(dir / "far.nii.gz"); }, dir / "far.nii.gz", "vox_offset",
                       {"is 5000, past the end", "uncompressed", "[348, " + std::to_string(raw.size()) + "]"});
  }
  const float zero = 0.f, nan = std::nanf(""), negative = -1.f;
  for (const auto& [index, value] : {std::make_pair(1, zero), std::make_pair(2, nan), std::make_pair(3, negative)}) {
    const std::string f = dir / ("pixdim" + std::to_string(index) + ".nii");
    write_nifti(f, s);
    poke(f, 76 + 4 * index, &value, 4);
    expect_input_error([&] { load_volume(f); }, f, "pixdim[" + std::to_string(index) + "]", {"finite number > 0"});
  }
  // NIfTI-2 holds 64-bit sizes (dim int64[8] at byte 16): one beyond kMaxVolumeSide is refused by name.
  s.nifti_type = NIFTI_FTYPE_NIFTI2_1;
  write_nifti(dir / "wide.nii", s);
  const int64_t wide = kMaxVolumeSide + 1;
  poke(dir / "wide.nii", 16 + 8 * 2, &wide, 8);
  expect_input_error([&] { load_volume(dir / "wide.nii"); }, dir / "wide.nii", "dim[2]",
                     {std::to_string(wide), "out of range [1, " + std::to_string(kMaxVolumeSide) + "]"});
}

// A volume with an axis shorter than any kernel's support (2 samples, the tent's) is refused naming the
// file, before a camera is framed on it.
TEST(VolumeIo, DegenerateVolumesAreRefusedNamingTheFile) {
  TempDir dir("vol");
  NiftiSpec s;
  s.dims = {1, 1, 1};
  write_nifti(dir / "dot.nii", s);
  expect_input_error([&] { load_volume(dir / "dot.nii"); }, dir / "dot.nii", "dim[1]", {"is 1", "degenerate", "at least 2"});
  s.dims = {4, 1, 3};
  write_nifti(dir / "flat.nii.gz", s);
  expect_input_error([&] { load_volume(dir / "flat.nii.gz"); }, dir / "flat.nii.gz", "dim[2]", {"degenerate"});
  std::vector<float> data = pattern_data<float>(4, 1, 4);
  NrrdSpec n;
  n.sizes = {4, 1, 4};
  write_nrrd(dir / "flat.nrrd", data.data(), n);
  expect_input_error([&] { load_volume(dir / "flat.nrrd"); }, dir / "flat.nrrd", "sizes",
                     {"axis 1 of \"4 1 4\" is 1", "degenerate"});
  // Two samples per axis load (tent reconstructs them); a ray caster's ctmr (4 per axis) refuses the volume
  // naming the file.
  s.dims = {2, 2, 3};
  write_nifti(dir / "small.nii", s);
  const Volume v = load_volume(dir / "small.nii");
  const VolumeView view = make_view(v);
  expect_input_error([&] { check_strand_volume(view, KernelKind::Ctmr, "vr-lite-cam"); }, "vr-lite-cam", "volume.nx",
                     {"2 samples; kernel ctmr needs at least 4", dir / "small.nii"});
}

/// Collects what spdlog logs while it lives.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const {
    std::string all;
    for (const std::string& line : sink_->last_formatted()) all += line;
    return all;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

// NaN or infinite samples give one warning naming the file and their count, in both formats (NRRD keeps
// them; NIfTI's reader replaces them by 0, so the count comes from the raw bytes).
TEST(VolumeIo, NonFiniteSamplesGiveOneWarningWithTheirCount) {
  TempDir dir("vol");
  std::vector<float> data = pattern_data<float>(4, 3, 2);
  data[1] = std::nanf("");
  data[5] = INFINITY;
  data[7] = -INFINITY;
  NrrdSpec n;
  n.sizes = {4, 3, 2};
  write_nrrd(dir / "nan.nrrd", data.data(), n);
  {
    CapturedLog log;
    const Volume v = load_volume(dir / "nan.nrrd");
    EXPECT_TRUE(std::isnan(v.data[1]));
    const std::string text = log.text();
    EXPECT_NE(text.find(dir / "nan.nrrd"), std::string::npos) << text;
    EXPECT_NE(text.find("3 of 24 samples are not finite"), std::string::npos) << text;
    EXPECT_EQ(text.find("not finite", text.find("not finite") + 1), std::string::npos) << "one warning: " << text;
  }
  NiftiSpec s;
  s.dims = {4, 3, 2};
  write_nifti(dir / "nan.nii", s);
  const float nan = std::nanf("");
  poke(dir / "nan.nii", 352 + 4 * 5, &nan, 4);  // sample 5, after the 352-byte header and extension flag
  {
    CapturedLog log;
    const Volume v = load_volume(dir / "nan.nii");
    EXPECT_EQ(v.data[5], 0.f);  // nifti_image_load's own replacement
    EXPECT_NE(log.text().find((dir / "nan.nii") + ": data: 1 of 24 samples are not finite"), std::string::npos)
        << log.text();
  }
  write_nifti(dir / "clean.nii", s);
  {
    CapturedLog log;
    load_volume(dir / "clean.nii");
    EXPECT_EQ(log.text().find("not finite"), std::string::npos) << log.text();
  }
}

// ---------------------------------------------------------------------------------------------------
// Files, names, sizes

TEST(VolumeIo, MissingFilesDirectoriesAndUnknownExtensionsAreInputErrors) {
  TempDir dir("vol");
  expect_input_error([&] { load_volume(dir / "nothing.nrrd"); }, dir / "nothing.nrrd", "file", {"no such file"});
  fs::create_directory(dir / "folder.nii");
  expect_input_error([&] { load_volume(dir / "folder.nii"); }, dir / "folder.nii", "file", {"directory"});
  write_text(dir / "volume.raw", std::string(64, '\0'));
  expect_input_error([&] { load_volume(dir / "volume.raw"); }, dir / "volume.raw", "extension",
                     {"\".raw\"", ".nrrd", ".nii.gz"});
}

TEST(VolumeIo, CheckVolumeFitsRefusesAbsurdSizesInMiB) {
  Volume v;
  v.source = "huge.nii";
  v.nx = v.ny = v.nz = 100000;  // header only: 4e15 bytes
  expect_input_error([&] { check_volume_fits(v, false); }, "huge.nii", "size", {"3814697265.6 MiB", "free host memory"});
  expect_input_error([&] { check_volume_fits(v, true); }, "huge.nii", "size", {"3814697265.6 MiB"});
  v.nx = 0;
  expect_input_error([&] { check_volume_fits(v, false); }, "huge.nii", "dimensions");
  v.nx = v.ny = v.nz = 64;  // 1 MiB fits anywhere
  EXPECT_NO_THROW(check_volume_fits(v, false));
  EXPECT_NO_THROW(check_volume_fits(v, true));
}

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(VolumeIo, DefaultVolumePathLooksInMegaviewVolumesAndKnowsCh2) {
  TempDir dir("vol");
  write_text(dir / "brain.nii.gz", "x");
  write_text(dir / "phantom.nrrd", "x");
  ScopedEnv env("MEGAVIEW_VOLUMES", dir.str());
  EXPECT_EQ(default_volume_path("brain"), dir / "brain.nii.gz");
  EXPECT_EQ(default_volume_path("phantom"), dir / "phantom.nrrd");
  EXPECT_EQ(default_volume_path("phantom.nrrd"), dir / "phantom.nrrd");
  EXPECT_EQ(default_volume_path(dir / "brain.nii.gz"), dir / "brain.nii.gz");  // a path as it is
  const std::string what =
      expect_input_error([&] { default_volume_path("no-such-volume"); }, "no-such-volume", "", {"no volume found"});
  EXPECT_NE(what.find(dir / "no-such-volume.nii.gz"), std::string::npos) << what;
  expect_input_error([&] { default_volume_path(""); }, "", "volume", {"empty"});
  if (fs::exists(kColin27)) {
    EXPECT_EQ(default_volume_path("ch2"), kColin27);
  } else {
    expect_input_error([&] { default_volume_path("ch2"); }, "ch2", "", {kColin27});
  }
}

// ch2 is looked up as the program looks it up (default_volume_path("ch2"): $MEGAVIEW_VOLUMES/ch2 with
// .nrrd/.nhdr/.nii.gz/.nii first, then Debian's mricron-data), so the GPU machine's copy is tested too.
TEST(VolumeIo, Colin27MriLoads) {
  std::string why;
  const std::string path = test::ch2_path(why);
  if (path.empty()) GTEST_SKIP() << why;
  std::printf("[ch2] %s\n", path.c_str());
  const Volume v = load_volume(path);
  EXPECT_EQ(v.nx, 181);
  EXPECT_EQ(v.ny, 217);
  EXPECT_EQ(v.nz, 181);
  // 1 mm voxels, axis-aligned RAS, MNI placement: the sform (code 4, MNI_152) is diag(1, 1, 1) with
  // origin (−90, −125, −71), so voxel (90, 125, 71) is the anterior commissure at world (0, 0, 0).
  expect_transform(v.index_to_world, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-90, -125, -71});
  // A T1 MRI stored as uint8: intensities 0…255, background 0 at the corner, the head brighter than the
  // volume's average.
  float lo = INFINITY, hi = -INFINITY;
  double sum = 0;
  for (float x : v.data) lo = fminf(lo, x), hi = fmaxf(hi, x), sum += x;
  EXPECT_EQ(lo, 0.f);
  EXPECT_GT(hi, 100.f);
  EXPECT_LE(hi, 255.f);
  const VolumeView view = make_view(v);
  EXPECT_EQ(view.at(0, 0, 0), 0.f);
  double centre_sum = 0;
  for (int k = 50; k < 90; ++k)
    for (int j = 90; j < 130; ++j)
      for (int i = 70; i < 110; ++i) centre_sum += view.at(i, j, k);
  EXPECT_GT(centre_sum / (40 * 40 * 40), 1.5 * sum / v.data.size());
  // The continuous field reads it: at the anterior commissure, a smooth positive value.
  const FieldSample f = probe(view, KernelKind::Bspln3, {0, 0, 0}, 2);
  EXPECT_TRUE(inside(view, KernelKind::Bspln3, {0, 0, 0}));
  EXPECT_GT(f.value, 0.f);
  EXPECT_TRUE(std::isfinite(length(f.gradient)) && std::isfinite(f.hessian.trace()));
  EXPECT_NO_THROW(check_volume_fits(v, true));
}

}  // namespace
}  // namespace mv
