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
//   same-coloured sites of one row (8 columns) from the coarse Philox block of its row pair computed in registers
//   (and the fine block where its draws need it); borders by index (no padded copy). Bit-identical to the CPU
//   reference.
// - sweep_persistent: the same update, all sweeps in one cooperative launch (one grid-wide barrier per
//   half-sweep instead of one launch), the lattice staying in L2. Bit-identical to the CPU reference.
// - sweep_strips: sweep_persistent's update with a thread per strip of 4 rows (each state word loaded once
//   per half-sweep and reused as its neighbours' up and down rows), the colour a compile-time constant, and
//   the rule's table-driven draw4_strip (window table in shared memory, per-site table row ids), one coarse
//   Philox block per row pair.
//   Bit-identical to the CPU reference.
// - sweep_strips_ahead: sweep_strips' update with the next half-sweep's Philox blocks computed between the arrival
//   at the grid barrier and the wait (a split barrier), kept in shared memory. Bit-identical to the CPU reference.
// - sweep_strips_resident: sweep_strips_ahead's update with each block's band of rows resident in shared memory
//   for the whole launch and no grid barrier: the bands' edge rows go through a global exchange buffer whose
//   words carry their half-sweep's tag, and a strip at a band's edge waits only for its neighbour's word.
//   Bit-identical to the CPU reference.
// - deep_tile: several sweeps per launch (temporal blocking). A block copies its tile and a halo of
//   depth D = 2n rows (columns: D rounded up to 8) into shared memory and runs 2n half-sweeps there; after
//   half-sweep h the sites at distance ≥ h+1 from the tile's edge are exact, so the interior is exact
//   after n sweeps and goes to the other buffer (ping-pong). Redundant work at the halo, no global traffic
//   between half-sweeps. Bit-identical to the CPU reference.
#pragma once

#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "base/philox.h"
#include "sched/lattice/checkerboard_sweep.h"

namespace mv {

/// Byte j (0 … 7) of an 8-byte word.
__device__ __forceinline__ int lattice_byte(uint2 w, int j) {
  return static_cast<int>(((j < 4 ? w.x : w.y) >> (8 * (j & 3))) & 0xFFu);
}

/// lattice_pair_counter for a kernel's int row r, column group gi and width.
__device__ __forceinline__ uint32_t lattice_pair_counter(int r, int gi, int width) {
  return lattice_pair_counter(static_cast<uint32_t>(r), static_cast<uint32_t>(gi), static_cast<uint32_t>(width));
}

/// The coarse (part 0) or fine (part 1) Philox block of counter word g (lattice_pair_counter) at sweep `sweep` and
/// colour `colour` (sched/lattice/checkerboard_sweep.h numbers them), from the seed's round keys.
template <class Rule>
__device__ __forceinline__ uint4 lattice_block(const Rule& rule, const LatticeKeys& keys, uint32_t g, uint32_t sweep,
                                               uint32_t colour, uint32_t part) {
  const Philox4x32 q = philox4x32_round_keys(g, sweep, colour, part, keys.k0, kLatticeKeyHi, rule.rng_rounds);
  return make_uint4(q.v[0], q.v[1], q.v[2], q.v[3]);
}

/// The full uniforms uf[j] of four sites of row half `half` (row mod 2) from their coarse uniforms and the fine
/// block of their counter word g (lattice_fine_uniform): the rare path of the window draws.
template <class Rule>
__device__ __forceinline__ void lattice_fine_uniforms(const Rule& rule, const LatticeKeys& keys, uint32_t g,
                                                      uint32_t sweep, uint32_t colour, int half, const float* coarse,
                                                      float (&uf)[4]) {
  const uint4 f = lattice_block(rule, keys, g, sweep, colour, 1u);
  uf[0] = lattice_fine_uniform(coarse[0], f.x, half);
  uf[1] = lattice_fine_uniform(coarse[1], f.y, half);
  uf[2] = lattice_fine_uniform(coarse[2], f.z, half);
  uf[3] = lattice_fine_uniform(coarse[3], f.w, half);
}

/// Updates the four sites of colour `colour` among the 8 columns c0 … c0+7 (c0 a multiple of 8, width a
/// multiple of 8) of row r. `mid`, `up`, `down`: the 8 bytes of rows r, r−1, r+1 at those columns (zero
/// beyond the lattice); `left`, `right`: the bytes at c0−1 and c0+8 (zero beyond the lattice). The four
/// neighbour sums come from byte-wise 32-bit additions (lattice_sums8; each sum < 256: no carry between
/// bytes).
/// Returns the updated 8 bytes of row r.
template <class Rule>
__device__ __forceinline__ uint2 lattice_update_group(const Rule& rule, uint2 mid, uint2 up, uint2 down, uint32_t left,
                                                      uint32_t right, int r, int c0, int width, int height,
                                                      const LatticeKeys& keys, uint32_t sweep, int colour) {
  const int p = (r + colour) & 1, half = r & 1;
  const uint32_t g = lattice_pair_counter(r, c0 >> 3, width);
  const uint4 rnd = lattice_block(rule, keys, g, sweep, static_cast<uint32_t>(colour), 0u);
  uint32_t s0, s1;
  lattice_sums8(mid.x, mid.y, up.x, up.y, down.x, down.y, left, right, s0, s1);
  // Shifted by p, the sites are bytes 0 and 2 of each word.
  s0 >>= 8 * p;
  s1 >>= 8 * p;
  const int k_rows = 4 - (r == 0 ? 1 : 0) - (r + 1 == height ? 1 : 0);
  int S[4], k[4], v[4];
  float u[4];
  S[0] = static_cast<int>(s0 & 0xFFu);
  S[1] = static_cast<int>((s0 >> 16) & 0xFFu);
  S[2] = static_cast<int>(s1 & 0xFFu);
  S[3] = static_cast<int>((s1 >> 16) & 0xFFu);
#pragma unroll
  for (int j = 0; j < 4; ++j) k[j] = k_rows;
  u[0] = lattice_coarse_uniform(rnd.x, half);
  u[1] = lattice_coarse_uniform(rnd.y, half);
  u[2] = lattice_coarse_uniform(rnd.z, half);
  u[3] = lattice_coarse_uniform(rnd.w, half);
  // The fine block, only where the rule's draw needs the full uniforms.
  const auto fine = [&](float (&uf)[4]) {
    lattice_fine_uniforms(rule, keys, g, sweep, static_cast<uint32_t>(colour), half, u, uf);
  };
  // Only column 0 (site j = 0 of the first group at p = 0) and column width − 1 (site j = 3 of the last
  // group at p = 1) miss a left or right neighbour.
  k[0] -= c0 == 0 && p == 0 ? 1 : 0;
  k[3] -= c0 + 8 == width && p == 1 ? 1 : 0;
  rule.draw4(r, c0, p, S, k, u, fine, v);
  uint32_t o0 = mid.x, o1 = mid.y;
  lattice_merge4(o0, o1, p, v);
  return make_uint2(o0, o1);
}

/// Updates, in place on the uint8 lattice x (width a multiple of 8), the sites of colour `colour` among
/// columns c0 … c0+7 of row r: reads the group, its rows above and below and its left and right
/// neighbours (zero beyond the lattice) and writes lattice_update_group's result back.
template <class Rule>
__device__ __forceinline__ void lattice_update_in_place(const Rule& rule, uint8_t* x, int width, int height, int r,
                                                        int c0, const LatticeKeys& keys, uint32_t sweep, int colour) {
  uint8_t* row = x + static_cast<size_t>(r) * width;
  const uint2 mid = *reinterpret_cast<const uint2*>(row + c0);
  const uint2 up = r > 0 ? *reinterpret_cast<const uint2*>(row - width + c0) : make_uint2(0, 0);
  const uint2 down = r + 1 < height ? *reinterpret_cast<const uint2*>(row + width + c0) : make_uint2(0, 0);
  const uint32_t left = c0 > 0 ? row[c0 - 1] : 0u;
  const uint32_t right = c0 + 8 < width ? row[c0 + 8] : 0u;
  *reinterpret_cast<uint2*>(row + c0) =
      lattice_update_group(rule, mid, up, down, left, right, r, c0, width, height, keys, sweep, colour);
}

/// One half-sweep in place on the uint8 lattice x (width a multiple of 8). Thread (tx, ty) of block
/// (bx, by) owns columns 8 (bx·bw + tx) … +7 of row by·bh + ty. Any block of at most 1024 threads (the launch bound
/// keeps the kernel at 64 registers, so a 1024-thread block fits an SM).
template <class Rule>
__global__ void __launch_bounds__(1024) sweep_groups_kernel(Rule rule, uint8_t* x, int width, int height,
                                                            LatticeKeys keys, uint32_t sweep, int colour) {
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  const int c0 = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= height || c0 >= width) return;
  lattice_update_in_place(rule, x, width, height, r, c0, keys, sweep, colour);
}

