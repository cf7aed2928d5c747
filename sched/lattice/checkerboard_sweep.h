// Checkerboard (red/black) heat-bath sweeps on a 2D lattice, as templates over the site rule (the model
// lives in render/; sched/ sees only its draw()). The source document ("Poisson-Icing: Gibbs sampling
// with a GPU using CuPy", ../shared/papers/poisson-ising-gibbs-cupy.txt, "Gibbs Sampling", Figs 4-5)
// samples all sites of one colour at once — they are conditionally independent given the other colour —
// then all sites of the other colour; one sweep is the two half-sweeps.
//
// A Rule provides (MV_HD):
//   int draw(int row, int col, int S, int k, float u) const;  // new value given k real neighbours summing to S
//   int initial(int row, int col, float u) const;             // the starting value
//   int rng_rounds;                                           // Philox rounds, 7 or 10 (base/philox.h)
// and, for the kernels of sched/lattice/checkerboard_sweep.cuh, the same draw for the four sites
// c0 + 2j + p (j = 0 … 3) of one row at once (c0 a multiple of 8), from their coarse uniforms and a callable
// fine(float (&u)[4]) that gives their full uniforms, the draw's u (called only where the rule needs them):
//   template <class Fine> __device__ void draw4(int row, int c0, int p, const int* S, const int* k,
//                                               const float* coarse, const Fine& fine, int* out) const;
// and, for the strip kernels, a table-driven draw of the four parity-P sites of a group from the group's
// byte-wise neighbour sums (lattice_sums8), their coarse uniforms as window uniforms f = 128 + u₁₆
// (lattice_window_uniform) and a table the kernel stages in shared memory from `windows`:
//   template <int P, class Fine> __device__ void draw4_strip(const float4* table, int row, int gi, uint32_t s0,
//                                 uint32_t s1, const float* window_u, const Fine& fine, int* out) const;
// (sites 8gi + P + 2j; its values in the low byte of out[j]: lattice_merge4_byte0).
// States are uint8, at most 255; the kernels' byte-wise
// neighbour sums need 4 · (largest state) < 256.
//
// The random numbers are counter-based (Philox4x32-R, R = the rule's rng_rounds, base/philox.h), keyed by (seed,
// site, sweep, colour), so the CPU reference below and every kernel of sched/lattice/checkerboard_sweep.cuh compute
// identical bits. Colour of (row, col) = (row + col) mod 2; half-sweep c of sweep s updates colour c, c = 0 first.
// A site's uniform has 24 bits in two parts (render/lattice/poisson_ising.h, kPoissonIsingCoarseStep): a coarse
// 16-bit one, which decides almost every draw, and 8 fine bits, drawn only where they are needed. Rows 2i and
// 2i + 1 and the 8 columns 8g … 8g + 7 (group g of G = ⌈W/8⌉ per row) hold eight sites of each colour, four per
// row; the j-th colour-c site of row 2i + h (column 8g + ((h + c) mod 2) + 2j) takes its coarse bits from half h
// of word j of the coarse block, counter (iG + g, sweep, c, 0) (h = 0: the high 16 bits, h = 1: the low 16), and
// its fine bits from byte h of word j of the fine block, counter (iG + g, sweep, c, 1). Its uniform is
// u = (coarse bits · 2⁸ + fine bits) · 2⁻²⁴ (lattice_uniform), the coarse uniform the 16 bits · 2⁻¹⁶. So one
// Philox block serves eight sites of a half-sweep, where a draw that decides from the coarse uniform alone
// (the window draw) needs no more. The initial state uses sweep 0xFFFFFFFF.
//
// Borders: a missing neighbour is left out (k < 4), the document's symmetric padding (its loss is zero).
#pragma once

#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/common.h"
#include "base/float_rn.h"
#include "base/philox.h"

