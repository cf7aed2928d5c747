// megakernel_params(): the megakernel's knobs from assets/knobs-megakernel.json, bound to MegakernelSettings'
// fields. Out of the header so that its includers do not compile the JSON reader and the embedded assets.
#include "sched/megakernel/megakernel_settings.h"

#include "base/param_file.h"

#include "assets_embedded.h"

namespace mv {

const ParamTable<MegakernelSettings>& megakernel_params() {
  static const ParamTable<MegakernelSettings> table = [] {
    using M = MegakernelSettings;
    ParamFile f("knobs-megakernel.json", assets::find("knobs-megakernel.json"));
    ParamTable<M> t;
    t.add(f.spec("queue", {kQueueDesignNames.names.begin(), kQueueDesignNames.names.end()}), &M::queue);
    t.add(f.spec("buckets"), &M::buckets);
    t.add(f.spec("age-period"), &M::age_period);
    t.add(f.spec("band-repeat"), &M::band_repeat);
    t.add(f.spec("band-slack"), &M::band_slack);
    t.add(f.spec("stay-leading"), &M::stay_leading);
    t.add(f.spec("patch-lanes"), &M::patch_lanes);
    t.add(f.spec("far-drain"), &M::far_drain);
    t.add(f.spec("quantum-max"), &M::quantum_max);
    t.add(f.spec("segment-size"), &M::segment_size);
    t.add(f.spec("controller"), &M::controller);
    t.add(f.spec("controllers"), &M::controllers);
    t.add(f.spec("time-management"), &M::time_management);
    t.add(f.spec("buffer-multiplier"), &M::buffer_multiplier);
    t.add(f.spec("wave-aware-buffer"), &M::wave_aware_buffer);
    t.add(f.spec("pull-forward"), &M::pull_forward);
    t.add(f.spec("pull-distance"), &M::pull_distance);
    t.add(f.spec("collect-metadata"), &M::collect_metadata);
    t.add(f.spec("static-task-cycles"), &M::static_task_cycles);
    t.add(f.spec("constant-segment-cycles"), &M::constant_segment_cycles);
    t.add(f.spec("blocks-per-sm"), &M::blocks_per_sm);
    t.add(f.spec("worker-blocks"), &M::worker_blocks);
    t.add(f.spec("record-order"), &M::record_order);
    t.add(f.spec("record-capacity"), &M::record_capacity);
    t.add(f.spec("watchdog-seconds"), &M::watchdog_seconds);
    t.add(f.spec("rebuild-sorted"), &M::rebuild_sorted);
    f.expect_all_bound();
    return t;
  }();
  return table;
}

}  // namespace mv