/// `sweeps` sweeps (numbered sweep0 …) in one cooperative launch (cudaLaunchCooperativeKernel, at most as
/// many blocks as are resident at once, any block shape): the 8-column groups, row-major, go to the
/// threads in a grid-stride loop (row and group stepped without a division); the grid synchronises after
/// every half-sweep. Blocks of at most 1024 threads (the launch bound keeps the kernel at 64 registers).
template <class Rule>
__global__ void __launch_bounds__(1024) sweep_persistent_kernel(Rule rule, uint8_t* x, int width, int height,
                                                                LatticeKeys keys, uint32_t sweep0, int sweeps) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int gpr = width / 8;
  const int tid = static_cast<int>(blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x);
  const int nt = static_cast<int>(gridDim.x * blockDim.x * blockDim.y);
  const int r_start = tid / gpr, g_start = tid - r_start * gpr, r_step = nt / gpr, g_step = nt - r_step * gpr;
  for (int h = 0; h < 2 * sweeps; ++h) {
    const int colour = h & 1;
    const uint32_t sweep = sweep0 + static_cast<uint32_t>(h >> 1);
    for (int r = r_start, gi = g_start; r < height;) {
      lattice_update_in_place(rule, x, width, height, r, 8 * gi, keys, sweep, colour);
      gi += g_step;
      r += r_step;
      if (gi >= gpr) {
        gi -= gpr;
        ++r;
      }
    }
    grid.sync();
  }
}

/// Rows per strip of sweep_strips_kernel (even: a strip's first row has the parity of its colour).
inline constexpr int kLatticeStripRows = 4;

/// The launch bound of the kernels with strips of `rows` rows (sweep_strips_ahead_kernel,
/// sweep_strips_resident_kernel): blocks of at most 4096 / rows threads, so that a block's threads get 16 · rows
/// registers each of an SM's 65,536 (64 at 4 rows, 128 at 8).
constexpr int lattice_strip_max_threads(int rows) { return 4096 / rows; }

/// Copies the window table (`table_bytes`, a multiple of 16) from `windows` in global memory to `table` in
/// shared memory, thread t of the block's nthreads taking the 16-byte words t, t + nthreads, … The caller
/// synchronises the block before the table is read.
__device__ __forceinline__ void lattice_stage_table(float4* table, const void* windows, int table_bytes, int t,
                                                    int nthreads) {
  const float4* src = reinterpret_cast<const float4*>(windows);
  for (int i = t; i < table_bytes / 16; i += nthreads) table[i] = src[i];
}

/// One row of a strip's half-sweep of colour `colour` at sweep `sweep` from rows already loaded: the 4 sites of
/// parity P (P = 0: columns c0, c0 + 2, …; P = 1: c0 + 1, …) of the 8 columns at `row` (the group gi of row r,
/// c0 = 8 gi, H = r mod 2), from the rows above and below (`up`, `down`), the row itself (`mid`), its side bytes
/// at row[−1] and row[8] and the coarse block b of its row pair (counter (⌊r/2⌋ · W/8 + gi, sweep, colour, 0),
/// half H of each word); the fine block (counter (…, 1)) is computed here only where a window draw does not
/// decide. Returns the new row word: `mid` with those 4 sites drawn (Rule::draw4_strip). Every strip kernel draws
/// its rows through this one function, so they give the same bits.
template <int P, int H, class Rule>
__device__ __forceinline__ uint2 lattice_strip_row(const Rule& rule, const float4* table, const uint8_t* row, int r,
                                                   int width, int gi, uint2 up, uint2 mid, uint2 down, uint4 b,
                                                   const LatticeKeys& keys, uint32_t sweep, uint32_t colour) {
  const int c0 = 8 * gi;
  const float f[4] = {lattice_window_uniform(b.x, H), lattice_window_uniform(b.y, H), lattice_window_uniform(b.z, H),
                      lattice_window_uniform(b.w, H)};
  const auto fine = [&](float (&uf)[4]) {
    const float u[4] = {add_rn(f[0], -kLatticeWindowBias), add_rn(f[1], -kLatticeWindowBias),
                        add_rn(f[2], -kLatticeWindowBias), add_rn(f[3], -kLatticeWindowBias)};
    lattice_fine_uniforms(rule, keys, lattice_pair_counter(r, gi, width), sweep, colour, H, u, uf);
  };
  // Parity 0's sites need the byte left of the group, parity 1's the byte right of it.
  const uint32_t left = P == 0 && c0 > 0 ? row[-1] : 0u;
  const uint32_t right = P == 1 && c0 + 8 < width ? row[8] : 0u;
  uint32_t s0, s1;
  lattice_sums8(mid.x, mid.y, up.x, up.y, down.x, down.y, left, right, s0, s1);
  int v[4];
  rule.template draw4_strip<P>(table, r, gi, s0, s1, f, fine, v);
  uint32_t o0 = mid.x, o1 = mid.y;
  lattice_merge4_byte0(o0, o1, P, v);
  return make_uint2(o0, o1);
}

