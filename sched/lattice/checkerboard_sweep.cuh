// The checkerboard heat-bath sweep's CUDA kernels, templates over the site rule (the rule's contract and
// the random-number keying are in sched/lattice/checkerboard_sweep.h). Three kernels:
//
// - blog_*: the source document's method ("Poisson-Icing: Gibbs sampling with a GPU using CuPy",
//   ../shared/papers/poisson-ising-gibbs-cupy.txt, "GPU Implementation", "Shared memory", "Bank
//   conflicts"): per half-sweep a buffer of uniforms is filled by its own kernel (the document calls
//   cupy.random.rand), then the sample kernel runs one thread per pixel pair on an int32 image, each
//   block copying its (2·bw) × bh pixels and a one-pixel halo from a separately padded copy into shared
//   memory (rows padded by `pad` ints against bank conflicts), and the weights are evaluated from their
//   definition (Rule::draw_direct); then a third kernel writes the symmetrically padded copy again.
// - sweep_groups: one launch per half-sweep on the uint8 lattice in place; a thread updates four
//   same-coloured sites of one row (8 columns) from one Philox block computed in registers; borders by
//   index (no padded copy). Bit-identical to the CPU reference.
// - deep_tile: several sweeps per launch (temporal blocking). A block copies its tile and a halo of
//   depth D = 2n rows (columns: D rounded up to 8) into shared memory and runs 2n half-sweeps there; after
//   half-sweep h the sites at distance ≥ h+1 from the tile's edge are exact, so the interior is exact
//   after n sweeps and goes to the other buffer (ping-pong). Redundant work at the halo, no global traffic
//   between half-sweeps. Bit-identical to the CPU reference.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/philox.h"
#include "sched/lattice/checkerboard_sweep.h"

namespace mv {

/// Byte j (0 … 7) of an 8-byte word.
__device__ __forceinline__ int lattice_byte(uint2 w, int j) {
  return static_cast<int>(((j < 4 ? w.x : w.y) >> (8 * (j & 3))) & 0xFFu);
}

/// Updates the four sites of colour `colour` among the 8 columns c0 … c0+7 (c0 a multiple of 8) of row r.
/// `mid`, `up`, `down`: the 8 bytes of rows r, r−1, r+1 at those columns (up/down ignored at the lattice
/// border); `left`, `right`: the bytes at c0−1 and c0+8. Returns the updated 8 bytes of row r.
template <class Rule>
__device__ __forceinline__ uint2 lattice_update_group(const Rule& rule, uint2 mid, uint2 up, uint2 down, int left,
                                                      int right, int r, int c0, int width, int height,
                                                      uint32_t seed, uint32_t sweep, int colour) {
  const int p = (r + colour) & 1;
  const uint32_t g = (static_cast<uint32_t>(r) * lattice_pairs_per_row(width) + (c0 >> 1)) >> 2;
  const Philox4x32 rnd = philox4x32_10(g, sweep, static_cast<uint32_t>(colour), 0u, seed, kLatticeKeyHi);
  uint32_t lo = mid.x, hi = mid.y;
  const bool has_up = r > 0, has_down = r + 1 < height;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int b = 2 * j + p;  // byte within the group
    const int c = c0 + b;
    if (c >= width) break;
    int S = 0, k = 0;
    if (c > 0) { S += b == 0 ? left : lattice_byte(mid, b - 1); ++k; }
    if (c + 1 < width) { S += b == 7 ? right : lattice_byte(mid, b + 1); ++k; }
    if (has_up) { S += lattice_byte(up, b); ++k; }
    if (has_down) { S += lattice_byte(down, b); ++k; }
    const uint32_t i = static_cast<uint32_t>(r) * width + c;
    const uint32_t v = static_cast<uint32_t>(rule.draw(i, S, k, uniform_from_bits(rnd.v[j])));
    const int sh = 8 * (b & 3);
    if (b < 4) lo = (lo & ~(0xFFu << sh)) | (v << sh);
    else hi = (hi & ~(0xFFu << sh)) | (v << sh);
  }
  return make_uint2(lo, hi);
}

/// One half-sweep in place on the uint8 lattice x (width a multiple of 8). Thread (tx, ty) of block
/// (bx, by) owns columns 8 (bx·bw + tx) … +7 of row by·bh + ty.
template <class Rule>
__global__ void sweep_groups_kernel(Rule rule, uint8_t* x, int width, int height, uint32_t seed, uint32_t sweep,
                                    int colour) {
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  const int c0 = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= height || c0 >= width) return;
  uint8_t* row = x + static_cast<size_t>(r) * width;
  const uint2 mid = *reinterpret_cast<const uint2*>(row + c0);
  const uint2 up = r > 0 ? *reinterpret_cast<const uint2*>(row - width + c0) : make_uint2(0, 0);
  const uint2 down = r + 1 < height ? *reinterpret_cast<const uint2*>(row + width + c0) : make_uint2(0, 0);
  const int left = c0 > 0 ? row[c0 - 1] : 0;
  const int right = c0 + 8 < width ? row[c0 + 8] : 0;
  *reinterpret_cast<uint2*>(row + c0) =
      lattice_update_group(rule, mid, up, down, left, right, r, c0, width, height, seed, sweep, colour);
}

