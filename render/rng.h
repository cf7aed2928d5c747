// Counter-based random numbers: every draw is a pure function of (seed, pixel, sample index, dimension).
//
// Because nothing is carried between samples, the CPU and the GPU draw the same numbers for the same
// sample wherever and in whatever order it runs, so images agree between strategies and runs are
// reproducible by seed. The mixer is base/hash.h's hash32 (the "lowbias32" finaliser by C. Wellons,
// bias ≈ 0.17); each stream starts from a hashed key and draws hash(key + counter), as in Salmon et al.
// 2011 ("Parallel random numbers: as easy as 1, 2, 3") with a simpler bijection.
#pragma once

#include "base/common.h"
#include "base/hash.h"

namespace mv {

/// One sample's random stream. Construct with the pixel's linear index and the sample index.
struct SampleRng {
  uint32_t key;
  uint32_t counter = 0;

  MV_HD SampleRng(uint32_t seed, uint32_t pixel, uint32_t sample)
      : key(hash32(hash32(seed ^ 0x9e3779b9u) ^ pixel) + hash32(sample * 0x85ebca6bu + 0x68e31da4u)) {}

  /// Next uniform float in [0, 1): 24 random mantissa bits.
  MV_HD MV_INLINE float uniform() {
    const uint32_t bits = hash32(key + 0x9e3779b9u * (++counter));
    return static_cast<float>(bits >> 8) * (1.f / 16777216.f);
  }
};

}  // namespace mv
