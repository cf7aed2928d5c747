#include "sched/megakernel/queue_model.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>

#include "sched/megakernel/score.h"

namespace mv {

namespace {

// Simulated time is integer nanoseconds, so equal times compare equal and the run is exact and
// reproducible; parameters in µs are rounded to the nearest ns.
using Ns = int64_t;
constexpr Ns kNever = -1;

Ns to_ns(double us) { return static_cast<Ns>(std::llround(us * 1000.0)); }
double to_us(Ns ns) { return static_cast<double>(ns) * 1e-3; }

struct Entry {
  float priority;
  uint32_t id;  ///< initial queue position: breaks priority ties
  Ns duration;
};

/// Queue order: higher priority first, ties by id.
bool before(const Entry& a, const Entry& b) {
  return a.priority > b.priority || (a.priority == b.priority && a.id < b.id);
}

void check(bool ok, const char* param, const std::string& rule) {
  if (!ok) throw std::invalid_argument(std::string("queue model: ") + param + " " + rule);
}

void validate(const QueueModelParams& p) {
  check(p.n >= 1 && p.n <= (1u << 24), "n", "must be in [1, 2^24]");
  check(p.segment >= 1 && p.segment <= p.n, "segment", "must be in [1, n]");
  check(p.workers >= 1, "workers", "must be at least 1");
  check(p.task_us_each.empty() || p.task_us_each.size() == p.n, "task_us_each", "must be empty or have n entries");
  if (p.task_us_each.empty()) check(p.task_us >= 1e-3, "task_us", "must be at least 0.001 µs");
  for (double d : p.task_us_each) check(d >= 1e-3, "task_us_each", "entries must be at least 0.001 µs");
  for (double s : p.sort_us) check(s >= 1e-3, "sort_us", "entries must be at least 0.001 µs");
  check(p.buffer_multiplier > 0.0, "buffer_multiplier", "must be positive");
}

/// The queue, its segments and the controller (§3–§5); workers call dequeue(), the event loop decide().
class Model {
 public:
  explicit Model(const QueueModelParams& p) : p_(p), S_(p.segment), full_(p.n / p.segment) {
    const std::vector<float> prio = initial_priorities(p.n, p.order, p.seed);
    q_.resize(p.n);
    for (uint32_t i = 0; i < p.n; ++i)
      q_[i] = {prio[i], i, to_ns(p.task_us_each.empty() ? p.task_us : p.task_us_each[i])};
    const uint32_t segments = (p.n + S_ - 1) / S_;
    lock_until_.assign(segments, 0);
    sorted_.assign(segments, 0);
    dmin_.resize(segments);
    for (uint32_t s = 0; s < segments; ++s) update_dmin(s);
    for (int m = 0; m < 3; ++m) sort_ns_[m] = to_ns(p.sort_us[m]);
    cursor_ = full_ >= 1 ? full_ - 1 : 0;
    next_ = p.controller && full_ >= 2 ? 0 : kNever;
  }

  uint32_t head() const { return head_; }
  /// Time of the controller's next decision; kNever when it sleeps or has stopped.
  Ns next_decision() const { return next_; }

  /// The entry at the front, and when its reader may start (after the unlock of a locked segment).
  Entry dequeue(Ns now, Ns& start) {
    const uint32_t s = head_ / S_;
    const Entry e = q_[head_++];
    start = std::max(now, lock_until_[s]);
    if (sleeping_) {  // the buffers changed: try again
      sleeping_ = false;
      next_ = now;
    }
    return e;
  }

  /// One controller decision at `now` (§4.3 and §5.2): a pass, a sleep or the end of the controller.
  void decide(Ns now) {
    const uint32_t first_free = (head_ + S_ - 1) / S_;  // first segment without dequeues
    if (full_ < 2 || full_ - 2 < first_free) {         // not even the back pair: never again
      next_ = kNever;
      return;
    }
    for (;;) {
      const bool at_back = cursor_ == full_ - 1;
      const uint32_t a = cursor_ - 1, b = cursor_;
      const int method = sorted_[a] + sorted_[b];
      if (a < first_free || (p_.time_management && !buffer_suffices(a, sort_ns_[method]))) {
        if (!at_back) {
          cursor_ = full_ - 1;  // Fig 2: restart from the back
          continue;
        }
        sleeping_ = true;  // only the time buffer can refuse the back pair here; it changes on dequeue
        next_ = kNever;
        return;
      }
      sort_pair(a, b);
      const Ns unlock = now + sort_ns_[method];
      lock_until_[a] = lock_until_[b] = unlock;
      ++passes_[method];
      cursor_ = a >= 1 ? a : full_ - 1;
      next_ = unlock;
      return;
    }
  }

  const std::array<uint64_t, 3>& passes() const { return passes_; }

