// The strategy registry of the path tracer's patch workload: one registration line per strategy.
#include "app/session/session.h"
#include "sched/cpu/cpu_waves.h"
#include "sched/cpu/exact_priority.h"
#include "sched/gpu/gpu_strategies.cuh"
#include "sched/megakernel/megakernel.cuh"

namespace mv {

const StrategyRegistry<PatchWorkload>& patch_strategies() {
  static const StrategyRegistry<PatchWorkload> registry = [] {
    StrategyRegistry<PatchWorkload> r;
    auto add = [&r](auto make) {
      auto probe = make();
      const StrategyInfo info = probe->info();
      r.add(info, [make] { return std::unique_ptr<PatchStrategy>(make()); });
    };
    add([] { return std::make_unique<CpuWaveStrategy<PatchWorkload, false>>(); });
    add([] { return std::make_unique<CpuWaveStrategy<PatchWorkload, true>>(); });
    add([] { return std::make_unique<ExactPriorityStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<UniformStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<SortedWavesStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<MegakernelStrategy<PatchWorkload>>(); });
    return r;
  }();
  return registry;
}

}  // namespace mv
