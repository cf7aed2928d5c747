// Strands: the units of a Diderot-style bulk-synchronous program (Lehmann 2023, §2).
//
// A strand is a work item of base/work.h: it is initialised from its index, then `update` is applied once
// per super-step until it stabilizes (keeps its result) or dies (discards it). Strategies (sched/) decide
// how strands map onto CPU threads or GPU threads and in what order; a strand's result must not depend on
// that, so everything a strand does is a pure MV_HD function of its own state and read-only workload data.
//
// The StrandWorkload concept (render/strands/mandelbrot.h is a model):
//   using State = …;                       trivially copyable per-strand state
//   MV_HD uint32_t num_strands() const;
//   MV_HD State init(uint32_t index) const;
//   MV_HD WorkStatus update(State&) const;       one super-step of one strand
//   MV_HD uint32_t pixel(uint32_t index) const;   film pixel the strand writes (row-major)
//   MV_HD Vec3 color(const State&, WorkStatus) const;   the finished strand's colour
// Optional:
//   static constexpr bool kCpuFma = false;   the CPU strategies skip their FMA-compiled loops for this
//                                            workload (sched/cpu/strand_cpu.h, strand_cpu_fma)
//   MV_HD uint32_t max_updates() const;      the most updates a strand takes before it is no longer
//                                            Active (0: unknown): cpu-parallel's progress line counts
//                                            the work in updates against it (sched/cpu/strand_cpu.h)
#pragma once

#include <cstdint>

#include "base/common.h"
#include "base/work.h"