namespace mv {

inline constexpr uint32_t kLatticeInitialSweep = 0xFFFFFFFFu;
inline constexpr uint32_t kLatticeKeyHi = 0x50495347u;  // second key word ("PISG")

/// The seed's Philox round keys (philox4x32_round_keys): the kernels take them by value, as an argument.
struct LatticeKeys {
  uint32_t k0[10];
};
inline LatticeKeys lattice_keys(uint32_t seed) {
  LatticeKeys k;
  for (uint32_t r = 0; r < 10; ++r) k.k0[r] = seed + r * kPhiloxW0;
  return k;
}

/// Groups of 8 columns per row in the random-number numbering: G = ⌈width / 8⌉.
MV_HD MV_INLINE uint32_t lattice_groups_per_row(uint32_t width) { return (width + 7u) / 8u; }

/// Word 0 of the Philox counters of rows 2i, 2i + 1 (i = ⌊row / 2⌋) and column group `group`: i · G + group.
MV_HD MV_INLINE uint32_t lattice_pair_counter(uint32_t row, uint32_t group, uint32_t width) {
  return (row >> 1) * lattice_groups_per_row(width) + group;
}

/// The coarse uniform k · 2⁻¹⁶ (exact) of the site whose coarse bits k are half `half` of `word` (0: bits 16 … 31,
/// 1: bits 0 … 15): half = the site's row mod 2.
MV_HD MV_INLINE float lattice_coarse_uniform(uint32_t word, int half) {
#if defined(__CUDA_ARCH__)
  // The float 2²³ + k (k in the low mantissa bits under the exponent of 2²³), then (2²³ + k) · 2⁻¹⁶ − 2⁷ in one
  // fused multiply-add, exact at every step.
  const uint32_t f = (half ? word & 0xFFFFu : word >> 16) | 0x4B000000u;
  return __fmaf_rn(__uint_as_float(f), 1.f / 65536.f, -128.f);
#else
  return static_cast<float>(half ? word & 0xFFFFu : word >> 16) * (1.f / 65536.f);
#endif
}

/// The strip kernels' form of the coarse uniform, for the rule's draw4_strip: f = 2⁷ + k · 2⁻¹⁶
/// (kLatticeWindowBias plus lattice_coarse_uniform's value, exact), the float with exponent 2⁷ and the 16 coarse
/// bits k (half `half` of `word`) as its low mantissa bits: one byte permutation on the GPU.
inline constexpr float kLatticeWindowBias = 128.f;
MV_HD MV_INLINE float lattice_window_uniform(uint32_t word, int half) {
#if defined(__CUDA_ARCH__)
  // Bytes 0, 1 of the result from bytes 2, 3 (half 0) or 0, 1 (half 1) of word; bytes 2, 3 from 0x4300.
  return __uint_as_float(__byte_perm(word, 0x43000000u, half ? 0x7410u : 0x7432u));
#else
  return kLatticeWindowBias + lattice_coarse_uniform(word, half);
#endif
}

/// The full uniform (k · 2⁸ + b) · 2⁻²⁴ (exact) of the site whose coarse uniform is `coarse` = k · 2⁻¹⁶
/// (lattice_coarse_uniform) and whose fine bits b are byte `half` of `fine_word`: coarse + b · 2⁻²⁴, exact (the sum
/// has at most 24 significant bits).
MV_HD MV_INLINE float lattice_fine_uniform(float coarse, uint32_t fine_word, int half) {
  return fma_rn(static_cast<float>((fine_word >> (8 * half)) & 0xFFu), 1.f / 16777216.f, coarse);
}

/// Word j = (col mod 8) / 2 of the coarse (part 0) or fine (part 1) Philox4x32-`rounds` block of site (row, col) at
/// sweep `sweep`: counter (lattice_pair_counter(row, col / 8), sweep, (row + col) mod 2, part), the numbering above.
MV_HD MV_INLINE uint32_t lattice_site_word(uint32_t seed, uint32_t width, uint32_t row, uint32_t col, uint32_t sweep,
                                           int rounds, uint32_t part) {
  const uint32_t g = lattice_pair_counter(row, col >> 3, width);
  const Philox4x32 b = philox4x32(g, sweep, (row + col) & 1u, part, seed, kLatticeKeyHi, rounds);
  return b.v[(col & 7u) >> 1];
}

/// The coarse uniform of site (row, col) at sweep `sweep` (lattice_uniform's first 16 bits).
MV_HD MV_INLINE float lattice_coarse_uniform_at(uint32_t seed, uint32_t width, uint32_t row, uint32_t col,
                                                uint32_t sweep, int rounds) {
  const uint32_t word = lattice_site_word(seed, width, row, col, sweep, rounds, 0u);
  return lattice_coarse_uniform(word, static_cast<int>(row & 1u));
}

/// The (full) uniform of site (row, col) at sweep `sweep` (its colour is (row + col) mod 2) from Philox4x32-`rounds`:
/// the coarse and the fine block of its row pair and group (both computed here; the kernels compute the fine
/// one only where a draw needs it).
MV_HD MV_INLINE float lattice_uniform(uint32_t seed, uint32_t width, uint32_t row, uint32_t col, uint32_t sweep,
                                      int rounds) {
  return lattice_fine_uniform(lattice_coarse_uniform_at(seed, width, row, col, sweep, rounds),
                              lattice_site_word(seed, width, row, col, sweep, rounds, 1u), static_cast<int>(row & 1u));
}

/// k and S of site (row, col) of a row-major uint8 lattice: its real neighbours' count and sum.
MV_HD MV_INLINE void lattice_neighbours(const uint8_t* x, int width, int height, int row, int col, int& k, int& S) {
  const size_t i = static_cast<size_t>(row) * width + col;
  k = 0;
  S = 0;
  if (col > 0) { S += x[i - 1]; ++k; }
  if (col + 1 < width) { S += x[i + 1]; ++k; }
  if (row > 0) { S += x[i - width]; ++k; }
  if (row + 1 < height) { S += x[i + width]; ++k; }
}

/// The neighbour sums of the 8 columns c0 … c0+7 of one row, byte-wise in two 32-bit words: byte b of
/// (s0, s1) = up + down + left + right of column c0 + b. (m0, m1), (u0, u1), (d0, d1): the row's own, upper
/// and lower 8 bytes (little-endian: byte 0 is column c0; zero beyond the lattice); `left`, `right`: the
/// bytes at c0 − 1 and c0 + 8. Each sum is below 256 (4 · largest state < 256), so no byte carries into
/// the next and the halves need no carry between them.
MV_HD MV_INLINE void lattice_sums8(uint32_t m0, uint32_t m1, uint32_t u0, uint32_t u1, uint32_t d0, uint32_t d1,
                                   uint32_t left, uint32_t right, uint32_t& s0, uint32_t& s1) {
  const uint32_t l0 = (m0 << 8) | left, l1 = (m1 << 8) | (m0 >> 24);   // the left neighbours' bytes
  const uint32_t r0 = (m0 >> 8) | (m1 << 24), r1 = (m1 >> 8) | (right << 24);  // the right neighbours'
  s0 = u0 + d0 + l0 + r0;
  s1 = u1 + d1 + l1 + r1;
}

/// The row's 8 bytes (m0, m1) with the four sites of parity p (bytes p, p+2, p+4, p+6) replaced by v[0 … 3]
/// (each < 256).
MV_HD MV_INLINE void lattice_merge4(uint32_t& m0, uint32_t& m1, int p, const int* v) {
  const uint32_t sh = 8u * static_cast<uint32_t>(p), keep = ~(0x00FF00FFu << sh);
  m0 = (m0 & keep) | ((static_cast<uint32_t>(v[0]) | static_cast<uint32_t>(v[1]) << 16) << sh);
  m1 = (m1 & keep) | ((static_cast<uint32_t>(v[2]) | static_cast<uint32_t>(v[3]) << 16) << sh);
}

/// lattice_merge4 for values in the low byte of v[0 … 3] (the other bytes ignored): two byte permutations per
/// word on the GPU.
MV_HD MV_INLINE void lattice_merge4_byte0(uint32_t& m0, uint32_t& m1, int p, const int* v) {
#if defined(__CUDA_ARCH__)
  // Byte p of the word from byte 0 of v[0] (v[2]), then byte p + 2 from byte 0 of v[1] (v[3]).
  const uint32_t sa = p ? 0x3240u : 0x3214u, sb = p ? 0x4210u : 0x3410u;
  m0 = __byte_perm(__byte_perm(m0, static_cast<uint32_t>(v[0]), sa), static_cast<uint32_t>(v[1]), sb);
  m1 = __byte_perm(__byte_perm(m1, static_cast<uint32_t>(v[2]), sa), static_cast<uint32_t>(v[3]), sb);
#else
  const int low[4] = {v[0] & 0xFF, v[1] & 0xFF, v[2] & 0xFF, v[3] & 0xFF};
  lattice_merge4(m0, m1, p, low);
#endif
}

/// The initial state on the CPU (TBB over rows).
template <class Rule>
void lattice_initial_cpu(const Rule& rule, uint8_t* x, int width, int height, uint32_t seed) {
  tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const tbb::blocked_range<int>& rows) {
    for (int r = rows.begin(); r != rows.end(); ++r)
      for (int c = 0; c < width; ++c) {
        x[static_cast<size_t>(r) * width + c] =
            static_cast<uint8_t>(rule.initial(r, c, lattice_uniform(seed, width, r, c, kLatticeInitialSweep, rule.rng_rounds)));
      }
  });
}

