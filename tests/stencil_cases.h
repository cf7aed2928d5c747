// What the stencil tests share: the single-partition CPU reference every partitioned run must equal
// bitwise (render/lattice/jacobi.h's rule and initial field, sched/lattice/halo_cpu.h's plain sweep).
#pragma once

#include <cstring>
#include <vector>

#include "render/lattice/jacobi.h"
#include "sched/lattice/halo_cpu.h"

namespace mv {

/// The n × n field after k plain periodic Jacobi sweeps from stencil_initial_field(n).
inline std::vector<float> stencil_reference(int n, int k) {
  std::vector<float> a = stencil_initial_field(n), b;
  for (int i = 0; i < k; ++i) {
    halo_reference_step(a, b, n, JacobiRule{});
    a.swap(b);
  }
  return a;
}

/// Whether a and b hold the same floats bit for bit.
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace mv