/// Row J (and the rows after it) of one strip's half-sweep of colour C: the sites of parity P = (J + C) mod 2
/// (the strip starts at an even row r0) of the 8 columns c0 … c0+7 of row r0 + J. `up` and `mid` hold rows
/// r0 + J − 1 and r0 + J as loaded (their colour-C bytes may be stale in `up`: the sums read only the
/// other colour's bytes there); each row of the strip is loaded once and serves as the next row's `up`. An even
/// row computes its pair's coarse block, which the odd row after it takes as `b`.
template <int C, int R, int J, class Rule>
__device__ __forceinline__ void lattice_strip_rows(const Rule& rule, const float4* table, uint8_t* row, int r,
                                                   int width, int height, int gi, const LatticeKeys& keys,
                                                   uint32_t sweep, uint2 up, uint2 mid, uint4 b = uint4{}) {
  const uint2 down = r + 1 < height ? *reinterpret_cast<const uint2*>(row + width) : make_uint2(0, 0);
  if constexpr (J % 2 == 0)
    b = lattice_block(rule, keys, lattice_pair_counter(r, gi, width), sweep, static_cast<uint32_t>(C), 0u);
  *reinterpret_cast<uint2*>(row) = lattice_strip_row<(J + C) & 1, J & 1>(rule, table, row, r, width, gi, up, mid, down,
                                                                         b, keys, sweep, static_cast<uint32_t>(C));
  if constexpr (J + 1 < R) {
    if (r + 1 < height)
      lattice_strip_rows<C, R, J + 1>(rule, table, row + width, r + 1, width, height, gi, keys, sweep, mid, down, b);
  }
}

/// `sweeps` sweeps (numbered sweep0 …) in one cooperative launch, one thread per strip of R rows × 8
/// columns at a time (strips row-major over the lattice, in a grid-stride loop; a 2048² lattice has
/// 131,072 strips of 4 rows, one per thread on an H100 with 1024-thread blocks), a grid barrier after every
/// half-sweep. A strip's half-sweep loads each of its R + 2 rows' 8 bytes once (R + 2 loads for R groups)
/// and draws with Rule::draw4_strip (lattice_strip_row) from the window table `rule.windows`
/// (table_bytes, a multiple of 16) staged in dynamic shared memory. The colour, and with it each row's
/// site parity, is a compile-time constant. The same Philox counters and draws as sweep_persistent_kernel:
/// the same bits. Width a multiple of 8; any height; any block of at most 1024 threads (the launch bound
/// keeps the kernel at 64 registers, so a 1024-thread block fits an SM).
template <class Rule, int R = kLatticeStripRows>
__global__ void __launch_bounds__(1024) sweep_strips_kernel(Rule rule, uint8_t* x, int width, int height, LatticeKeys keys, uint32_t sweep0,
                                    int sweeps, int table_bytes) {
  static_assert(R % 2 == 0, "a strip starts at an even row");
  extern __shared__ float4 lattice_strip_table[];
  const int nthreads = static_cast<int>(blockDim.x * blockDim.y);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  lattice_stage_table(lattice_strip_table, rule.windows, table_bytes, t, nthreads);
  __syncthreads();
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int gpr = width / 8, strips = gpr * ((height + R - 1) / R);
  const int tid = static_cast<int>(blockIdx.x) * nthreads + t, nt = static_cast<int>(gridDim.x) * nthreads;
  auto half = [&](auto colour, uint32_t sweep) {
    constexpr int C = decltype(colour)::value;
    for (int s = tid; s < strips; s += nt) {
      const int sr = s / gpr, gi = s - sr * gpr, r0 = R * sr;
      uint8_t* row = x + static_cast<size_t>(r0) * width + 8 * gi;
      const uint2 up = r0 > 0 ? *reinterpret_cast<const uint2*>(row - width) : make_uint2(0, 0);
      const uint2 mid = *reinterpret_cast<const uint2*>(row);
      lattice_strip_rows<C, R, 0>(rule, lattice_strip_table, row, r0, width, height, gi, keys, sweep, up, mid);
    }
    grid.sync();
  };
  for (int h = 0; h < sweeps; ++h) {
    const uint32_t sweep = sweep0 + static_cast<uint32_t>(h);
    half(std::integral_constant<int, 0>(), sweep);
    half(std::integral_constant<int, 1>(), sweep);
  }
}

/// The coarse Philox blocks i = I0 … I1 − 1 of one strip's half-sweep of colour `colour` at sweep `sweep`: block i is
/// row pair i's, counter (g0 + i · gpr, sweep, colour, 0) with g0 = ⌊r0/2⌋ · W/8 + gi (as in lattice_strip_rows), all
/// computed round by round (philox4x32_round_keys_n) into c[i − I0].
template <int I0, int I1, class Rule>
__device__ __forceinline__ void lattice_strip_blocks(const Rule& rule, const LatticeKeys& keys, uint32_t g0, int gpr,
                                                     uint32_t sweep, uint32_t colour, uint32_t (&c)[I1 - I0][4]) {
#pragma unroll
  for (int i = I0; i < I1; ++i) {
    c[i - I0][0] = g0 + static_cast<uint32_t>(i * gpr);
    c[i - I0][1] = sweep;
    c[i - I0][2] = colour;
    c[i - I0][3] = 0u;
  }
  philox4x32_round_keys_n(c, keys.k0, kLatticeKeyHi, rule.rng_rounds);
}

