// The gibbs workload's CPU reference (sched/lattice/checkerboard_sweep.h instantiated for the
// Poisson-Ising rule of render/lattice/poisson_ising.h), compiled apart from the CUDA code.
#pragma once

#include <cstdint>

#include "render/lattice/poisson_ising.h"

namespace mv {

/// The initial lattice (x: width × height bytes).
void gibbs_initial_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height, uint32_t seed);
/// `sweeps` sweeps numbered first_sweep … on the CPU with TBB.
void gibbs_sweeps_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height, uint32_t seed,
                      uint32_t first_sweep, uint32_t sweeps);
/// The same with λ per site (a λ map that is not separable).
void gibbs_initial_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width, int height,
                       uint32_t seed);
void gibbs_sweeps_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width, int height,
                      uint32_t seed, uint32_t first_sweep, uint32_t sweeps);

}  // namespace mv
