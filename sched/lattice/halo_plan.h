// The deep-halo decomposition of a periodic n × n grid over P partitions on G GPUs, as one plan that
// the CPU executor (sched/lattice/halo_cpu.h) and the GPU executor (sched/lattice/halo_gpu.cuh) both
// follow: the tiles, the messages of a halo exchange, and the region each iteration computes (Valen 2023,
// §2.6–§2.8 and §3.1–§3.4).
//
// Decomposition: 2D tiles, px × py partitions chosen as in the document's Table 3.2 (as square as the
// count allows: P = 2 → 1 × 2, 4 → 2 × 2, 6 → 2 × 3, 8 → 2 × 4, 9 → 3 × 3 …; a prime P gives row strips).
// Why tiles rather than row strips: a tile exchanges 4·d·n/√P values per exchange where a strip
// exchanges 2·d·n, so tiles send less as P grows (the document's Fig 2.5 argument, §2.7); they are what
// the document measures (its synchronous versus asynchronous exchange and its pack/unpack phases only
// exist with east-west neighbours); and row strips are the special case px = 1, so nothing is lost on
// one GPU with few partitions. When n does not divide, the first partitions of a row (column) get one
// more column (row), as in §3.1.2.
//
// Storage: each tile keeps its w × h interior inside a (w + 2D) × (h + 2D) row-major array, D the
// configured halo depth d; (D, D) is the first interior site.
//
// Deep halos (§2.7.1): an exchange fills the whole d-deep halo; iteration j = 0 … d−1 after it computes
// the interior grown by e = d−1−j on every side (the halo's inner layers, redundantly, so the next
// iteration has valid inputs), and after d iterations the next exchange comes.
//
// Exchange (§2.7, §3.3): `Async` sends to all eight neighbours at once (north, south: d × w; west, east:
// h × d; the four corners d × d). `Sync` runs two dependent phases: west/east columns (h × d) first, then
// north/south rows of the full width w + 2d, which carry the corners just received (Fig 2.7). A message
// is packed from the sender's interior into its contiguous send buffer, moved, and unpacked into the
// receiver's halo (§2.7.2).
//
// Overlap (§2.8, §3.4): at an exchange iteration the inner region (the interior shrunk by one, whose
// five-point inputs are all interior) is computed while the halo is exchanged, then the outer ring (the
// rest of the iteration's region, at most four rectangles).
//
// Every function throws InputError naming the option and its range for a plan that cannot exist (depth
// out of 1 … 64, a depth larger than a partition, more GPUs than partitions…).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"

namespace mv {

/// Largest halo depth (the document sweeps 1 … 64, §4.3).
inline constexpr int kMaxHaloDepth = 64;
/// Largest partition count.
inline constexpr int kMaxHaloPartitions = 64;

/// The GPU compute kernel's block shapes (HaloConfig::kernel, sched/lattice/halo_gpu.cuh): threads x ×
/// threads y × rows per thread; "v4": each thread computes 4 columns with 16-byte loads and stores.
inline const char* const kHaloKernelShapes[] = {"64x4x8",   "128x2x8",   "256x1x16",    "32x8x4",
                                                "512x1x16", "256x1x32", "128x1x16v4", "64x2x16v4"};
inline constexpr int kHaloKernelCount = int(sizeof kHaloKernelShapes / sizeof kHaloKernelShapes[0]);

enum class HaloExchange : uint8_t { Sync, Async };
inline const char* halo_exchange_name(HaloExchange e) { return e == HaloExchange::Sync ? "sync" : "async"; }

/// A rectangle of sites in tile-local array coordinates (x right, y down).
struct HaloRect {
  int x0 = 0, y0 = 0, w = 0, h = 0;
  int64_t sites() const { return int64_t(w) * h; }
};

/// One partition: its interior in global coordinates, the GPU that holds it and its neighbours.
struct HaloTile {
  int64_t gx0 = 0, gy0 = 0;  ///< global coordinates of the first interior site
  int w = 0, h = 0;          ///< interior size
  int gpu = 0;               ///< 0 … G−1
  int col = 0, row = 0;      ///< position in the px × py tile grid
  int pitch(int depth) const { return w + 2 * depth; }
  int rows(int depth) const { return h + 2 * depth; }
  size_t array_sites(int depth) const { return size_t(pitch(depth)) * size_t(rows(depth)); }
};

/// One message of an exchange: src's rect `from` → dst's rect `to` (same size), at the given offsets
/// (in floats) of src's send buffer and dst's receive buffer.
struct HaloMessage {
  int src = 0, dst = 0;
  HaloRect from, to;
  size_t send_offset = 0, recv_offset = 0;
  int phase = 0;  ///< 0; Sync: 0 (west/east) or 1 (north/south)
};

/// Accumulated time per phase (milliseconds; GPU: CUDA events, each phase's largest sum over the GPUs;
/// CPU: wall clock) since the last reset, and what was run.
struct HaloPhaseTimes {
  double total_ms = 0;     ///< all iterations, end to end (GPU: first GPU's compute stream, after joining all)
  double compute_ms = 0;   ///< full-region computes (iterations between exchanges, and exchange iterations without overlap)
  double inner_ms = 0;     ///< overlap: inner compute
  double outer_ms = 0;     ///< overlap: outer compute
  double pack_ms = 0;      ///< pack kernels
  double exchange_ms = 0;  ///< moving the packed halos (device copies; NCCL send/recv, including waiting for the peer)
  double unpack_ms = 0;    ///< unpack kernels
  double wait_ms = 0;      ///< overlap: the compute stream idle after its inner compute, waiting for the halo
  uint64_t iterations = 0, exchanges = 0;
  void add(const HaloPhaseTimes& o) {
    total_ms += o.total_ms; compute_ms += o.compute_ms; inner_ms += o.inner_ms; outer_ms += o.outer_ms;
    pack_ms += o.pack_ms; exchange_ms += o.exchange_ms; unpack_ms += o.unpack_ms; wait_ms += o.wait_ms;
    iterations += o.iterations; exchanges += o.exchanges;
  }
};

/// The settings a plan is made from.
struct HaloConfig {
  int n = 1024;           ///< grid side
  int partitions = 1;     ///< P
  int gpus = 1;           ///< G (1 on the CPU); partition p lives on GPU p·G/P
  int depth = 1;          ///< halo depth d
  HaloExchange exchange = HaloExchange::Sync;
  bool overlap = false;
  int kernel = 0;         ///< GPU compute kernel's block shape (sched/lattice/halo_gpu.cuh, kHaloKernelShapes)
};

/// The factorisation of Table 3.2: px (columns) × py (rows) with px ≤ py, as square as possible.
inline void halo_grid_shape(int partitions, int& px, int& py) {
  px = 1;
  for (int a = 1; a * a <= partitions; ++a)
    if (partitions % a == 0) px = a;
  py = partitions / px;
}

/// The plan of one configuration: tiles, exchange messages per phase, buffer sizes.
struct HaloPlan {
  HaloConfig cfg;
  int px = 1, py = 1;
  std::vector<HaloTile> tiles;
  std::vector<std::vector<HaloMessage>> phases;  ///< Async: one phase; Sync: two
  std::vector<size_t> send_floats, recv_floats;  ///< per partition

