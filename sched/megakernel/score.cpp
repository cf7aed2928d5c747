#include "sched/megakernel/score.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mv {

namespace {

/// Fenwick (binary indexed) tree over ranks [0, m): point add 1, prefix count.
class Fenwick {
 public:
  explicit Fenwick(size_t m) : t_(m + 1, 0) {}
  void add(size_t rank) {
    for (size_t k = rank + 1; k < t_.size(); k += k & (~k + 1)) ++t_[k];
  }
  /// Number of added ranks < `rank`.
  uint32_t count_below(size_t rank) const {
    uint32_t c = 0;
    for (size_t k = rank; k > 0; k -= k & (~k + 1)) c += t_[k];
    return c;
  }

 private:
  std::vector<uint32_t> t_;
};

}  // namespace

double order_score(const float* L, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (std::isnan(L[i])) throw std::invalid_argument("order_score: priority " + std::to_string(i) + " is NaN");
  if (n < 2) return 1.0;
  std::vector<float> values(L, L + n);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  Fenwick seen(values.size());
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const size_t rank = static_cast<size_t>(std::lower_bound(values.begin(), values.end(), L[i]) - values.begin());
    if (i > 0) {
      const size_t at_least = i - seen.count_below(rank);  // earlier entries with L[j] >= L[i]
      sum += static_cast<double>(at_least) / static_cast<double>(i);
    }
    seen.add(rank);
  }
  return sum / static_cast<double>(n - 1);
}

double ascending_held_prefix_bound(size_t n, size_t held) {
  if (n < 2 || held == 0) return 1.0;
  held = std::min(held, n);
  double sum = 0.0;
  for (size_t i = held; i < n; ++i) sum += static_cast<double>(i - held) / static_cast<double>(i);
  return sum / static_cast<double>(n - 1);
}

}  // namespace mv