/// Stores the coarse Philox blocks of one strip's half-sweep of colour `colour` at sweep `sweep` (r0 even): block i
/// (I0 ≤ i < R/2), of the row pair r0 + 2i, r0 + 2i + 1 (lattice_strip_blocks), goes to ws[i · stride]. Pairs at or
/// past `height` get no block.
template <int R, int I0, class Rule>
__device__ __forceinline__ void lattice_strip_words(const Rule& rule, const LatticeKeys& keys, uint32_t sweep,
                                                    uint32_t colour, int r0, int gpr, int gi, int height, uint4* ws,
                                                    int stride) {
  static_assert(R % 2 == 0, "a strip is whole row pairs");
  constexpr int N = R / 2;
  const uint32_t g0 = static_cast<uint32_t>(r0 >> 1) * static_cast<uint32_t>(gpr) + static_cast<uint32_t>(gi);
  if (r0 + R <= height) {  // every row in the lattice: the blocks round by round
    uint32_t c[N - I0][4];
    lattice_strip_blocks<I0, N>(rule, keys, g0, gpr, sweep, colour, c);
#pragma unroll
    for (int i = I0; i < N; ++i) ws[i * stride] = make_uint4(c[i - I0][0], c[i - I0][1], c[i - I0][2], c[i - I0][3]);
    return;
  }
#pragma unroll
  for (int i = I0; i < N; ++i) {
    if (r0 + 2 * i < height)
      ws[i * stride] = lattice_block(rule, keys, g0 + static_cast<uint32_t>(i * gpr), sweep, colour, 0u);
  }
}

/// Calls f(std::integral_constant<int, First + J>()) for each J of the sequence, in order: a strip's rows as
/// compile-time constants.
template <int First, int... J, class F>
__device__ __forceinline__ void lattice_for_rows(std::integer_sequence<int, J...>, const F& f) {
  (f(std::integral_constant<int, First + J>()), ...);
}

/// One strip's half-sweep of colour C (rows r0 … r0+R−1, columns 8gi … 8gi+7, `row` = its first row's group),
/// with the coarse blocks of row pairs i ≥ K given (ws[i · stride], lattice_strip_words) and those of the first
/// K pairs computed here (as lattice_strip_words does): the R rows and the rows above and below are
/// loaded before the first store (a row's side byte, in the neighbouring strip's columns, when the row is drawn),
/// then the R groups are drawn and stored. The sums read only colour 1−C's bytes, and the stores change only
/// colour C's, so loading the rows first gives lattice_strip_rows' bits.
template <int C, int R, int K, class Rule>
__device__ __forceinline__ void lattice_strip_preloaded(const Rule& rule, const float4* table, uint8_t* row, int r0,
                                                        int width, int height, int gi, const uint4* ws, int stride,
                                                        const LatticeKeys& keys, uint32_t sweep) {
  uint2 m[R + 2];
  m[0] = r0 > 0 ? *reinterpret_cast<const uint2*>(row - width) : make_uint2(0, 0);
#pragma unroll
  for (int J = 0; J <= R; ++J)
    m[J + 1] = r0 + J < height ? *reinterpret_cast<const uint2*>(row + J * width) : make_uint2(0, 0);
  uint4 b{};
  // Row J's parity, C + J mod 2, and its half of the pair's words, J mod 2, are compile-time constants.
  lattice_for_rows<0>(std::make_integer_sequence<int, R>(), [&](auto j) {
    constexpr int J = decltype(j)::value;
    if (r0 + J >= height) return;
    if constexpr (J % 2 == 0) {
      if constexpr (J / 2 < K)  // computed here, while the loads above are in flight
        b = lattice_block(rule, keys, lattice_pair_counter(r0 + J, gi, width), sweep, static_cast<uint32_t>(C), 0u);
      else
        b = ws[(J / 2) * stride];
    }
    *reinterpret_cast<uint2*>(row + J * width) =
        lattice_strip_row<(C + J) & 1, J & 1>(rule, table, row + J * width, r0 + J, width, gi, m[J], m[J + 1],
                                              m[J + 2], b, keys, sweep, static_cast<uint32_t>(C));
  });
}

/// Dynamic shared memory of sweep_strips_ahead_kernel: the window table (table_bytes, a multiple of 16), then
/// a 16-byte coarse block per row pair of a strip (`rows` even) and thread.
inline size_t lattice_strips_ahead_smem(int table_bytes, int threads, int rows = 4) {
  return static_cast<size_t>(table_bytes) + static_cast<size_t>(16) * (rows / 2) * threads;
}

