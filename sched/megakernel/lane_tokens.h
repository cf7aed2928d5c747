// Concurrent executions of one task under the megakernel's `buckets` design (MegakernelSettings::patch_lanes
// D > 1, worker_warp_buckets in sched/megakernel/megakernel_workers.cuh), in plain host/device code so that
// the CPU tests run the rules the GPU runs.
//
// Every unfinished task holds between 1 and D *tokens*: a token is one entry of the task in the queue or one
// warp executing a batch of it (a dequeue hands the entry's token to the warp). The megakernel counts a
// task's tokens beyond the first (`extra`, per task) and their sum over the tasks (so that the queue's
// length is live tasks + Σ extra):
//  - spawn: a warp that just ran a batch of a task that still leads the queue (the greedy order's next pick)
//    adds a token, one more queue entry of the task, while the task has fewer than D
//    (lane_token_may_spawn); idle warps claim it and run the task beside this one;
//  - release: a warp that does not run the task again gives its token back (lane_token_release): while
//    other tokens exist it just drops it (Drop); the last token of a finished task ends the task (Finish:
//    live − 1); the last token of an unfinished one re-enters the queue (Requeue).
// Decrementing `extra` only from a value above 0 (a compare-and-swap) is what makes this safe: an unfinished
// task never loses its last token, so it is never lost (no starvation beyond the queue's own ageing), and
// exactly one release of a finished task ends it. The batches' sample indices are reserved by the workload
// (render/pathtracer/patch_task.h `run_task_warp_shared`), so every task still ends exactly at its target.
#pragma once

#include <cstdint>

#include "base/common.h"

namespace mv {

/// The largest MegakernelSettings::patch_lanes.
inline constexpr uint32_t kMaxPatchLanes = 32;

/// Whether a task with `extra` tokens beyond its first may get one more under `lanes` = D concurrent
/// executions at most (D ≥ 1; D = 1: never).
MV_HD MV_INLINE bool lane_token_may_spawn(uint32_t extra, uint32_t lanes) { return extra + 1u < lanes; }

/// What a warp that stops running a task does with its token (see the file comment).
enum class TokenRelease : uint32_t {
  Drop = 0,     ///< other tokens exist: extra − 1, nothing else
  Finish = 1,   ///< the task's last token and the task is finished: live − 1
  Requeue = 2,  ///< the task's last token and it is unfinished: the task re-enters the queue
};

/// The release of one token of a task that had `extra` tokens beyond this one when the warp looked
/// (the device applies Drop only through a compare-and-swap from that `extra`, and looks again when it fails).
MV_HD MV_INLINE TokenRelease lane_token_release(uint32_t extra, bool finished) {
  if (extra > 0) return TokenRelease::Drop;
  return finished ? TokenRelease::Finish : TokenRelease::Requeue;
}

}  // namespace mv
