// `megaview sort-bench`: one thread block sorting n float keys with uint32 values, the controller's
// bitonic methods against CUB's radix sorts (Kerbl 2012, §6.1 and Fig 3). Every configuration's output
// is checked against std::sort before it is timed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>

#include "app/cli/cli.h"
#include "app/cli/cli_validate.h"
#include "app/session/output_file.h"
#include "app/cli/figures.h"
#include "app/cli/sort_bench_gpu.h"
#include "render/gpu.h"

namespace mv {

namespace {

constexpr SortBenchMethod kMethods[kNumSortBenchMethods] = {
    SortBenchMethod::BitonicFull, SortBenchMethod::BitonicOneSorted, SortBenchMethod::BitonicMerge,
    SortBenchMethod::CubBlockRadix, SortBenchMethod::CubDeviceRadix};

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;  ///< per sort
  bool valid() const { return median_us > 0; }
};

/// `batches` problems of n uniform random keys; for `m`, the front / back half of each problem is
/// sorted descending. Values are the positions 0..n-1 in the problem as stored, so the output names
/// where each key came from.
SortBenchProblem make_problem(uint32_t n, uint32_t batches, SortBenchMethod m, uint32_t seed) {
  SortBenchProblem p;
  p.n = n;
  p.batches = batches;
  std::mt19937 rng(seed ^ (n * 2654435761u));
  std::uniform_real_distribution<float> uniform(0.f, 1.f);
  p.keys.resize(size_t(n) * batches);
  p.vals.resize(p.keys.size());
  for (size_t i = 0; i < p.keys.size(); ++i) {
    p.keys[i] = uniform(rng);
    p.vals[i] = uint32_t(i % n);
  }
  for (uint32_t b = 0; b < batches; ++b) {
    float* k = p.keys.data() + size_t(b) * n;
    if (sort_bench_front_sorted(m)) std::sort(k, k + n / 2, std::greater<float>());
    if (sort_bench_back_sorted(m)) std::sort(k + n / 2, k + n, std::greater<float>());
  }
  return p;
}

/// Throws unless each problem's output is std::sort's descending key sequence and a permutation of its
/// (key, value) input pairs.
void verify(const SortBenchProblem& in, const std::vector<float>& keys, const std::vector<uint32_t>& vals,
            const std::string& what) {
  const uint32_t n = in.n;
  std::vector<float> expected(n);
  std::vector<char> seen(n);
  for (uint32_t b = 0; b < in.batches; ++b) {
    const size_t o = size_t(b) * n;
    std::copy(in.keys.begin() + o, in.keys.begin() + o + n, expected.begin());
    std::sort(expected.begin(), expected.end(), std::greater<float>());
    std::fill(seen.begin(), seen.end(), 0);
    for (uint32_t i = 0; i < n; ++i) {
      const float key = keys[o + i];
      const uint32_t v = vals[o + i];
      const char* wrong = !(key == expected[i])                  ? "key out of order"
                          : v >= n || seen[v]                    ? "value lost or duplicated"
                          : !(in.keys[o + v] == key)             ? "value separated from its key"
                                                                 : nullptr;
      if (wrong)
        throw std::runtime_error(fmt::format("sort-bench: {} gave a wrong result ({}) in problem {} at index {}: "
                                             "key {} value {}, expected key {}",
                                             what, wrong, b, i, key, v, expected[i]));
      seen[v] = 1;
    }
  }
}

Timing summarize(std::vector<double> ms, uint32_t batches) {
  std::sort(ms.begin(), ms.end());
  const size_t k = ms.size();
  const double med = k % 2 ? ms[k / 2] : 0.5 * (ms[k / 2 - 1] + ms[k / 2]);
  const double us = 1000.0 / batches;
  return {med * us, ms.front() * us, ms.back() * us};
}

void check_powers(const std::vector<uint32_t>& v, const char* field) {
  for (uint32_t x : v)
    if (x < 32 || x > 1024 || (x & (x - 1)))
      throw InputError("", field, fmt::format("{} is not a power of two in [32, 1024]", x));
}

std::vector<uint32_t> or_all(std::vector<uint32_t> v) {
  if (v.empty()) v = {32, 64, 128, 256, 512, 1024};
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string cell(const Timing& t) { return t.valid() ? fmt::format("{:.2f}", t.median_us) : "-"; }

}  // namespace

void run_sort_bench(const SortBenchCommand& c) {
  check_powers(c.sizes, "--sizes");
  check_powers(c.threads, "--threads");
  if (c.batches < 1) throw InputError("", "--batches", "must be at least 1");
  if (c.repeat < 1) throw InputError("", "--repeat", "must be at least 1");
  if (!c.csv.empty()) {
    cli::check_output_file(c.csv, "--csv");
    ensure_absent(figure_metadata_path(c.csv));
  }
  std::string plot_stem;  // the figure: plot_stem.png and .pdf, drawn from the CSV
  if (!c.plot.empty()) {
    plot_stem = sibling_path(c.plot, "--plot", ".png", "");
    cli::check_output_file(c.plot, "--plot");
    if (c.csv.empty()) throw InputError("", "--plot", "needs --csv: tools/figures.py draws the figure from the CSV");
    const std::vector<std::string> figures = figure_files("sort-bench", plot_stem);
    for (const std::string& f : figures) ensure_absent(f);
    // The figure is drawn after the CSV is written: a CSV under the figure's name would leave no figure.
    std::vector<cli::NamedPath> outputs = {{c.csv, "--csv"}, {figure_metadata_path(c.csv), "--csv (its metadata)"}};
    for (const std::string& f : figures) outputs.push_back({f, "--plot"});
    cli::check_distinct_files(outputs);
  }
  // After the options and output paths, so that those are named even without a GPU.
  if (!gpu_available()) throw std::runtime_error("sort-bench needs a CUDA GPU (" + gpu_info().reason + ")");
  const std::vector<uint32_t> sizes = or_all(c.sizes), threads = or_all(c.threads);

  fmt::print("sort-bench: {}; one block sorts n float keys with uint32 values, descending\n", gpu_info().name);
  fmt::print(
      "timed: CUDA events around {} sorts of different problems, median of {} runs, in microseconds per sort;\n"
      "       bitonic and cub-block-radix: one launch of one block looping over the problems (load, sort, store);\n"
      "       cub-device-radix: one SortPairsDescending call per problem (its launches included)\n"
      "input: uniform random keys; bitonic-one-sorted gets the front half, bitonic-merge both halves pre-sorted\n",
      c.batches, c.repeat);

  // results[method][size index][thread index]; the device radix sort uses thread index 0.
  std::vector<std::vector<std::vector<Timing>>> results(
      kNumSortBenchMethods, std::vector<std::vector<Timing>>(sizes.size(), std::vector<Timing>(threads.size())));
  std::string csv = "method,n,threads,median_us,min_us,max_us,batches,repeat\n";
  for (size_t si = 0; si < sizes.size(); ++si) {
    const uint32_t n = sizes[si];
    for (int mi = 0; mi < kNumSortBenchMethods; ++mi) {
      const SortBenchMethod m = kMethods[mi];
      const SortBenchProblem problem = make_problem(n, uint32_t(c.batches), m, c.seed);
      SortBenchGpu gpu(problem);
      const bool device = m == SortBenchMethod::CubDeviceRadix;
      for (size_t ti = 0; ti < (device ? 1 : threads.size()); ++ti) {
        const uint32_t t = device ? 0 : threads[ti];
        if (!sort_bench_supports(m, n, t)) continue;
        const std::string what = fmt::format("{} n={} threads={}", sort_bench_method_name(m), n, t);
        const Timing tm = summarize(
            gpu.run(m, t, c.repeat, [&](const auto& k, const auto& v) { verify(problem, k, v, what); }),
            uint32_t(c.batches));
        results[mi][si][ti] = tm;
        csv += fmt::format("{},{},{},{:.4f},{:.4f},{:.4f},{},{}\n", sort_bench_method_name(m), n, t, tm.median_us,
                           tm.min_us, tm.max_us, c.batches, c.repeat);
      }
    }
    std::fprintf(stderr, "sort-bench: n = %u done (every output verified against std::sort)\n", n);
  }

  // One table per block-level method: rows n, columns block size.
  for (int mi = 0; mi + 1 < kNumSortBenchMethods; ++mi) {
    fmt::print("\n{} (us per sort)\n{:>6}", sort_bench_method_name(kMethods[mi]), "n");
    for (uint32_t t : threads) fmt::print(" {:>9}", fmt::format("T={}", t));
    fmt::print("\n");
    for (size_t si = 0; si < sizes.size(); ++si) {
      fmt::print("{:>6}", sizes[si]);
      for (size_t ti = 0; ti < threads.size(); ++ti) fmt::print(" {:>9}", cell(results[mi][si][ti]));
      fmt::print("\n");
    }
  }

  // Best block size per method (Fig 3 analogue).
  fmt::print("\nbest block size per method (us per sort @ threads)\n{:>6}", "n");
  for (int mi = 0; mi < kNumSortBenchMethods; ++mi) fmt::print(" {:>20}", sort_bench_method_name(kMethods[mi]));
  fmt::print("\n");
  for (size_t si = 0; si < sizes.size(); ++si) {
    fmt::print("{:>6}", sizes[si]);
    for (int mi = 0; mi < kNumSortBenchMethods; ++mi) {
      size_t best = 0;
      for (size_t ti = 0; ti < threads.size(); ++ti) {
        const Timing& t = results[mi][si][ti];
        if (t.valid() && (!results[mi][si][best].valid() || t.median_us < results[mi][si][best].median_us)) best = ti;
      }
      const Timing& t = results[mi][si][best];
      const bool device = kMethods[mi] == SortBenchMethod::CubDeviceRadix;
      fmt::print(" {:>20}", !t.valid() ? std::string("-")
                            : device   ? fmt::format("{:.2f}", t.median_us)
                                       : fmt::format("{:.2f} @{}", t.median_us, threads[best]));
    }
    fmt::print("\n");
  }
  std::fflush(stdout);

  if (!c.csv.empty()) {
    write_new_text_file(c.csv, csv);
    FigureMetadata meta;
    meta.kind = meta.subcommand = "sort-bench";
    meta.redoes = "Kerbl 2012, Fig 3";
    meta.context = fmt::format("one block, {} sorts per timed run, median of {}", c.batches, c.repeat);
    meta.gpu = gpu_info().name;
    meta.units = {{"method", "name"}, {"n", "keys"}, {"threads", "threads per block (0: device-wide)"},
                  {"median_us", "us per sort"}, {"min_us", "us per sort"}, {"max_us", "us per sort"},
                  {"batches", "sorts per timed run"}, {"repeat", "timed runs"}};
    write_figure_metadata(c.csv, meta);
    fmt::print("wrote {}, {}\n", c.csv, figure_metadata_path(c.csv));
    if (!plot_stem.empty()) draw_figures(c.csv, plot_stem);
  }
}

}  // namespace mv