/// sweep_strips_kernel's sweeps with the random numbers one half-sweep ahead. A thread computes the coarse Philox
/// blocks of its first strip's next half-sweep, except those of its first K row pairs, between its block's arrival
/// at the grid barrier and the wait for the other blocks (cooperative_groups' split barrier_arrive / barrier_wait),
/// so they fill the barrier's latency; they wait in shared memory (lattice_strips_ahead_smem). The first K pairs'
/// blocks are computed after the barrier, while the strip's loads are in flight (K = 1, docs/perf.md). Every strip's
/// rows are loaded before its first store (lattice_strip_preloaded), and a thread's strips are stepped without a
/// division. The counters do not depend on the state, so the bits are
/// sweep_strips_kernel's. Same launch contract (blocks of at most lattice_strip_max_threads(R) threads), with
/// lattice_strips_ahead_smem(table_bytes, threads, R) bytes of dynamic shared memory (over 48 KiB: the launch
/// raises cudaFuncAttributeMaxDynamicSharedMemorySize).
template <class Rule, int K = 1, int R = kLatticeStripRows>
__global__ void __launch_bounds__(lattice_strip_max_threads(R))
    sweep_strips_ahead_kernel(Rule rule, uint8_t* x, int width, int height, LatticeKeys keys, uint32_t sweep0,
                              int sweeps, int table_bytes) {
  static_assert(R % 2 == 0, "a strip starts at an even row");
  extern __shared__ float4 lattice_strip_table[];
  const int nthreads = static_cast<int>(blockDim.x * blockDim.y);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  lattice_stage_table(lattice_strip_table, rule.windows, table_bytes, t, nthreads);
  uint4* const ws = reinterpret_cast<uint4*>(lattice_strip_table + table_bytes / 16) + t;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int gpr = width / 8, srows = (height + R - 1) / R;
  const int tid = static_cast<int>(blockIdx.x) * nthreads + t, nt = static_cast<int>(gridDim.x) * nthreads;
  // The thread's first strip (row of strips sr0, group gi0) and the step to its next (nt strips on).
  const int sr0 = tid / gpr, gi0 = tid - sr0 * gpr, sr_step = nt / gpr, gi_step = nt - sr_step * gpr;
  const bool mine = sr0 < srows;
  if (mine) lattice_strip_words<R, K>(rule, keys, sweep0, 0u, R * sr0, gpr, gi0, height, ws, nthreads);
  __syncthreads();
  auto half = [&](auto colour, uint32_t sweep, bool last) {
    constexpr int C = decltype(colour)::value;
    // The first strip's words are in place; where there are more strips than threads, the next strip's words
    // go to the same slots when it comes.
    for (int sr = sr0, gi = gi0; sr < srows;) {
      lattice_strip_preloaded<C, R, K>(rule, lattice_strip_table, x + static_cast<size_t>(R * sr) * width + 8 * gi,
                                       R * sr, width, height, gi, ws, nthreads, keys, sweep);
      gi += gi_step;
      sr += sr_step;
      if (gi >= gpr) {
        gi -= gpr;
        ++sr;
      }
      if (sr < srows)
        lattice_strip_words<R, K>(rule, keys, sweep, static_cast<uint32_t>(C), R * sr, gpr, gi, height, ws, nthreads);
    }
    auto token = grid.barrier_arrive();
    if (mine && !last)
      lattice_strip_words<R, K>(rule, keys, C == 0 ? sweep : sweep + 1u, C == 0 ? 1u : 0u, R * sr0, gpr, gi0, height,
                                ws, nthreads);
    grid.barrier_wait(std::move(token));
  };
  for (int h = 0; h < sweeps; ++h) {
    const uint32_t sweep = sweep0 + static_cast<uint32_t>(h);
    half(std::integral_constant<int, 0>(), sweep, false);
    half(std::integral_constant<int, 1>(), sweep, h + 1 == sweeps);
  }
}

/// Tag bits of an exchanged row word (sweep_strips_resident_kernel): every state is below 64, so bits 6 and 7 of
/// each byte are free; the word of launch-local half-sweep h carries 1 + ⌊h / 2⌋ mod 2 in them (never 0, the
/// cleared buffer's), which tells it from the word of half-sweep h − 2 in the same slot.
__device__ __forceinline__ unsigned long long lattice_exchange_tag(int h) {
  return ((h >> 1) & 1) ? 0x8080808080808080ull : 0x4040404040404040ull;
}

