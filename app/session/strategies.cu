// The strategy registry of the path tracer's patch workload: one registration line per strategy.
#include "app/session/session.h"
#include "sched/cpu/cpu_to_completion.h"
#include "sched/cpu/cpu_waves.h"
#include "sched/cpu/exact_priority.h"
#include "sched/gpu/gpu_strategies.cuh"
#include "sched/gpu/to_completion.cuh"
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
    add([] { return std::make_unique<CpuToCompletionStrategy<PatchWorkload, false>>(); });  // sequential
    add([] { return std::make_unique<CpuToCompletionStrategy<PatchWorkload, true>>(); });   // cpu-parallel
    add([] { return std::make_unique<CpuWaveStrategy<PatchWorkload, false>>(); });          // sequential-waves
    add([] { return std::make_unique<CpuWaveStrategy<PatchWorkload, true>>(); });           // cpu-waves
    add([] { return std::make_unique<ExactPriorityStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<UniformStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<SortedWavesStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<MegakernelStrategy<PatchWorkload>>(); });
    add([] { return std::make_unique<ToCompletionStrategy<PatchWorkload, false>>(); });  // cuda-batch
    add([] { return std::make_unique<ToCompletionStrategy<PatchWorkload, true>>(); });   // cuda-global-queue
    return r;
  }();
  return registry;
}

const std::vector<ParamSpec>& patch_strategy_knobs() {
  static const std::vector<ParamSpec> knobs = [] {
    std::vector<ParamSpec> v;
    for (const auto& entry : patch_strategies().entries()) {
      auto s = entry.make();  // constructing a strategy touches no CUDA
      if (const Params* p = s->params())
        for (const ParamSpec& spec : p->specs())
          if (!find_param(v, spec.name)) v.push_back(spec);
    }
    return v;
  }();
  return knobs;
}

}  // namespace mv
