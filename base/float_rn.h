// Float arithmetic rounded the same way on the CPU and the GPU: each product, sum or fused multiply-add
// rounded once to nearest (IEEE 754 round-to-nearest-even), never contracted by the compiler with a
// neighbouring operation (nvcc fuses a · b + c into one FFMA unless told not to). Code whose CPU reference
// must give the GPU's bits uses these.
#pragma once

#include <cmath>

#include "base/common.h"

namespace mv {

/// a · b rounded once.
MV_HD MV_INLINE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
/// a + b rounded once.
MV_HD MV_INLINE float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
/// a · b + c rounded once (IEEE fused multiply-add): one FFMA on the GPU, libm's correctly rounded fmaf on
/// the CPU (in software where the processor lacks FMA), so both give the same bits.
MV_HD MV_INLINE float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace mv