/// Rows row_begin … row_end − 1 of half-sweep `colour` (0: the sites with row + column even, 1: the others) of
/// sweep `sweep` on the CPU reference (TBB over rows). A half-sweep's sites read only the other colour's (the
/// lattice is not periodic) and each draws its own counter-based uniform, so a half-sweep run as bands of rows,
/// in any order, gives the bits of the whole half-sweep.
template <class Rule>
void checkerboard_half_sweep_rows_cpu(const Rule& rule, uint8_t* x, int width, int height, uint32_t seed, uint32_t sweep,
                                      int colour, int row_begin, int row_end) {
  tbb::parallel_for(tbb::blocked_range<int>(row_begin, row_end, 16), [&](const tbb::blocked_range<int>& rows) {
    for (int r = rows.begin(); r != rows.end(); ++r)
      for (int c = (r + colour) & 1; c < width; c += 2) {
        int k, S;
        lattice_neighbours(x, width, height, r, c, k, S);
        x[static_cast<size_t>(r) * width + c] =
            static_cast<uint8_t>(rule.draw(r, c, S, k, lattice_uniform(seed, width, r, c, sweep, rule.rng_rounds)));
      }
  });
}

/// `sweeps` full sweeps on the CPU reference (TBB over rows; each half-sweep is a parallel loop),
/// numbered first_sweep, first_sweep + 1, …
template <class Rule>
void checkerboard_sweeps_cpu(const Rule& rule, uint8_t* x, int width, int height, uint32_t seed, uint32_t first_sweep,
                             uint32_t sweeps) {
  for (uint32_t s = first_sweep; s != first_sweep + sweeps; ++s)
    for (int colour = 0; colour < 2; ++colour)
      checkerboard_half_sweep_rows_cpu(rule, x, width, height, seed, s, colour, 0, height);
}

}  // namespace mv
