// The CPU executor of the deep-halo plan (sched/lattice/halo_plan.h): the same tiles, messages and
// regions as the GPU executor (sched/lattice/halo_gpu.cuh), run with TBB, over any five-point rule
// `Rule` (a functor `float operator()(float c, float n, float s, float w, float e) const`, e.g. the
// Jacobi rule of render/lattice/jacobi.h). It is the reference the GPU runs are compared with bitwise,
// and `halo_reference_step` (one plain periodic sweep of the whole grid, no partitions) is the
// single-partition reference of every partitioned run.
//
// Overlap on the CPU: the inner region is computed in one TBB task while another packs, moves and
// unpacks the halo; the outer ring follows. Times are wall clock.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "sched/lattice/halo_plan.h"

namespace mv {

/// One iteration of `rule` over the whole periodic n × n grid `in` → `out` (row-major), no partitions.
template <class Rule>
void halo_reference_step(const std::vector<float>& in, std::vector<float>& out, int n, Rule rule = {}) {
  out.resize(in.size());
  tbb::parallel_for(tbb::blocked_range<int>(0, n), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y < rows.end(); ++y) {
      const size_t yn = size_t((y + n - 1) % n) * n, yc = size_t(y) * n, ys = size_t((y + 1) % n) * n;
      for (int x = 0; x < n; ++x) {
        const int xw = (x + n - 1) % n, xe = (x + 1) % n;
        out[yc + x] = rule(in[yc + x], in[yn + x], in[ys + x], in[yc + xw], in[yc + xe]);
      }
    }
  });
}

/// `rule` over rectangle `r` of a tile array with row pitch `pitch`: in → out. Runs on the calling thread.
template <class Rule>
void halo_cpu_rect(const float* in, float* out, int pitch, HaloRect r, Rule rule, bool parallel = true) {
  auto rows = [&](int y_begin, int y_end) {
    for (int y = r.y0 + y_begin; y < r.y0 + y_end; ++y) {
      const size_t row = size_t(y) * pitch;
      for (int x = r.x0; x < r.x0 + r.w; ++x) {
        const size_t i = row + x;
        out[i] = rule(in[i], in[i - pitch], in[i + pitch], in[i - 1], in[i + 1]);
      }
    }
  };
  if (r.w <= 0 || r.h <= 0) return;
  if (!parallel) return rows(0, r.h);
  tbb::parallel_for(tbb::blocked_range<int>(0, r.h, 16),
                    [&](const tbb::blocked_range<int>& b) { rows(b.begin(), b.end()); });
}

/// The partitioned run on the CPU.
template <class Rule>
class HaloCpu {
 public:
  explicit HaloCpu(HaloPlan plan, Rule rule = {}) : plan_(std::move(plan)), rule_(rule) {
    const size_t P = plan_.tiles.size();
    a_.resize(P);
    b_.resize(P);
    send_.resize(P);
    recv_.resize(P);
    for (size_t t = 0; t < P; ++t) {
      a_[t].assign(plan_.tiles[t].array_sites(plan_.depth()), 0.0f);
      b_[t] = a_[t];
      send_[t].assign(plan_.send_floats[t], 0.0f);
      recv_[t].assign(plan_.recv_floats[t], 0.0f);
    }
  }

  const HaloPlan& plan() const { return plan_; }

  /// Sets the field from a global n × n row-major array and restarts the exchange period.
  void set_field(const std::vector<float>& global) {
    const int n = plan_.cfg.n, d = plan_.depth();
    for (size_t t = 0; t < plan_.tiles.size(); ++t) {
      const HaloTile& T = plan_.tiles[t];
      for (int y = 0; y < T.h; ++y)
        std::memcpy(&a_[t][size_t(y + d) * T.pitch(d) + d], &global[size_t(T.gy0 + y) * n + size_t(T.gx0)],
                    sizeof(float) * size_t(T.w));
    }
    j_ = 0;
  }
  /// The field as a global n × n row-major array.
  void get_field(std::vector<float>& global) const {
    const int n = plan_.cfg.n, d = plan_.depth();
    global.resize(size_t(n) * n);
    for (size_t t = 0; t < plan_.tiles.size(); ++t) {
      const HaloTile& T = plan_.tiles[t];
      for (int y = 0; y < T.h; ++y)
        std::memcpy(&global[size_t(T.gy0 + y) * n + size_t(T.gx0)], &a_[t][size_t(y + d) * T.pitch(d) + d],
                    sizeof(float) * size_t(T.w));
    }
  }

