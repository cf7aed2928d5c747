// Grid configuration of the strand strategies (Lehmann 2023, §3.1 and §4.1.1; Appendix A's n, b, c).
//
// A GPU strand strategy launches n blocks of b threads (n·b CUDA threads in all); the global-queue
// strategies (§3.4) hand out work units of c consecutive strands. `auto` lets each strategy pick n and b
// from the CUDA occupancy API for its own kernel (one full wave of resident blocks, see
// sched/gpu/strand_gpu.cuh) with c = 1, the paper's best work unit (§4.2.2).
//
// n·b may exceed the number of strands (the surplus threads find no strand and exit), and c need not
// divide it (the last unit is shorter). CPU strategies ignore the grid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/params.h"

namespace mv {

/// Largest n: 65535 · 1024 blocks, enough for one thread per strand of 2^32 strands at b = 64 and far
/// below CUDA's gridDim.x limit (2^31 − 1).
inline constexpr uint32_t kMaxGridBlocks = 65535u * 1024u;
/// Threads per block b: a multiple of the warp size 32 in [32, 1024] (CUDA's block limit).
inline constexpr uint32_t kMinGridThreads = 32, kMaxGridThreads = 1024;
/// Largest work unit c (strands per queue entry): 2^20.
inline constexpr uint32_t kMaxWorkUnit = 1u << 20;

/// The knob `work-unit` (base/params.h) of the global-queue strategies, on strands and on patch tasks:
/// `items` names what a unit holds ("strands", "patch tasks").
inline ParamSpec work_unit_param(const std::string& items) {
  return make_param("work-unit", ParamKind::Int, 1, kMaxWorkUnit,
                    items + " per work unit c that a thread or warp takes from the global queue",
                    "Lehmann 2023 §3.4, §4.2.2");
}

struct GridConfig {
  bool automatic = true;   ///< `auto`: each GPU strategy resolves n and b with the occupancy API, c = 1
  uint32_t blocks = 0;     ///< n, [1, kMaxGridBlocks] (0 while automatic)
  uint32_t threads = 0;    ///< b, multiple of 32 in [32, 1024] (0 while automatic)
  uint32_t work_unit = 1;  ///< c, strands per work unit, [1, kMaxWorkUnit]

  /// n·b (0 while automatic).
  uint64_t total_threads() const { return static_cast<uint64_t>(blocks) * threads; }
  /// "auto" or "n,b,c".
  std::string str() const;
  bool operator==(const GridConfig& o) const {
    return automatic == o.automatic && blocks == o.blocks && threads == o.threads && work_unit == o.work_unit;
  }
};

/// An explicit grid n, b, c; throws InputError naming `field` and the offending value's range.
GridConfig make_grid(uint32_t blocks, uint32_t threads, uint32_t work_unit = 1, std::string_view field = "--grid");

/// Throws InputError("", field, …) unless `g` is `auto` or n, b, c are in range (see GridConfig).
void validate_grid(const GridConfig& g, std::string_view field = "--grid");

/// Parses "auto", "n,b" (c = 1) or "n,b,c": decimal integers without signs or spaces. Throws InputError
/// naming `field`: a malformed text gets the expected form, an out-of-range number its name (blocks n,
/// threads b, work unit c), its value and the allowed range.
GridConfig parse_grid(std::string_view text, std::string_view field = "--grid");

}  // namespace mv
