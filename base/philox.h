// Philox4x32-10 (and -7), the counter-based random number generator of Salmon, Moraes, Dror and Shaw, "Parallel
// random numbers: as easy as 1, 2, 3" (SC 2011, §3 and Table 2): ten rounds of a 4×32-bit
// multiply-hi/lo bijection keyed by a 2×32-bit key. Every output block is a pure function of (counter,
// key), so the CPU and the GPU draw the same bits for the same counter wherever and in whatever order the
// draw runs. Integer-only: identical on every compiler and device.
#pragma once

#include "base/common.h"

namespace mv {

struct Philox4x32 {
  uint32_t v[4];
};

/// One round of the Philox4x32 bijection with round key (k0, k1).
MV_HD MV_INLINE void philox4x32_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // multipliers (Salmon et al. 2011, Table 2)
#if defined(__CUDA_ARCH__)
  // 32-bit halves (one IMAD.WIDE.U32 or an IMAD.HI and an IMAD each): a 64-bit product lets the compiler
  // carry the XORs and the next product in 64 bits.
  const uint32_t hi0 = __umulhi(kM0, c0), lo0 = kM0 * c0;
  const uint32_t hi1 = __umulhi(kM1, c2), lo1 = kM1 * c2;
#else
  const uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
#endif
  const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
  c0 = n0;
  c1 = lo1;
  c2 = n2;
  c3 = lo0;
}

inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;  // Weyl key increments

/// One Philox4x32-10 block: 4 random words from the 128-bit counter (c0..c3) and the 64-bit key (k0, k1).
MV_HD MV_INLINE Philox4x32 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                         uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) philox4x32_round(c0, c1, c2, c3, k0 + r * kPhiloxW0, k1 + r * kPhiloxW1);
  return {{c0, c1, c2, c3}};
}

/// The round schedule of Philox4x32-R for R = `rounds` ∈ {7, 10}: round(r) for r = 0 … 6, then for 7 … 9 where
/// rounds > 7 (a branch uniform over a kernel's threads: the round count is a kernel argument). Unrolled on
/// the GPU. Salmon et al. 2011, Table 2: 7 rounds is the fewest with which Philox4×32 passes TestU01's BigCrush
/// ("Crush-resistant"); their default, 10, adds a safety margin of 3 rounds.
template <class Round>
MV_HD MV_INLINE void philox4x32_rounds(int rounds, Round round) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < 7; ++r) round(r);
  if (rounds > 7) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int r = 7; r < 10; ++r) round(r);
  }
}

/// Philox4x32-R for R = `rounds` ∈ {7, 10} (philox4x32_rounds). philox4x32(…, 10) = philox4x32_10(…).
MV_HD MV_INLINE Philox4x32 philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1,
                                      int rounds) {
  philox4x32_rounds(rounds, [&](int r) { philox4x32_round(c0, c1, c2, c3, k0 + r * kPhiloxW0, k1 + r * kPhiloxW1); });
  return {{c0, c1, c2, c3}};
}

/// philox4x32(…, rounds) with the first key word's round keys given: k0[r] = k0 + r · 0x9E3779B9 for
/// r = 0 … rounds − 1. A kernel that takes them as an argument reads them from its parameter bank instead
/// of adding them per block.
MV_HD MV_INLINE Philox4x32 philox4x32_round_keys(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, const uint32_t* k0,
                                                 uint32_t k1, int rounds) {
  philox4x32_rounds(rounds, [&](int r) { philox4x32_round(c0, c1, c2, c3, k0[r], k1 + r * kPhiloxW1); });
  return {{c0, c1, c2, c3}};
}

/// philox4x32_round_keys on N counters at once, round by round: the N blocks are independent chains that the
/// GPU's schedulers interleave, where one block at a time leaves each round's multiply latency exposed.
/// c[i] = counter i in, block i out: the same words as N calls of philox4x32_round_keys.
template <int N>
MV_HD MV_INLINE void philox4x32_round_keys_n(uint32_t (&c)[N][4], const uint32_t* k0, uint32_t k1, int rounds) {
  philox4x32_rounds(rounds, [&](int r) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < N; ++i) philox4x32_round(c[i][0], c[i][1], c[i][2], c[i][3], k0[r], k1 + r * kPhiloxW1);
  });
}

/// A uniform float in [0, 1) from the top 24 bits of `bits` (exact: k · 2^-24).
MV_HD MV_INLINE float uniform_from_bits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.f / 16777216.f);
}

}  // namespace mv