/// The initial state (uint8, any width).
template <class Rule>
__global__ void lattice_initial_kernel(Rule rule, uint8_t* x, int width, int height, uint32_t seed) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= height || c >= width) return;
  const uint32_t i = static_cast<uint32_t>(r) * width + c;
  x[i] = static_cast<uint8_t>(rule.initial(i, lattice_uniform(seed, width, r, c, kLatticeInitialSweep)));
}

/// Shape of a deep_tile launch: interior tw × th sites (multiples of 8 wide), n sweeps per launch.
struct DeepTileShape {
  int tw = 128, th = 64, sweeps = 4;
  __host__ __device__ int halo_y() const { return 2 * sweeps; }
  __host__ __device__ int halo_x() const { return (2 * sweeps + 7) / 8 * 8; }
  __host__ __device__ int tile_w() const { return tw + 2 * halo_x(); }
  __host__ __device__ int tile_h() const { return th + 2 * halo_y(); }
  __host__ __device__ size_t smem_bytes() const { return static_cast<size_t>(tile_w()) * tile_h(); }
};

/// `shape.sweeps` sweeps (numbered sweep0 …) from `in` to `out` (uint8, width a multiple of 8); grid
/// ⌈W/tw⌉ × ⌈H/th⌉ blocks, any 1D thread count, dynamic shared memory shape.smem_bytes().
template <class Rule>
__global__ void deep_tile_kernel(Rule rule, const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width,
                                 int height, uint32_t seed, uint32_t sweep0, DeepTileShape shape) {
  extern __shared__ __align__(16) uint8_t tile[];
  const int TW = shape.tile_w(), TH = shape.tile_h(), hx = shape.halo_x(), hy = shape.halo_y();
  const int x0 = blockIdx.x * shape.tw - hx, y0 = blockIdx.y * shape.th - hy;  // global origin of the tile
  const int groups = TW / 8, nthreads = blockDim.x;
  // Load: 8-byte words inside the lattice; outside stays unread (borders are handled by index).
  for (int w = threadIdx.x; w < groups * TH; w += nthreads) {
    const int ly = w / groups, lg = w - ly * groups;
    const int gy = y0 + ly, gx = x0 + 8 * lg;
    uint2 v = make_uint2(0, 0);
    if (gy >= 0 && gy < height && gx >= 0 && gx < width)
      v = *reinterpret_cast<const uint2*>(in + static_cast<size_t>(gy) * width + gx);
    *reinterpret_cast<uint2*>(tile + ly * TW + 8 * lg) = v;
  }
  __syncthreads();
  for (int h = 0; h < 2 * shape.sweeps; ++h) {
    const int colour = h & 1;
    const uint32_t sweep = sweep0 + static_cast<uint32_t>(h >> 1);
    const int rows = TH - 2 - 2 * h;  // local rows 1+h … TH−2−h: the rows still exact after this half-sweep
    for (int w = threadIdx.x; w < groups * rows; w += nthreads) {
      const int ly = 1 + h + w / groups, lg = w % groups;
      const int gy = y0 + ly, gx = x0 + 8 * lg;
      if (gy < 0 || gy >= height || gx < 0 || gx >= width) continue;
      uint8_t* row = tile + ly * TW + 8 * lg;
      const uint2 mid = *reinterpret_cast<const uint2*>(row);
      const uint2 up = *reinterpret_cast<const uint2*>(row - TW);
      const uint2 down = *reinterpret_cast<const uint2*>(row + TW);
      const int left = lg > 0 ? row[-1] : 0;
      const int right = lg + 1 < groups ? row[8] : 0;
      uint2 v = lattice_update_group(rule, mid, up, down, left, right, gy, gx, width, height, seed, sweep, colour);
      // The tile's outermost columns lack a neighbour in the tile: keep them (they are halo, never output).
      if (lg == 0) v.x = (v.x & ~0xFFu) | (mid.x & 0xFFu);
      if (lg + 1 == groups) v.y = (v.y & 0x00FFFFFFu) | (mid.y & 0xFF000000u);
      *reinterpret_cast<uint2*>(row) = v;
    }
    __syncthreads();
  }
  const int igroups = shape.tw / 8;
  for (int w = threadIdx.x; w < igroups * shape.th; w += nthreads) {
    const int ly = w / igroups, lg = w - ly * igroups;
    const int gy = blockIdx.y * shape.th + ly, gx = blockIdx.x * shape.tw + 8 * lg;
    if (gy >= height || gx >= width) continue;
    *reinterpret_cast<uint2*>(out + static_cast<size_t>(gy) * width + gx) =
        *reinterpret_cast<const uint2*>(tile + (ly + hy) * TW + hx + 8 * lg);
  }
}

