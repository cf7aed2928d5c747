// A 32-bit integer hash: the "lowbias32" finaliser by C. Wellons (bias ≈ 0.17), a bijection on uint32_t.
// render/rng.h builds the path tracer's counter-based random streams on it; the megakernel's far-ring drain
// draws its per-claim decision from it (sched/megakernel/megakernel_workers.cuh).
#pragma once

#include <cstdint>

#include "base/common.h"

namespace mv {

/// Mixes every input bit into every output bit; hash32(x) ≠ hash32(y) for x ≠ y.
MV_HD MV_INLINE uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x21f0aaadu;
  x ^= x >> 15;
  x *= 0xd35a2d97u;
  x ^= x >> 15;
  return x;
}

}  // namespace mv
