// The gibbs workload's CPU reference (app/session/gibbs_cpu.h).
#include "app/session/gibbs_cpu.h"

#include "sched/lattice/checkerboard_sweep.h"

namespace mv {

void gibbs_initial_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height, uint32_t seed) {
  lattice_initial_cpu(rule, x, width, height, seed);
}

void gibbs_sweeps_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height, uint32_t seed,
                      uint32_t first_sweep, uint32_t sweeps) {
  checkerboard_sweeps_cpu(rule, x, width, height, seed, first_sweep, sweeps);
}

void gibbs_initial_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width, int height,
                       uint32_t seed) {
  lattice_initial_cpu(rule, x, width, height, seed);
}

void gibbs_sweeps_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width, int height,
                      uint32_t seed, uint32_t first_sweep, uint32_t sweeps) {
  checkerboard_sweeps_cpu(rule, x, width, height, seed, first_sweep, sweeps);
}

void gibbs_half_sweep_rows_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms>& rule, uint8_t* x, int width, int height,
                               uint32_t seed, uint32_t sweep, int colour, int row_begin, int row_end) {
  checkerboard_half_sweep_rows_cpu(rule, x, width, height, seed, sweep, colour, row_begin, row_end);
}

void gibbs_half_sweep_rows_cpu(const PoissonIsingRule<kPoissonIsingMaxTerms, true>& rule, uint8_t* x, int width,
                               int height, uint32_t seed, uint32_t sweep, int colour, int row_begin, int row_end) {
  checkerboard_half_sweep_rows_cpu(rule, x, width, height, seed, sweep, colour, row_begin, row_end);
}

}  // namespace mv