// ---- the document's method ----

/// Fills u[(row · ⌈W/2⌉ + pair)] with the uniform of the colour-`colour` site of each pixel pair: the
/// document's per-iteration buffer of random numbers (here from Philox, keyed as above).
template <int = 0>
__global__ void blog_fill_uniforms_kernel(float* u, int width, int height, uint32_t seed, uint32_t sweep,
                                                 int colour) {
  const int pairs = (width + 1) / 2;
  const int pr = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (pr >= pairs || r >= height) return;
  const int c = 2 * pr + ((r + colour) & 1);
  u[static_cast<size_t>(r) * pairs + pr] = c < width ? lattice_uniform(seed, width, r, c, sweep) : 0.f;
}

/// The symmetric padding (numpy's pad "symmetric", width 1) of the int32 image into padded
/// ((H+2) × (W+2)); also converts from uint8 when `src8` is given.
template <int = 0>
__global__ void blog_pad_kernel(const int* img, const uint8_t* src8, int* padded, int width, int height) {
  const int pc = blockIdx.x * blockDim.x + threadIdx.x, pr = blockIdx.y * blockDim.y + threadIdx.y;
  if (pc >= width + 2 || pr >= height + 2) return;
  const int c = min(max(pc - 1, 0), width - 1), r = min(max(pr - 1, 0), height - 1);
  const size_t i = static_cast<size_t>(r) * width + c;
  padded[static_cast<size_t>(pr) * (width + 2) + pc] = src8 ? static_cast<int>(src8[i]) : img[i];
}

/// int32 image → uint8 lattice, and back.
template <int = 0>
__global__ void blog_to_u8_kernel(const int* img, uint8_t* x, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<uint8_t>(img[i]);
}
template <int = 0>
__global__ void blog_from_u8_kernel(const uint8_t* x, int* img, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) img[i] = x[i];
}

/// The document's sample kernel: block bw × bh threads, one thread per pixel pair, a (2bw + 2) × (bh + 2)
/// int tile (rows padded by `pad` ints) copied from `padded`, the colour-`colour` site of each pair drawn
/// with Rule::draw_direct from u, written into img. The padded neighbour beyond the border holds the
/// site's own value (symmetric padding); it is left out of the loss, which is what its zero loss means.
template <class Rule>
__global__ void blog_sample_kernel(Rule rule, const int* __restrict__ padded, const float* __restrict__ u,
                                   int* __restrict__ img, int width, int height, int colour, int pad) {
  extern __shared__ int sh[];
  const int bw = blockDim.x, bh = blockDim.y, tw = 2 * bw + 2 + pad, th = bh + 2;
  const int px0 = 2 * blockIdx.x * bw, py0 = blockIdx.y * bh;  // padded coords of the tile's corner
  const int pw = width + 2, ph = height + 2;
  const int tid = threadIdx.y * bw + threadIdx.x, nt = bw * bh;
  for (int w = tid; w < (2 * bw + 2) * th; w += nt) {
    const int ly = w / (2 * bw + 2), lx = w - ly * (2 * bw + 2);
    const int gy = py0 + ly, gx = px0 + lx;
    sh[ly * tw + lx] = gy < ph && gx < pw ? padded[static_cast<size_t>(gy) * pw + gx] : 0;
  }
  __syncthreads();
  const int r = py0 + threadIdx.y;                       // image row
  const int pair = blockIdx.x * bw + threadIdx.x;
  const int c = 2 * pair + ((r + colour) & 1);           // image column of this thread's site
  if (r >= height || c >= width) return;
  const int ly = threadIdx.y + 1, lx = 2 * threadIdx.x + ((r + colour) & 1) + 1;
  int n[4], k = 0;
  if (c > 0) n[k++] = sh[ly * tw + lx - 1];
  if (c + 1 < width) n[k++] = sh[ly * tw + lx + 1];
  if (r > 0) n[k++] = sh[(ly - 1) * tw + lx];
  if (r + 1 < height) n[k++] = sh[(ly + 1) * tw + lx];
  const uint32_t i = static_cast<uint32_t>(r) * width + c;
  img[i] = rule.draw_direct(i, n, k, u[static_cast<size_t>(r) * ((width + 1) / 2) + pair]);
}

}  // namespace mv
