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
/// Rows row_begin … row_end − 1 of half-sweep `colour` (0 or 1) of sweep `sweep`: a sweep run as bands of rows,
/// colour 0's then colour 1's, gives the whole sweep's bits (sched/lattice/checkerboard_sweep.h).
void gibbs_half_sweep_rows_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height,
                               uint32_t seed, uint32_t sweep, int colour, int row_begin, int row_end);
void gibbs_half_sweep_rows_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width,
                               int height, uint32_t seed, uint32_t sweep, int colour, int row_begin, int row_end);

}  // namespace mv
