// A development probe of the `buckets` megakernel's queue between two slices (no CUDA headers), for the
// measurement that `mse-curve` writes with the environment variable MEGAVIEW_MSE_TRACE (app/cli/cli_mse_curve.cpp):
// where each task's queue entries wait, and how many secondary tokens it holds (sched/megakernel/lane_tokens.h).
#pragma once

#include <cstdint>
#include <vector>

namespace mv {

/// The queue as it stands between two slices (every execution complete): per task, its primary entry's
/// ring (kNoRing: no primary entry waits) and key, its waiting secondary entries and its secondary-token
/// count (`lane_extra`, patch_lanes > 1; 0 otherwise); and the calendar window's first band.
struct MegakernelQueueProbe {
  static constexpr uint32_t kNoRing = 0xffffffffu;
  uint32_t rings = 0;
  uint32_t cur_band = 0;                  ///< MegakernelStrategy's QueueControl::cur_band (kNoBand: none yet)
  std::vector<uint32_t> primary_ring;     ///< [num tasks] ring of the task's primary entry, kNoRing if none
  std::vector<uint32_t> primary_entries;  ///< [num tasks] primary entries found (1 expected for a live task)
  std::vector<float> primary_key;         ///< [num tasks] its key (the priority it was enqueued with)
  std::vector<uint32_t> secondary_entries;  ///< [num tasks] secondary entries waiting
  std::vector<uint32_t> lane_extra;       ///< [num tasks] secondary tokens counted by the megakernel
};

/// Implemented by MegakernelStrategy (sched/megakernel/megakernel.cuh); reach it with a dynamic_cast from
/// Session::megakernel().
class MegakernelProbeSource {
 public:
  virtual ~MegakernelProbeSource() = default;
  /// Fills `out` from the device (synchronizes); false if the queue is not built or has one ring.
  virtual bool probe_queue(MegakernelQueueProbe& out) const = 0;
};

}  // namespace mv