  /// Runs `k` iterations.
  void step(uint64_t k) {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < k; ++i) iterate();
    times_.total_ms += ms(t0);
  }

  const HaloPhaseTimes& times() const { return times_; }
  void reset_times() { times_ = {}; }

 private:
  using Clock = std::chrono::steady_clock;
  static double ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

  void exchange(double& pack, double& xch, double& unpack) {
    const int d = plan_.depth();
    for (const std::vector<HaloMessage>& phase : plan_.phases) {
      auto t0 = Clock::now();
      for (const HaloMessage& m : phase) {
        const int pitch = plan_.tiles[size_t(m.src)].pitch(d);
        for (int y = 0; y < m.from.h; ++y)
          std::memcpy(&send_[size_t(m.src)][m.send_offset + size_t(y) * m.from.w],
                      &a_[size_t(m.src)][size_t(m.from.y0 + y) * pitch + m.from.x0], sizeof(float) * size_t(m.from.w));
      }
      pack += ms(t0);
      t0 = Clock::now();
      for (const HaloMessage& m : phase)
        std::memcpy(&recv_[size_t(m.dst)][m.recv_offset], &send_[size_t(m.src)][m.send_offset],
                    sizeof(float) * size_t(m.from.sites()));
      xch += ms(t0);
      t0 = Clock::now();
      for (const HaloMessage& m : phase) {
        const int pitch = plan_.tiles[size_t(m.dst)].pitch(d);
        for (int y = 0; y < m.to.h; ++y)
          std::memcpy(&a_[size_t(m.dst)][size_t(m.to.y0 + y) * pitch + m.to.x0],
                      &recv_[size_t(m.dst)][m.recv_offset + size_t(y) * m.to.w], sizeof(float) * size_t(m.to.w));
      }
      unpack += ms(t0);
    }
  }

  void iterate() {
    const int d = plan_.depth();
    const size_t P = plan_.tiles.size();
    if (j_ == 0) {
      ++times_.exchanges;
      if (plan_.cfg.overlap) {
        double inner = 0, pack = 0, xch = 0, unpack = 0;
        tbb::task_group g;
        g.run([&] {
          const auto t0 = Clock::now();
          for (size_t t = 0; t < P; ++t)
            halo_cpu_rect(a_[t].data(), b_[t].data(), plan_.tiles[t].pitch(d), plan_.inner_rect(int(t)), rule_);
          inner = ms(t0);
        });
        exchange(pack, xch, unpack);
        g.wait();
        times_.inner_ms += inner;
        times_.pack_ms += pack;
        times_.exchange_ms += xch;
        times_.unpack_ms += unpack;
        const auto t0 = Clock::now();
        for (size_t t = 0; t < P; ++t)
          for (const HaloRect& r : plan_.outer_rects(int(t)))
            halo_cpu_rect(a_[t].data(), b_[t].data(), plan_.tiles[t].pitch(d), r, rule_);
        times_.outer_ms += ms(t0);
      } else {
        exchange(times_.pack_ms, times_.exchange_ms, times_.unpack_ms);
        full(0);
      }
    } else {
      full(j_);
    }
    for (size_t t = 0; t < P; ++t) a_[t].swap(b_[t]);
    j_ = (j_ + 1) % d;
    ++times_.iterations;
  }

  void full(int j) {
    const auto t0 = Clock::now();
    for (size_t t = 0; t < plan_.tiles.size(); ++t)
      halo_cpu_rect(a_[t].data(), b_[t].data(), plan_.tiles[t].pitch(plan_.depth()), plan_.compute_rect(int(t), j), rule_);
    times_.compute_ms += ms(t0);
  }

  HaloPlan plan_;
  Rule rule_;
  std::vector<std::vector<float>> a_, b_, send_, recv_;  // a_: current field (in), b_: next (out)
  int j_ = 0;  // iterations since the last exchange
  HaloPhaseTimes times_;
};

}  // namespace mv