 private:
  /// §5.2 with W workers: the R entries ahead of segment a take at least floor(R / W) × d_min
  /// (the multiplier m counts m·R entries).
  bool buffer_suffices(uint32_t a, Ns t_sort) const {
    uint64_t entries = 0;
    Ns dmin = INT64_MAX;
    for (int64_t s = static_cast<int64_t>(a) - 1; s >= static_cast<int64_t>(head_ / S_); --s) {
      const uint64_t lo = std::max<uint64_t>(static_cast<uint64_t>(s) * S_, head_);
      entries += static_cast<uint64_t>(s + 1) * S_ - lo;
      dmin = std::min(dmin, dmin_[static_cast<size_t>(s)]);
      const double rounds = std::floor(p_.buffer_multiplier * static_cast<double>(entries) / p_.workers);
      if (rounds * static_cast<double>(dmin) >= static_cast<double>(t_sort)) return true;
    }
    return false;
  }

  /// Merges segments a and a+1: the S most urgent entries, in queue order, to a; the rest to a+1.
  void sort_pair(uint32_t a, uint32_t b) {
    const auto lo = q_.begin() + static_cast<ptrdiff_t>(a) * S_, mid = lo + S_, hi = mid + S_;
    if (!sorted_[a]) std::sort(lo, mid, before);
    if (!sorted_[b]) std::sort(mid, hi, before);
    if (before(*mid, *(mid - 1))) std::inplace_merge(lo, mid, hi, before);  // else already in order
    sorted_[a] = sorted_[b] = 1;
    update_dmin(a);
    update_dmin(b);
  }

  void update_dmin(uint32_t s) {
    const uint32_t lo = s * S_, hi = std::min(lo + S_, p_.n);
    Ns d = INT64_MAX;
    for (uint32_t i = lo; i < hi; ++i) d = std::min(d, q_[i].duration);
    dmin_[s] = d;
  }

  const QueueModelParams& p_;
  const uint32_t S_, full_;  // segment size, number of full segments
  std::vector<Entry> q_;
  std::vector<Ns> lock_until_;  // a segment is locked (state < 0) while now < lock_until
  std::vector<uint8_t> sorted_;
  std::vector<Ns> dmin_;  // shortest task duration per segment (§5.3 meta data)
  std::array<Ns, 3> sort_ns_{};
  uint32_t head_ = 0;
  uint32_t cursor_;  // back segment of the next pair
  Ns next_;
  bool sleeping_ = false;
  std::array<uint64_t, 3> passes_{};
};

}  // namespace

std::vector<float> initial_priorities(uint32_t n, InitialOrder order, uint64_t seed) {
  std::vector<float> prio(n);
  for (uint32_t i = 0; i < n; ++i)
    prio[i] = static_cast<float>(order == InitialOrder::Descending ? n - 1 - i : i);
  if (order == InitialOrder::Random) {
    std::mt19937_64 rng(seed);  // the engine's output is fixed by the standard; the shuffle is ours
    for (uint32_t i = n; i > 1; --i) std::swap(prio[i - 1], prio[rng() % i]);
  }
  return prio;
}

double estimated_controller_passes(const QueueModelParams& p) {
  if (!p.controller || p.workers == 0) return 0.0;
  double longest = p.task_us;
  if (!p.task_us_each.empty()) longest = *std::max_element(p.task_us_each.begin(), p.task_us_each.end());
  const double shortest_sort = *std::min_element(p.sort_us.begin(), p.sort_us.end());
  const double rounds = std::ceil(static_cast<double>(p.n) / static_cast<double>(p.workers));
  return rounds * longest / shortest_sort;
}

QueueModelResult run_queue_model(const QueueModelParams& p) {
  validate(p);
  Model model(p);
  QueueModelResult r;
  r.executed.reserve(p.n);
  r.workers.resize(p.workers);
  // Free workers by (time, index): a min-heap.
  using Free = std::pair<Ns, uint32_t>;
  std::priority_queue<Free, std::vector<Free>, std::greater<Free>> free;
  for (uint32_t w = 0; w < p.workers; ++w) free.push({0, w});
  std::vector<Ns> exec(p.workers, 0), wait(p.workers, 0), done(p.workers, 0);
  Ns wait_total = 0, last_dequeue = 0;
  uint64_t events = 0;
  while (model.head() < p.n) {
    if (p.progress && (++events & 0xffff) == 0) p.progress(model.head());
    const Ns tc = model.next_decision();
    if (tc != kNever && tc < free.top().first) {  // at equal times, workers first
      model.decide(tc);
      continue;
    }
    const auto [now, w] = free.top();
    free.pop();
    Ns start = now;
    const Entry e = model.dequeue(now, start);
    last_dequeue = now;
    r.executed.push_back(e.priority);
    if (start > now) {
      ++r.collisions;
      wait[w] += start - now;
      wait_total += start - now;
    }
    exec[w] += e.duration;
    ++r.workers[w].tasks;
    done[w] = start + e.duration;
    free.push({done[w], w});
  }
  Ns total = 0;
  for (uint32_t w = 0; w < p.workers; ++w) {
    r.workers[w].exec_us = to_us(exec[w]);
    r.workers[w].wait_us = to_us(wait[w]);
    r.workers[w].done_us = to_us(done[w]);
    total = std::max(total, done[w]);
  }
  r.score = order_score(r.executed);
  r.total_us = to_us(total);
  r.last_dequeue_us = to_us(last_dequeue);
  r.passes_by_method = model.passes();
  for (uint64_t k : r.passes_by_method) r.sort_passes += k;
  r.wait_us = to_us(wait_total);
  return r;
}

}  // namespace mv
