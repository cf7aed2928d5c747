#include "sched/strand_stats.h"

#include <cmath>

namespace mv {

StepStatistics step_statistics(const uint32_t* steps, size_t n) {
  StepStatistics st;
  if (n == 0) return st;
  unsigned __int128 s = 0, s2 = 0;
  uint32_t lo = steps[0], hi = steps[0];
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = steps[i];
    s += x;
    s2 += static_cast<unsigned __int128>(x * x);
    lo = steps[i] < lo ? steps[i] : lo;
    hi = steps[i] > hi ? steps[i] : hi;
  }
  st.count = n;
  st.total = static_cast<uint64_t>(s);
  st.min = lo;
  st.max = hi;
  // Var = (n Σx² − (Σx)²) / n², with the numerator exact in 128 bits (n ≤ 2^32, x < 2^32: n Σx² < 2^128).
  const unsigned __int128 nn = n;
  const unsigned __int128 num = nn * s2 - s * s;
  const long double mean = static_cast<long double>(s) / static_cast<long double>(n);
  const long double var = static_cast<long double>(num) / (static_cast<long double>(n) * static_cast<long double>(n));
  st.mean = static_cast<double>(mean);
  st.sigma = static_cast<double>(std::sqrt(var));
  st.cv = st.mean > 0.0 ? st.sigma / st.mean : 0.0;
  return st;
}

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in [0, bound), bound ≥ 1 (Lemire 2019, "Fast random integer generation in an interval").
uint32_t bounded(uint64_t& state, uint32_t bound) {
  uint64_t m = static_cast<uint64_t>(static_cast<uint32_t>(splitmix64(state) >> 32)) * bound;
  uint32_t low = static_cast<uint32_t>(m);
  if (low < bound) {
    const uint32_t threshold = static_cast<uint32_t>(-bound) % bound;
    while (low < threshold) {
      m = static_cast<uint64_t>(static_cast<uint32_t>(splitmix64(state) >> 32)) * bound;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<uint32_t>(m >> 32);
}

}  // namespace

std::vector<uint32_t> strand_permutation(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = i;
  uint64_t state = seed;
  for (uint32_t i = n; i > 1; --i) {  // Fisher–Yates: swap position i−1 with a uniform j in [0, i)
    const uint32_t j = bounded(state, i);
    const uint32_t t = p[i - 1];
    p[i - 1] = p[j];
    p[j] = t;
  }
  return p;
}

uint64_t fnv1a64(const void* data, size_t bytes) {
  const unsigned char* b = static_cast<const unsigned char*>(data);
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace mv