  int depth() const { return cfg.depth; }
  /// The region iteration j (0 … d−1 after an exchange) computes on tile t.
  HaloRect compute_rect(int t, int j) const {
    const int d = cfg.depth, e = d - 1 - j;
    const HaloTile& T = tiles[size_t(t)];
    return {d - e, d - e, T.w + 2 * e, T.h + 2 * e};
  }
  /// Overlap: the inner region of tile t (interior shrunk by one; may be empty).
  HaloRect inner_rect(int t) const {
    const int d = cfg.depth;
    const HaloTile& T = tiles[size_t(t)];
    return {d + 1, d + 1, std::max(0, T.w - 2), std::max(0, T.h - 2)};
  }
  /// Overlap: the outer ring of tile t at an exchange iteration: compute_rect(t, 0) minus inner_rect(t), as
  /// up to four rectangles (top and bottom at full width, then left and right).
  std::vector<HaloRect> outer_rects(int t) const {
    const HaloRect a = compute_rect(t, 0), in = inner_rect(t);
    std::vector<HaloRect> r;
    if (in.w <= 0 || in.h <= 0) return {a};
    r.push_back({a.x0, a.y0, a.w, in.y0 - a.y0});                                  // top
    r.push_back({a.x0, in.y0 + in.h, a.w, a.y0 + a.h - in.y0 - in.h});             // bottom
    r.push_back({a.x0, in.y0, in.x0 - a.x0, in.h});                                // left
    r.push_back({in.x0 + in.w, in.y0, a.x0 + a.w - in.x0 - in.w, in.h});           // right
    return r;
  }
  /// Sites updated per iteration by all partitions together, halo recomputation included, averaged over
  /// the d iterations of an exchange period.
  double sites_per_iteration() const {
    double s = 0;
    for (size_t t = 0; t < tiles.size(); ++t)
      for (int j = 0; j < cfg.depth; ++j) s += double(compute_rect(int(t), j).sites());
    return s / cfg.depth;
  }
  /// Floats moved by one exchange (all messages).
  size_t exchange_floats() const {
    size_t f = 0;
    for (const auto& ph : phases)
      for (const HaloMessage& m : ph) f += size_t(m.from.sites());
    return f;
  }
};

/// Checks `c` (sizes as in the file comment; `gpus_present` bounds --gpus, 0: do not check) and throws
/// InputError("", "--option", "must be …") for the first bad value.
inline void check_halo_config(const HaloConfig& c, int gpus_present = 0) {
  auto num = [](long long v) { return std::to_string(v); };
  if (c.n < 8 || c.n > 200000)
    throw InputError("", "--size", "must be an integer in [8, 200000], got " + num(c.n));
  if (c.partitions < 1 || c.partitions > kMaxHaloPartitions)
    throw InputError("", "--partitions", "must be an integer in [1, " + num(kMaxHaloPartitions) + "], got " + num(c.partitions));
  if (c.gpus < 1 || c.gpus > c.partitions)
    throw InputError("", "--gpus", "must be an integer in [1, partitions = " + num(c.partitions) + "], got " + num(c.gpus));
  if (gpus_present > 0 && c.gpus > gpus_present)
    throw InputError("", "--gpus", "must be at most the " + num(gpus_present) + " GPU(s) present, got " + num(c.gpus));
  if (c.depth < 1 || c.depth > kMaxHaloDepth)
    throw InputError("", "--depth", "must be an integer in [1, " + num(kMaxHaloDepth) + "], got " + num(c.depth));
  int px = 1, py = 1;
  halo_grid_shape(c.partitions, px, py);
  const int min_w = c.n / px, min_h = c.n / py, min_side = std::min(min_w, min_h);
  if (c.depth > min_side)
    throw InputError("", "--depth",
                     "must be at most the smallest partition side (" + num(min_side) + " sites: " + num(c.n) +
                         " split " + num(px) + " x " + num(py) + "), got " + num(c.depth));
  if (min_side < 3)
    throw InputError("", "--partitions",
                     "leaves partitions of fewer than 3 sites a side (" + num(c.n) + " split " + num(px) + " x " +
                         num(py) + "); use fewer partitions or a larger --size");
}

/// Makes the plan of `c` (checked with check_halo_config first).
inline HaloPlan make_halo_plan(const HaloConfig& c) {
  check_halo_config(c);
  HaloPlan p;
  p.cfg = c;
  halo_grid_shape(c.partitions, p.px, p.py);
  const int d = c.depth;
  // Interior sizes: the first (n mod k) get one more (§3.1.2).
  auto split = [](int n, int k, int i, int64_t& start) {
    const int base = n / k, extra = n % k;
    start = int64_t(i) * base + std::min(i, extra);
    return base + (i < extra ? 1 : 0);
  };
  for (int row = 0; row < p.py; ++row)
    for (int col = 0; col < p.px; ++col) {
      HaloTile t;
      t.col = col;
      t.row = row;
      t.w = split(c.n, p.px, col, t.gx0);
      t.h = split(c.n, p.py, row, t.gy0);
      const int index = row * p.px + col;
      t.gpu = int(int64_t(index) * c.gpus / c.partitions);
      p.tiles.push_back(t);
    }
  auto id = [&](int col, int row) { return ((row + p.py) % p.py) * p.px + ((col + p.px) % p.px); };
  p.send_floats.assign(p.tiles.size(), 0);
  p.recv_floats.assign(p.tiles.size(), 0);
  // Message from tile s towards direction (dx, dy): the sender's interior strip next to that side (or
  // the strip of width w + 2d with the halo columns, in Sync's north/south phase) goes into the receiver's
  // halo on the opposite side.
  auto add = [&](std::vector<HaloMessage>& out, int s, int dx, int dy, bool full_width) {
    const HaloTile& S = p.tiles[size_t(s)];
    const int r = id(S.col + dx, S.row + dy);
    const HaloTile& R = p.tiles[size_t(r)];
    HaloMessage m;
    m.src = s;
    m.dst = r;
    m.phase = full_width ? 1 : 0;
    // Columns (x) and rows (y) of the sender's strip and of the receiver's halo.
    auto span = [&](int delta, int s_len, int r_len, int& s0, int& r0, int& len, bool full) {
      if (delta == 0) {
        s0 = full ? 0 : d;
        r0 = full ? 0 : d;
        len = full ? s_len + 2 * d : s_len;
        (void)r_len;
      } else if (delta > 0) {  // towards +: sender's last d, receiver's first halo d
        s0 = s_len;  // d + s_len - d
        r0 = 0;
        len = d;
      } else {  // towards −: sender's first d, receiver's last halo d
        s0 = d;
        r0 = d + r_len;
        len = d;
      }
    };
    int sx, rx, w, sy, ry, h;
    span(dx, S.w, R.w, sx, rx, w, full_width);
    span(dy, S.h, R.h, sy, ry, h, false);
    m.from = {sx, sy, w, h};
    m.to = {rx, ry, w, h};
    m.send_offset = p.send_floats[size_t(s)];
    m.recv_offset = p.recv_floats[size_t(r)];
    p.send_floats[size_t(s)] += size_t(w) * h;
    p.recv_floats[size_t(r)] += size_t(w) * h;
    out.push_back(m);
  };
  const int ntiles = int(p.tiles.size());
  if (c.exchange == HaloExchange::Async) {
    p.phases.resize(1);
    for (int s = 0; s < ntiles; ++s)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (dx || dy) add(p.phases[0], s, dx, dy, false);
  } else {
    p.phases.resize(2);
    for (int s = 0; s < ntiles; ++s) {
      add(p.phases[0], s, -1, 0, false);
      add(p.phases[0], s, 1, 0, false);
    }
    for (int s = 0; s < ntiles; ++s) {
      add(p.phases[1], s, 0, -1, true);
      add(p.phases[1], s, 0, 1, true);
    }
  }
  return p;
}

}  // namespace mv
