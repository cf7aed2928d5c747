// Concurrent executions of one task under the megakernel's `buckets` design (MegakernelSettings::patch_lanes
// D > 1, worker_warp_buckets in sched/megakernel/megakernel_workers.cuh), in plain host/device code so that
// the CPU tests run the rules the GPU runs.
//
// Every unfinished task has one *primary* token and up to D − 1 *secondary* ones. A token is one entry of
// the task in the queue or one warp executing it (a dequeue hands the entry's token to the warp); a
// secondary entry carries kSecondaryEntry in its task word. The megakernel counts each task's secondary
// tokens (`extra`) and their sum over the tasks, so that the queue's length is live tasks + Σ extra when no
// warp runs.
//  - The primary token behaves exactly as the task's one token under D = 1: its holder runs the task and,
//    when it stops, re-enqueues it into its band or, if it is finished, ends it (live − 1). So a task is
//    never lost and never waits longer than under D = 1, whatever happens to its secondary tokens.
//  - spawn: a warp that just ran a batch of a task that still leads the queue (the greedy order's next
//    pick) adds a secondary entry while the task has fewer than D − 1 (lane_token_may_spawn); an idle warp
//    claims it and runs the task beside the first.
//  - A secondary holder runs the task while it stays (the same rule as the primary's) and then drops its
//    token (extra − 1), finished or not: it only ever helps. A secondary entry that waits in a ring the
//    window has moved past runs late; that costs concurrency, not the task.
// The batches' sample indices are reserved by the workload (render/pathtracer/patch_task.h
// `run_task_warp_shared`), so every task still ends exactly at its target whichever tokens run it.
#pragma once

#include <cstdint>

#include "base/common.h"

namespace mv {

/// The largest MegakernelSettings::patch_lanes.
inline constexpr uint32_t kMaxPatchLanes = 32;

/// Bit of a queue entry's task word that marks a secondary token (task indices stay below it).
inline constexpr uint32_t kSecondaryEntry = 0x80000000u;

/// The queue entry of a secondary token of `task`.
MV_HD MV_INLINE uint32_t secondary_entry(uint32_t task) { return task | kSecondaryEntry; }
/// The task of a queue entry, primary or secondary.
MV_HD MV_INLINE uint32_t entry_task(uint32_t entry) { return entry & ~kSecondaryEntry; }
/// Whether a queue entry is a secondary token.
MV_HD MV_INLINE bool entry_is_secondary(uint32_t entry) { return (entry & kSecondaryEntry) != 0; }

/// Whether a task with `extra` secondary tokens may get one more under `lanes` = D concurrent executions
/// at most (D ≥ 1; D = 1: never).
MV_HD MV_INLINE bool lane_token_may_spawn(uint32_t extra, uint32_t lanes) { return extra + 1u < lanes; }

/// What a warp that stops running a task does with its token (see the file comment).
enum class TokenRelease : uint32_t {
  Drop = 0,     ///< a secondary token: extra − 1, nothing else
  Finish = 1,   ///< the primary token of a finished task: live − 1
  Requeue = 2,  ///< the primary token of an unfinished task: the task re-enters the queue
};

/// The release of a token (`secondary` or the primary) of a task that is `finished` or not.
MV_HD MV_INLINE TokenRelease lane_token_release(bool secondary, bool finished) {
  if (secondary) return TokenRelease::Drop;
  return finished ? TokenRelease::Finish : TokenRelease::Requeue;
}

}  // namespace mv