/// A row word from the exchange buffer (relaxed, at GPU scope, from L2).
__device__ __forceinline__ unsigned long long lattice_exchange_load(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

/// Stores a row word to the exchange buffer (relaxed, at GPU scope).
__device__ __forceinline__ void lattice_exchange_store(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/// The halo word at p once it carries the tag of launch-local half-sweep h (`first`: a load already issued),
/// without its tag bits. Spins.
__device__ __forceinline__ uint2 lattice_exchange_wait(const unsigned long long* p, int h, unsigned long long first) {
  const unsigned long long tag = lattice_exchange_tag(h);
  unsigned long long w = first;
  while ((w & 0xC0C0C0C0C0C0C0C0ull) != tag) w = lattice_exchange_load(p);
  w &= 0x3F3F3F3F3F3F3F3Full;
  return make_uint2(static_cast<uint32_t>(w), static_cast<uint32_t>(w >> 32));
}

/// Whether sweep_strips_resident_kernel's strips of R rows split the block barrier between half-sweeps (an arrival
/// when a thread's strips are drawn, the wait after it has computed its own next random words), so that the last
/// warp's random words are off the block's critical path: strips of 4 rows do. Measured on the H100 (docs/perf.md,
/// "The resident kernel's block barrier, split"): 3.1 % faster in 1024-thread blocks, while strips of 8 rows were 4–8 %
/// slower with it and keep the plain barrier.
constexpr bool lattice_resident_split_barrier(int rows) { return rows == kLatticeStripRows; }

/// Whether sweep_strips_resident_kernel's strips of R rows compute their first strip's random words of the next
/// half-sweep beside their interior rows, where the schedulers interleave the Philox rounds with the rows' draws
/// (half of the row pairs' blocks beside row 1, the others beside row R / 2), rather than after the rows: strips of 8
/// rows, whose threads have 128 registers. They need a second set of words, since the half-sweep's own are still read.
/// Measured on the H100 (docs/perf.md, "The resident kernel's next random words beside its rows"): 1.3 % faster in
/// 512-thread blocks; strips of 4 rows spill at 64 registers and compute them after their rows.
constexpr bool lattice_resident_words_in_rows(int rows) { return rows > kLatticeStripRows; }

/// Dynamic shared memory of sweep_strips_resident_kernel: the window table (table_bytes, a multiple of 16), a
/// 16-byte coarse block per row pair of a strip and thread (two sets of them where lattice_resident_words_in_rows),
/// then the band twice (the half-sweep reads one copy and writes the other), each band_strip_rows · R rows of `width`
/// bytes.
inline size_t lattice_strips_resident_smem(int table_bytes, int threads, int band_strip_rows, int width,
                                           int rows = 4) {
  const size_t sets = lattice_resident_words_in_rows(rows) ? 2 : 1;
  return static_cast<size_t>(table_bytes) + sets * 16 * static_cast<size_t>(rows / 2) * threads +
         2 * static_cast<size_t>(band_strip_rows) * rows * static_cast<size_t>(width);
}

/// Words of the exchange buffer of sweep_strips_resident_kernel: two slots (half-sweep parity) × bands × 2 rows
/// (the band's first and last) × width / 8 words of 8 bytes.
inline size_t lattice_strips_resident_exchange_words(int bands, int width) {
  return static_cast<size_t>(2) * 2 * static_cast<size_t>(bands) * static_cast<size_t>(width / 8);
}

/// sweep_strips_ahead_kernel's sweeps with the lattice resident in shared memory and no grid barrier. Block b
/// owns the band of strip rows b · band_strip_rows … (b + 1) · band_strip_rows − 1 (all columns; gridDim.x bands
/// cover the lattice): it loads the band into shared memory at the start of the launch, runs every half-sweep
/// there, and stores it back at the end. The band is held twice: half-sweep h reads copy h mod 2 and writes every
/// row word, its new colour's bytes and the other colour's unchanged ones, into the other copy. So no thread
/// writes a word that another thread reads in the same half-sweep (compute-sanitizer's racecheck finds no hazard;
/// writing the words in place would rewrite the other colour's bytes, with their own values, under the
/// neighbouring strips' reads). The rows above and below the band (its halo) come from the
/// neighbouring bands: after each half-sweep h (launch-local, 0 … 2·sweeps − 1), the threads whose strips hold the
/// band's first or last row store that row's words to `exchange` (lattice_strips_resident_exchange_words; slot
/// h mod 2, relaxed stores at GPU scope), each word with its half-sweep's tag in the free bits 6 and 7 of every
/// byte (lattice_exchange_tag). In half-sweep h + 1 the strips next to a band edge wait for the word of
/// their neighbour's row with h's tag (relaxed loads; a word whose bytes do not all carry the tag, stale or
/// torn, is loaded again): the data are their own flag. The first half-sweep's halo is read from x.
///
/// Ordering. Within a block, a block barrier separates the half-sweeps (the strips read their neighbouring strips' rows
/// in shared memory); strips of 4 rows split it (lattice_resident_split_barrier): a thread arrives when its strips are
/// drawn and waits once it has computed its own next random words. Across blocks, slot h mod 2's word at column group
/// gi of band b's last row is written by b's thread of that group and read only by band b + 1's thread of the same
/// group (its first row's, symmetrically). b writes that word again only after half-sweep h + 2, which needs the word
/// of half-sweep h + 1 from b + 1's thread of that group; that thread writes it after its draw of h + 1, which reads
/// (and its stored values depend on) the word of h. So a word is read before it is overwritten, two consecutive words
/// of a slot differ in their tags (h and h + 2), and the cleared buffer's zero tag is never a half-sweep's.
/// Neighbouring blocks drift apart by at most one half-sweep; co-residency (a cooperative launch: all gridDim.x blocks
/// resident at once) keeps the spinning from deadlocking. The lattice x is read (the band, and the first half-sweep's
/// halo) before a block's second half-sweep ends and written (the band) after its last, and a block's second half-sweep
/// waits for its neighbours' first, so a neighbour's halo read precedes the band's store. `exchange` must be zero at
/// the launch's start.
///
/// Each thread's first strip's random words of the next half-sweep are computed beside its interior rows, into the
/// other of two sets, where lattice_resident_words_in_rows(R); otherwise before the block barrier (between the arrival
/// and the wait where it is split), while the strips at the band's edges wait for their halo. Later strips (more
/// strips than threads) compute theirs at their start (and, beside their rows, the first strip's next ones again). A
/// strip draws its rows 1 … R − 2, which never need a halo, first, while the halo's load is in flight, then row 0 and
/// row R − 1. The Philox counters and draws are sweep_strips_kernel's: the same bits. Width a multiple of 8; any
/// height; any block of at most lattice_strip_max_threads(R) threads; lattice_strips_resident_smem bytes of dynamic
/// shared memory.
template <class Rule, int R = kLatticeStripRows>
__global__ void __launch_bounds__(lattice_strip_max_threads(R))
    sweep_strips_resident_kernel(Rule rule, uint8_t* x, int width, int height, LatticeKeys keys, uint32_t sweep0,
                                 int sweeps, int table_bytes, int band_strip_rows, unsigned long long* exchange) {
  static_assert(R % 2 == 0 && R >= 4, "strips of whole row pairs, with rows that need no halo");
  static_assert(!lattice_resident_words_in_rows(R) || (R % 4 == 0 && R / 2 > 1),
                "the next words in two groups of R / 4 row pairs, beside rows 1 and R / 2");
  extern __shared__ float4 lattice_strip_table[];
  const int nthreads = static_cast<int>(blockDim.x * blockDim.y);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  lattice_stage_table(lattice_strip_table, rule.windows, table_bytes, t, nthreads);
  constexpr bool in_rows = lattice_resident_words_in_rows(R);
  constexpr int sets = in_rows ? 2 : 1;
  uint4* const ws0 = reinterpret_cast<uint4*>(lattice_strip_table + table_bytes / 16) + t;
  uint8_t* const band = reinterpret_cast<uint8_t*>(lattice_strip_table + table_bytes / 16 + sets * (R / 2) * nthreads);
  const size_t band_bytes = static_cast<size_t>(band_strip_rows) * R * static_cast<size_t>(width);
  const int gpr = width / 8, srows = (height + R - 1) / R;
  const int b = static_cast<int>(blockIdx.x), bands = static_cast<int>(gridDim.x);
  const int sr_begin = b * band_strip_rows, nsr = min(band_strip_rows, srows - sr_begin);
  const int r_begin = R * sr_begin, nrows = min(R * nsr, height - r_begin);
  const int strips = nsr * gpr;
  // The band in: 8-byte words (width is a multiple of 8).
  {
    const uint2* src = reinterpret_cast<const uint2*>(x + static_cast<size_t>(r_begin) * width);
    uint2* dst = reinterpret_cast<uint2*>(band);
    for (int i = t; i < nrows * gpr; i += nthreads) dst[i] = src[i];
  }
  // The thread's first strip (band-local strip row lsr0, group gi0) and the step to its next (nthreads strips on).
  const int lsr0 = t / gpr, gi0 = t - lsr0 * gpr, sr_step = nthreads / gpr, gi_step = nthreads - sr_step * gpr;
  if (t < strips)
    lattice_strip_words<R, 0>(rule, keys, sweep0, 0u, r_begin + R * lsr0, gpr, gi0, height, ws0, nthreads);
  // The first strip's counter base (lattice_strip_blocks) and its row pairs in the lattice (bit i: pair i), for its
  // next words beside the rows.
  const uint32_t g_first = static_cast<uint32_t>((r_begin + R * lsr0) >> 1) * static_cast<uint32_t>(gpr) +
                           static_cast<uint32_t>(gi0);
  uint32_t pairs_first = 0;
  for (int i = 0; i < R / 2; ++i)
    if (t < strips && r_begin + R * lsr0 + 2 * i < height) pairs_first |= 1u << i;
  constexpr bool split = lattice_resident_split_barrier(R);
  // cuda::barrier's constructor is trivial on the device; init() sets it up (the CUDA Programming Guide's pattern).
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> half_done;
#pragma nv_diag_default static_var_with_dynamic_init
  if (split && t == 0) init(&half_done, nthreads);
  __syncthreads();
  const size_t slot_words = static_cast<size_t>(bands) * 2 * gpr;
  // The half-sweep, the strip, the row and the interior rows are lambdas marked always_inline: the code nvcc then
  // schedules ran 0.8 % faster in strips of 8 rows (docs/perf.md, "The resident kernel's lambdas always inlined").
  auto half = [&](auto colour, uint32_t sweep, int h) __attribute__((always_inline)) {
    constexpr int C = decltype(colour)::value;
    // The half-sweep's words, and where the first strip's next words go: the other set, or the same after the rows.
    uint4* const ws = ws0 + (in_rows ? (h & 1) : 0) * (R / 2) * nthreads;
    uint4* const ws_next = ws0 + (in_rows ? ((h + 1) & 1) : 0) * (R / 2) * nthreads;
    const uint32_t sweep_next = C == 0 ? sweep : sweep + 1u, colour_next = C == 0 ? 1u : 0u;
    // Slot h mod 2 of the exchange buffer at column group 0 of band 0's first row; the other slot is h − 1's.
    unsigned long long* const out = exchange + static_cast<size_t>(h & 1) * slot_words;
    const unsigned long long* const in = exchange + static_cast<size_t>((h + 1) & 1) * slot_words;
    // The copy of the band this half-sweep reads, and the one it writes.
    const uint8_t* const cur = band + static_cast<size_t>(h & 1) * band_bytes;
    uint8_t* const next = band + static_cast<size_t>((h + 1) & 1) * band_bytes;
    for (int lsr = lsr0, gi = gi0, first = 1; lsr < nsr; first = 0) {
      const int r0 = r_begin + R * lsr;
      const uint32_t at = static_cast<uint32_t>(R * lsr) * static_cast<uint32_t>(width) + 8u * static_cast<uint32_t>(gi);
      const uint8_t* row = cur + at;
      if (!first)
        lattice_strip_words<R, 0>(rule, keys, sweep, static_cast<uint32_t>(C), r0, gpr, gi, height, ws, nthreads);
      // The strip's half-sweep; F: every row of the strip is inside the lattice (all strips but a last partial
      // one), so that the rows' draws need no bounds and the compiler may interleave them.
      const auto strip = [&](auto full) __attribute__((always_inline)) {
        constexpr bool F = decltype(full)::value;
        // Where the rows above and below come from: the band in shared memory, the neighbouring band (x in the
        // first half-sweep, else the exchange buffer) or nothing (beyond the lattice).
        const bool up_halo = lsr == 0 && r0 > 0, down_halo = lsr + 1 == nsr && r0 + R < height;
        // Word b·2·gpr + gi of a slot is this band's first row at group gi, + gpr its last; the band above's last row
        // is at − gpr, the band below's first at + 2·gpr.
        const int edge = b * 2 * gpr + gi;
        unsigned long long up_w = 0, down_w = 0;
        // Warp-uniform where a warp's threads share a strip row (W ≥ 256): the interior strips branch past this.
        if (h > 0 && (up_halo || down_halo)) {
          if (up_halo) up_w = lattice_exchange_load(in + (edge - gpr));
          if (down_halo) down_w = lattice_exchange_load(in + (edge + 2 * gpr));
        }
        uint2 m[R + 2];
        m[0] = lsr > 0 ? *reinterpret_cast<const uint2*>(row - width) : make_uint2(0, 0);
#pragma unroll
        for (int J = 0; J < R; ++J)
          m[J + 1] = F || r0 + J < height ? *reinterpret_cast<const uint2*>(row + J * width) : make_uint2(0, 0);
        m[R + 1] = lsr + 1 < nsr ? *reinterpret_cast<const uint2*>(row + R * width) : make_uint2(0, 0);
        // Rows 1 … R − 2 need no halo; each row's new word goes to the other copy of the band.
        const auto draw = [&](auto j, uint2 up, uint2 mid, uint2 down) __attribute__((always_inline)) {
          constexpr int J = decltype(j)::value, P = (C + J) & 1;
          const uint2 o = lattice_strip_row<P, J & 1>(rule, lattice_strip_table, row + J * width, r0 + J, width, gi, up,
                                                      mid, down, ws[(J / 2) * nthreads], keys, sweep,
                                                      static_cast<uint32_t>(C));
          *reinterpret_cast<uint2*>(next + at + J * width) = o;
          return o;
        };
        const auto interior = [&](auto j) __attribute__((always_inline)) {
          constexpr int J = decltype(j)::value;
          if constexpr (in_rows && (J == 1 || J == R / 2)) {
            // The first strip's next words of row pairs I0 … I0 + R/4 − 1, in the row's basic block (no branch but
            // the stores' predicates) so that the rounds fill its latencies; pairs past the lattice are not stored.
            constexpr int I0 = J == 1 ? 0 : R / 4;
            uint32_t c[R / 4][4];
            lattice_strip_blocks<I0, I0 + R / 4>(rule, keys, g_first, gpr, sweep_next, colour_next, c);
#pragma unroll
            for (int q = 0; q < R / 4; ++q)
              if (pairs_first >> (I0 + q) & 1u)
                ws_next[(I0 + q) * nthreads] = make_uint4(c[q][0], c[q][1], c[q][2], c[q][3]);
          }
          if (F || r0 + J < height) draw(j, m[J], m[J + 1], m[J + 2]);
        };
        lattice_for_rows<1>(std::make_integer_sequence<int, R - 2>(), interior);
        if (up_halo)
          m[0] = h > 0 ? lattice_exchange_wait(in + (edge - gpr), h - 1, up_w)
                       : *reinterpret_cast<const uint2*>(x + static_cast<size_t>(r0 - 1) * width + 8 * gi);
        const uint2 o0 = draw(std::integral_constant<int, 0>(), m[0], m[1], m[2]);
        // The band's first row to the band above (none for the lattice's first band).
        if (up_halo)
          lattice_exchange_store(out + edge, (static_cast<unsigned long long>(o0.y) << 32 | o0.x) | lattice_exchange_tag(h));
        if (down_halo)
          m[R + 1] = h > 0 ? lattice_exchange_wait(in + (edge + 2 * gpr), h - 1, down_w)
                           : *reinterpret_cast<const uint2*>(x + static_cast<size_t>(r0 + R) * width + 8 * gi);
        if (F || r0 + R - 1 < height) {
          const uint2 o3 = draw(std::integral_constant<int, R - 1>(), m[R - 1], m[R], m[R + 1]);
          // The band's last row to the band below (none for the lattice's last band).
          if (down_halo)
            lattice_exchange_store(out + (edge + gpr),
                                   (static_cast<unsigned long long>(o3.y) << 32 | o3.x) | lattice_exchange_tag(h));
        }
      };
      if (r0 + R <= height) strip(std::true_type());
      else strip(std::false_type());
      gi += gi_step;
      lsr += sr_step;
      if (gi >= gpr) {
        gi -= gpr;
        ++lsr;
      }
    }
    // Arrive when the strips are drawn, then compute the next half-sweep's words (the thread's own) unless the rows
    // did, then wait.
    [[maybe_unused]] cuda::barrier<cuda::thread_scope_block>::arrival_token token{};
    if constexpr (split) token = half_done.arrive();
    if (!in_rows && h + 1 < 2 * sweeps && t < strips)
      lattice_strip_words<R, 0>(rule, keys, sweep_next, colour_next, r_begin + R * lsr0, gpr, gi0, height, ws_next,
                                nthreads);
    if constexpr (split) half_done.wait(std::move(token));
    else __syncthreads();
  };
  for (int s = 0; s < sweeps; ++s) {
    const uint32_t sweep = sweep0 + static_cast<uint32_t>(s);
    half(std::integral_constant<int, 0>(), sweep, 2 * s);
    half(std::integral_constant<int, 1>(), sweep, 2 * s + 1);
  }
  // The band out: 2 · sweeps half-sweeps leave it in the copy the first one read.
  {
    const uint2* src = reinterpret_cast<const uint2*>(band);
    uint2* dst = reinterpret_cast<uint2*>(x + static_cast<size_t>(r_begin) * width);
    for (int i = t; i < nrows * gpr; i += nthreads) dst[i] = src[i];
  }
}

/// The initial state (uint8, any width).
template <class Rule>
__global__ void lattice_initial_kernel(Rule rule, uint8_t* x, int width, int height, uint32_t seed) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= height || c >= width) return;
  x[static_cast<size_t>(r) * width + c] =
      static_cast<uint8_t>(rule.initial(r, c, lattice_uniform(seed, width, r, c, kLatticeInitialSweep, rule.rng_rounds)));
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

/// `shape.sweeps` sweeps (numbered sweep0 …) from `in` to `out` (uint8, width a multiple of 8); grid ⌈W/tw⌉ × ⌈H/th⌉
/// blocks, any 1D thread count up to 1024 (the launch bound: 64 registers), dynamic shared memory shape.smem_bytes()
/// rounded up to 16 plus 4 · table_floats: the rule's weight table (rule.weights, table_floats floats) is staged there
/// when table_floats > 0. The tile is updated in place: a group's 8-byte word is rewritten whole, its other colour's
/// bytes with their unchanged values, while the neighbouring groups read those bytes. The values read cannot change, so
/// the bits are the CPU's (the tests check them), but compute-sanitizer's racecheck reports these accesses as hazards;
/// sweep_strips_resident_kernel avoids them with two copies of its band.
template <class Rule>
__global__ void __launch_bounds__(1024) deep_tile_kernel(Rule rule, const uint8_t* __restrict__ in,
                                                         uint8_t* __restrict__ out, int width, int height,
                                                         LatticeKeys keys, uint32_t sweep0, DeepTileShape shape,
                                                         int table_floats) {
  extern __shared__ __align__(16) uint8_t tile[];
  if (table_floats > 0) {
    float4* table = reinterpret_cast<float4*>(tile + (shape.smem_bytes() + 15) / 16 * 16);
    const float4* src = reinterpret_cast<const float4*>(rule.weights);
    for (int i = threadIdx.x; i < table_floats / 4; i += blockDim.x) table[i] = src[i];
    rule.weights = reinterpret_cast<const float*>(table);
  }
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
      const uint2 up = gy > 0 ? *reinterpret_cast<const uint2*>(row - TW) : make_uint2(0, 0);
      const uint2 down = gy + 1 < height ? *reinterpret_cast<const uint2*>(row + TW) : make_uint2(0, 0);
      const uint32_t left = lg > 0 && gx > 0 ? row[-1] : 0u;
      const uint32_t right = lg + 1 < groups && gx + 8 < width ? row[8] : 0u;
      uint2 v = lattice_update_group(rule, mid, up, down, left, right, gy, gx, width, height, keys, sweep, colour);
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
/// document's per-iteration buffer of random numbers (here from Philox4x32-`rounds`, keyed as above).
template <int = 0>
__global__ void blog_fill_uniforms_kernel(float* u, int width, int height, uint32_t seed, uint32_t sweep,
                                                 int colour, int rounds) {
  const int pairs = (width + 1) / 2;
  const int pr = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (pr >= pairs || r >= height) return;
  const int c = 2 * pr + ((r + colour) & 1);
  u[static_cast<size_t>(r) * pairs + pr] = c < width ? lattice_uniform(seed, width, r, c, sweep, rounds) : 0.f;
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

/// The document's sample kernel: block bw × bh threads (at most 1024: the launch bound), one thread per pixel
/// pair, a (2bw + 2) × (bh + 2) int tile (rows padded by `pad` ints) copied from `padded`, the colour-`colour`
/// site of each pair drawn with Rule::draw_direct from u, written into img. The padded neighbour beyond the border
/// holds the site's own value (symmetric padding); it is left out of the loss, which is what its zero loss means.
template <class Rule>
__global__ void __launch_bounds__(1024) blog_sample_kernel(Rule rule, const int* __restrict__ padded,
                                                           const float* __restrict__ u, int* __restrict__ img,
                                                           int width, int height, int colour, int pad) {
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
  img[static_cast<size_t>(r) * width + c] = rule.draw_direct(r, c, n, k, u[static_cast<size_t>(r) * ((width + 1) / 2) + pair]);
}

}  // namespace mv
