// The gibbs workload's live run (app/session/gibbs_run.h).
#include "app/session/gibbs_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "app/session/gibbs_cpu.h"
#include "app/session/gibbs_lambda.h"
#include "app/session/params_report.h"
#include "base/cuda_check.h"
#include "base/errors.h"
#include "render/tonemap.h"
#include "sched/lattice/checkerboard_sweep.cuh"

namespace mv {

// The strip kernels hand the rule its coarse uniforms as window uniforms (sched/lattice/checkerboard_sweep.h); the
// rule's window table is built for the same bias (render/lattice/poisson_ising.h).
static_assert(kLatticeWindowBias == kPoissonIsingWindowBias, "the kernels' and the rule's window uniforms differ");

namespace {

const char* const kSource = "poisson-ising-gibbs-cupy (the source document), Benchmarks";

enum StrategyId : size_t { kDeep = 0, kGroups = 1, kPersistent = 2, kBlog = 3, kCpu = 4, kWindow = 5, kStrips = 6, kAhead = 7,
                        kResident = 8 };
const std::vector<std::string>& all_strategy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const StrategyInfo& i : gibbs_strategies()) v.push_back(i.name);
    return v;
  }();
  return names;
}

}  // namespace

const std::vector<StrategyInfo>& gibbs_strategies() {
  const std::string beyond = "beyond the source document; render/lattice/poisson_ising.h";
  static const std::vector<StrategyInfo> v = {
      {"gibbs-deep", "GPU: several checkerboard sweeps per launch on shared-memory tiles with deep halos", beyond,
       Side::Device},
      {"gibbs-groups", "GPU: one launch per half-sweep, uint8 state in place, Philox in registers", beyond,
       Side::Device},
      {"gibbs-persistent", "GPU: gibbs-groups' update in one cooperative launch, a grid barrier per half-sweep",
       beyond, Side::Device},
      {"gibbs-blog",
       "GPU, the document's method: a uniforms buffer, one thread per pixel pair, a shared tile with a one-pixel "
       "halo, separately padded copy",
       "poisson-ising-gibbs-cupy (the source document), Kernels", Side::Device},
      {"gibbs-cpu", "CPU (TBB): the same per-site rule and random stream as the GPU kernels, the reference", beyond,
       Side::Host},
      {"gibbs-window", "GPU: gibbs-persistent with a two-weight window draw first, the same chain", beyond,
       Side::Device},
      {"gibbs-strips",
       "GPU: gibbs-window's draw with a thread per strip of 4 rows (each state word loaded once per half-sweep), "
       "the window table in shared memory, per-site table row ids; the same chain",
       beyond, Side::Device},
      {"gibbs-ahead",
       "GPU: gibbs-strips with each half-sweep's random numbers, but its first row's, computed during the grid "
       "barrier before it, a strip's rows loaded before its stores; the same chain",
       beyond, Side::Device},
      {"gibbs-resident",
       "GPU: gibbs-ahead with each block's band of rows resident in shared memory for the whole launch (two "
       "copies: a half-sweep reads one and writes the other), no grid barrier: a band's edge rows go through tagged global words, each edge strip waits only for its neighbour's; "
       "the same chain (where a band does not fit shared memory or the SMs, or the window table exceeds 48 KiB: "
       "gibbs-ahead's kernel)",
       beyond, Side::Device},
  };
  return v;
}

namespace {

/// Params over GibbsSettings that also refuse combinations (GibbsSettings::validate) and then change nothing.
class GibbsParams : public Params {
 public:
  explicit GibbsParams(GibbsSettings& s) : s_(s), bound_(gibbs_params(), s) {}
  const std::vector<ParamSpec>& specs() const override { return bound_.specs(); }
  double get(size_t i) const override { return bound_.get(i); }
  std::string get_text(size_t i) const override { return bound_.get_text(i); }
  void set_text(size_t i, const std::string& t) override { bound_.set_text(i, t); }
  void set(size_t i, double v) override {
    const GibbsSettings before = s_;
    bound_.set(i, v);
    try {
      s_.validate();
    } catch (...) {
      s_ = before;
      throw;
    }
  }

 private:
  GibbsSettings& s_;
  BoundParams<GibbsSettings> bound_;
};

bool model_differs(const GibbsSettings& a, const GibbsSettings& b) {
  return a.width != b.width || a.height != b.height || a.gamma != b.gamma || a.lambda != b.lambda ||
         a.lambda_map != b.lambda_map || a.decay_width != b.decay_width || a.seed != b.seed || a.philox_rounds != b.philox_rounds ||
         a.lambda_image != b.lambda_image || a.volume != b.volume || a.slice_axis != b.slice_axis || a.slice != b.slice;
}

__global__ void accumulate_kernel(const uint8_t* x, uint32_t* sum, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) sum[i] += x[i];
}

/// RGBA of view `view`: 0 sample (x / X), 1 mean (sum / kept / X), 2 λ (λ / λ_max; lam_site when not null,
/// else lam_row · lam_col).
__global__ void colour_kernel(int view, const uint8_t* x, const uint32_t* sum, const float* lam_row,
                              const float* lam_col, const float* lam_site, int width, uint32_t* rgba, size_t n,
                              float x_scale, float mean_scale, float lambda_scale) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float t = view == 0   ? x[i] * x_scale
                  : view == 1 ? sum[i] * mean_scale
                              : (lam_site ? lam_site[i] : lam_row[i / width] * lam_col[i % width]) * lambda_scale;
  rgba[i] = pack_rgba8(heat_color(t));
}

uint32_t colour_cpu(float t) { return pack_rgba8(heat_color(t)); }

}  // namespace

// ---- settings ----

const ParamTable<GibbsSettings>& gibbs_params() {
  static const ParamTable<GibbsSettings> table = [] {
    using S = GibbsSettings;
    ParamTable<S> t;
    t.add(make_param("width", ParamKind::Int, 8, 8192, "lattice width in sites (a multiple of 8)", kSource), &S::width)
        .add(make_param("height", ParamKind::Int, 2, 8192, "lattice height in sites", kSource), &S::height)
        .add(make_param("gamma", ParamKind::Real, 0, 10, "interaction coefficient γ (restarts the chain)",
                        "poisson-ising-gibbs-cupy, The Poisson-Ising Model"),
             &S::gamma)
        .add(make_param("lambda", ParamKind::Real, 1e-6, kPoissonIsingMaxLambda,
                        "Poisson rate λ, the peak of the Gaussian map (restarts the chain)",
                        "poisson-ising-gibbs-cupy, The Poisson-Ising Model"),
             &S::lambda)
        .add(make_param("lambda-map", ParamKind::Choice, 0, 0,
                        "λ over the lattice: uniform, a Gaussian decay from the centre, an image's luminance "
                        "(--lambda-image) or a volume slice (--volume, --slice-axis, --slice), times λ",
                        kSource, "", 0, {kLambdaMapNames[0], kLambdaMapNames[1], kLambdaMapNames[2], kLambdaMapNames[3]}),
             &S::lambda_map)
        .add(make_param("decay-width", ParamKind::Real, 0.01, 10,
                        "Gaussian map: σ as a fraction of min(width, height)", "", "lambda-map=gaussian"),
             &S::decay_width)
        .add(make_param("lambda-image", ParamKind::Text, 0, 0,
                        "image map: a PNG or JPEG file; λ = λ · max(luminance, 0.01), stretched to the lattice "
                        "(bilinear)", "", "lambda-map=image"),
             &S::lambda_image)
        .add(make_param("volume", ParamKind::Text, 0, 0,
                        "volume map: a volume name (ch2, or under $MEGAVIEW_VOLUMES) or a .nrrd/.nii(.gz) file", "",
                        "lambda-map=volume"),
             &S::volume)
        .add(make_param("slice-axis", ParamKind::Choice, 0, 0,
                        "volume map: the index axis across the slice (z: axial for ch2)", "", "lambda-map=volume", 0,
                        {"x", "y", "z"}),
             &S::slice_axis)
        .add(make_param("slice", ParamKind::Int, -1, 65535,
                        "volume map: the slice index, normalised by its min and max (-1: the middle slice)", "",
                        "lambda-map=volume"),
             &S::slice)
        .add(make_param("seed", ParamKind::Int, 0, 2147483647, "random seed (Philox key)", ""), &S::seed)
        .add(make_param("philox-rounds", ParamKind::Choice, 0, 0,
                        "Philox4x32 rounds of the uniforms: 10, or 7, the fewest that pass BigCrush (another "
                        "stream: restarts the chain)",
                        "Salmon et al. 2011, Table 2", "", kParamAdvanced, {"7", "10"}),
             // the choice's index (0: 7, 1: 10; -1, refused, for any other count) ↔ the rounds themselves
             [](const S& s) { return s.philox_rounds == 7 ? 0.0 : s.philox_rounds == 10 ? 1.0 : -1.0; },
             [](S& s, double v) { s.philox_rounds = v == 0.0 ? 7 : 10; })
        .add(make_param("block-width", ParamKind::Int, 1, 1024, "threads per block in x (grid configuration)",
                        "poisson-ising-gibbs-cupy, Shared memory"),
             &S::block_width)
        .add(make_param("block-height", ParamKind::Int, 1, 1024, "threads per block in y (grid configuration)",
                        "poisson-ising-gibbs-cupy, Shared memory"),
             &S::block_height)
        .add(make_param("padding", ParamKind::Bool, 0, 1,
                        "gibbs-blog: pad shared-memory rows against bank conflicts (+6 at width 8, +2 at width 4)",
                        "poisson-ising-gibbs-cupy, Bank conflicts"),
             &S::padding)
        .add(make_param("thinning", ParamKind::Int, 1, 1000000, "keep every n-th sweep for the running mean",
                        "poisson-ising-gibbs-cupy, Gibbs Sampling"),
             &S::thinning)
        .add(make_param("tile-width", ParamKind::Int, 8, 1024, "gibbs-deep: tile interior width (a multiple of 8)",
                        "", "", kParamAdvanced),
             &S::tile_width)
        .add(make_param("tile-height", ParamKind::Int, 1, 1024, "gibbs-deep: tile interior height", "", "",
                        kParamAdvanced),
             &S::tile_height)
        .add(make_param("sweeps-per-launch", ParamKind::Int, 1, 32, "gibbs-deep: sweeps per launch (halo 2 × this)",
                        "", "", kParamAdvanced),
             &S::sweeps_per_launch);
    return t;
  }();
  return table;
}

int gibbs_doc_padding(int block_width) { return block_width == 8 ? 6 : block_width == 4 ? 2 : 0; }

void GibbsSettings::validate() const {
  gibbs_params().check(*this);
  if (width % 8 != 0)
    throw InputError("", "--width", "must be a multiple of 8 in [8, 8192], got " + std::to_string(width));
  if (block_width * block_height > 1024)
    throw InputError("", "--block-width", "block-width × block-height must be at most 1024 threads, got " +
                                              std::to_string(block_width) + " × " + std::to_string(block_height));
  if (tile_width % 8 != 0)
    throw InputError("", "--tile-width", "must be a multiple of 8 in [8, 1024], got " + std::to_string(tile_width));
  DeepTileShape shape{tile_width, tile_height, sweeps_per_launch};
  if (shape.smem_bytes() > 40 * 1024)
    throw InputError("", "--tile-width", "the gibbs-deep tile with its halo, (tile-width + 2·halo) × (tile-height + "
                                         "2·halo) bytes, must fit 40 KiB (the rest holds the weight table), got " + std::to_string(shape.smem_bytes()));
}

// ---- device state ----

struct GibbsRun::Device {
  DeviceBuffer<float> lam_row, lam_col, lam_col_split, lam_site, weights, windows, u;
  DeviceBuffer<uint8_t> xmax, site_ids, x, x2;
  DeviceBuffer<uint32_t> sum, rgba;
  DeviceBuffer<int> img, padded;
  DeviceBuffer<unsigned long long> exchange;  // gibbs-resident: the bands' edge rows
  cudaEvent_t start = nullptr, stop = nullptr;
  Device() {
    MV_CUDA_CHECK(cudaEventCreate(&start));
    MV_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Device() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  template <int NX, bool Site = false, bool Window = false>
  PoissonIsingRule<NX, Site, Window> rule(const PoissonIsingTables& t, int width, int rng_rounds) {
    const PoissonIsingArrays arrays{lam_row.data(), lam_col.data(), lam_site.data(), xmax.data(),
                                    weights.data(),  windows.data(), site_ids.data(), lam_col_split.data()};
    return make_poisson_ising_rule<NX, Site, Window>(arrays, t, width, rng_rounds);
  }
};

GibbsRun::GibbsRun(const ParamValues& knobs, bool gpu) : gpu_(gpu) {
  params_ = std::make_unique<GibbsParams>(s_);
  params_->apply(knobs);
  s_.validate();
  if (gpu_) d_ = std::make_unique<Device>();
  strategy_ = gpu_ ? kResident : kCpu;
  start();
}

GibbsRun::~GibbsRun() = default;

std::vector<std::string> GibbsRun::strategies() const {
  if (gpu_) return all_strategy_names();
  return {all_strategy_names()[kCpu]};
}

std::string GibbsRun::strategy() const { return all_strategy_names()[strategy_]; }

void GibbsRun::set_strategy(const std::string& name) {
  const auto& names = all_strategy_names();
  const auto it = std::find(names.begin(), names.end(), name);
  const size_t id = static_cast<size_t>(it - names.begin());
  if (it != names.end() && !gpu_ && id != kCpu)
    throw InputError("", "--strategy", "\"" + name + "\" needs a CUDA GPU; this run has gibbs-cpu only");
  if (it == names.end()) {
    std::string list;
    for (const std::string& n : strategies()) list += (list.empty() ? "" : ", ") + n;
    throw InputError("", "--strategy", "must be one of " + list + ", got \"" + name + "\"");
  }
  strategy_ = id;  // the chain lives in d_->x (GPU run) or hx_ (CPU run) whatever the strategy
}

bool GibbsRun::restarts(const std::string& name) const {
  for (const char* n : {"width", "height", "gamma", "lambda", "lambda-map", "decay-width", "seed", "philox-rounds",
                        "lambda-image", "volume", "slice-axis", "slice"})
    if (name == n) return true;
  return false;
}

void GibbsRun::restart() {
  s_.validate();
  start_or_keep();
}

void GibbsRun::ensure_current() {
  if (model_differs(s_, started_)) start_or_keep();
}

void GibbsRun::start_or_keep() {
  try {
    start();
  } catch (const InputError&) {
    // A model that cannot start (an unreadable image, a bad slice): the run keeps its chain and model knobs.
    s_.width = started_.width;
    s_.height = started_.height;
    s_.gamma = started_.gamma;
    s_.lambda = started_.lambda;
    s_.lambda_map = started_.lambda_map;
    s_.decay_width = started_.decay_width;
    s_.seed = started_.seed;
    s_.philox_rounds = started_.philox_rounds;
    s_.lambda_image = started_.lambda_image;
    s_.volume = started_.volume;
    s_.slice_axis = started_.slice_axis;
    s_.slice = started_.slice;
    throw;
  }
}

template <bool Site>
PoissonIsingRule<kPoissonIsingMaxTerms, Site> GibbsRun::host_rule() const {
  PoissonIsingArrays arrays;
  arrays.lam_row = field_.row.data();
  arrays.lam_col = field_.col.data();
  arrays.lam_site = field_.site.data();
  arrays.xmax = field_.xmax.data();
  arrays.weights = tables_.weights.data();
  return make_poisson_ising_rule<kPoissonIsingMaxTerms, Site>(arrays, tables_, s_.width, s_.philox_rounds);
}

void GibbsRun::start() {
  // The image or slice is read again only when its source changed (λ and γ changes reuse it).
  const std::string key = s_.lambda_map == LambdaMap::Image    ? "image:" + s_.lambda_image
                          : s_.lambda_map == LambdaMap::Volume ? "volume:" + s_.volume + ":" + std::to_string(s_.slice_axis) +
                                                                     ":" + std::to_string(s_.slice)
                                                               : "";
  if (!key.empty() && key != grid_key_) {
    grid_ = s_.lambda_map == LambdaMap::Image ? read_lambda_image(s_.lambda_image)
                                              : read_lambda_slice(s_.volume, s_.slice_axis, s_.slice);
    grid_key_ = key;
  }
  field_ = make_lambda_map(s_.lambda_map, s_.lambda, s_.decay_width, s_.width, s_.height, key.empty() ? nullptr : &grid_);
  const int X = *std::max_element(field_.xmax.begin(), field_.xmax.end());
  tables_ = make_poisson_ising_tables(s_.gamma, X);
  const size_t n = static_cast<size_t>(s_.width) * s_.height;
  steps_ = kept_ = 0;
  band_colour_ = band_row_ = 0;
  ++runs_;
  sweeps_per_ms_ = 0.0;
  last_rate_sweeps_per_s_ = 0.0;
  if (gpu_) {
    Device& d = *d_;
    d.lam_row.upload(field_.row);
    d.lam_col.upload(field_.col);
    d.lam_site.upload(field_.site);
    d.xmax.upload(field_.xmax);
    d.site_ids.upload(poisson_ising_site_ids(field_.xmax, s_.width, s_.height));
    d.lam_col_split.upload(field_.separable() ? poisson_ising_split_columns(field_.col) : std::vector<float>());
    d.weights.upload(tables_.weights);
    d.windows.upload(tables_.windows);
    d.x.resize(n);
    d.x2.resize(n);
    d.sum.resize(n);
    d.sum.zero();
    const dim3 block(32, 8), grid((s_.width + 31) / 32, (s_.height + 7) / 8);
    const auto init_rule = d.rule<kPoissonIsingMaxTerms>(tables_, s_.width, s_.philox_rounds);
    lattice_initial_kernel<<<grid, block>>>(init_rule, d.x.data(), s_.width,
                                            s_.height, static_cast<uint32_t>(s_.seed));
    MV_CUDA_CHECK_LAUNCH();
    MV_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    hx_.assign(n, 0);
    hsum_.assign(n, 0);
    if (field_.separable()) gibbs_initial_cpu(host_rule<false>(), hx_.data(), s_.width, s_.height, static_cast<uint32_t>(s_.seed));
    else gibbs_initial_cpu(host_rule<true>(), hx_.data(), s_.width, s_.height, static_cast<uint32_t>(s_.seed));
  }
  started_ = s_;
}

void GibbsRun::sweep_cpu(uint32_t first, uint32_t n) {
  kernel_ = all_strategy_names()[kCpu];
  // The CPU reference on a GPU run: the chain goes down and back up.
  std::vector<uint8_t> down = gpu_ ? state() : std::vector<uint8_t>();
  uint8_t* x = gpu_ ? down.data() : hx_.data();
  const uint32_t seed = static_cast<uint32_t>(s_.seed);
  if (field_.separable()) gibbs_sweeps_cpu(host_rule<false>(), x, s_.width, s_.height, seed, first, n);
  else gibbs_sweeps_cpu(host_rule<true>(), x, s_.width, s_.height, seed, first, n);
  if (gpu_) d_->x.upload(down);
}

void GibbsRun::sweeps_gpu(uint32_t first, uint32_t n) {
  if (field_.separable()) sweeps_gpu_site<false>(first, n);
  else sweeps_gpu_site<true>(first, n);
}

template <bool Site>
void GibbsRun::sweeps_gpu_site(uint32_t first, uint32_t n) {
  if (tables_.X < 7) sweeps_gpu_with<7, Site>(first, n);
  else if (tables_.X < kPoissonIsingFastTerms) sweeps_gpu_with<kPoissonIsingFastTerms, Site>(first, n);
  else sweeps_gpu_with<kPoissonIsingMaxTerms, Site>(first, n);
}

namespace {
/// `n` sweeps from `first` under the cooperative sweep kernel `kernel`, whose parameters are (rule, x, width,
/// height, keys, first sweep, sweeps, extra…): as many blocks of bw × bh as are resident at once with `smem`
/// bytes of dynamic shared memory, at most `work_blocks`, one launch per 1024 sweeps at most so that a long run
/// stays interruptible.
template <class Rule, class... Extra>
void launch_cooperative_sweeps(const void* kernel, size_t smem, int work_blocks, const Rule& rule, uint8_t* x, int W,
                               int H, uint32_t seed, uint32_t first, uint32_t n, int bw, int bh, Extra... extra) {
  int per_sm = 0, sms = 0, dev = 0;
  MV_CUDA_CHECK(cudaGetDevice(&dev));
  MV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  MV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, bw * bh, smem));
  const int blocks = std::max(1, std::min(per_sm * sms, work_blocks));
  uint8_t* xp = x;
  int w = W, h = H, sweeps = 0;
  LatticeKeys keys = lattice_keys(seed);
  uint32_t s0 = 0;
  void* args[] = {const_cast<Rule*>(&rule), &xp, &w, &h, &keys, &s0, &sweeps, &extra...};
  for (uint32_t done = 0; done < n;) {
    sweeps = static_cast<int>(std::min<uint32_t>(n - done, 1024u));
    s0 = first + done;
    MV_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(blocks), dim3(bw, bh), args, smem, nullptr));
    MV_CUDA_CHECK_LAUNCH();
    done += static_cast<uint32_t>(sweeps);
  }
}

/// Blocks of `threads` that hold one strip (kLatticeStripRows rows × 8 columns) of a W × H lattice per thread.
int strip_blocks(int W, int H, int threads) {
  const int strips = (W / 8) * ((H + kLatticeStripRows - 1) / kLatticeStripRows);
  return (strips + threads - 1) / threads;
}

/// `n` sweeps from `first` under sweep_persistent_kernel<Rule> in blocks of bw × bh (at most one group per
/// thread).
template <class Rule>
void launch_persistent(const Rule& rule, uint8_t* x, int W, int H, uint32_t seed, uint32_t first, uint32_t n, int bw,
                       int bh) {
  const int threads = bw * bh;
  const int work_blocks = static_cast<int>((static_cast<int64_t>(W / 8) * H + threads - 1) / threads);
  launch_cooperative_sweeps(reinterpret_cast<const void*>(sweep_persistent_kernel<Rule>), 0, work_blocks, rule, x, W,
                            H, seed, first, n, bw, bh);
}

/// `n` sweeps from `first` under sweep_strips_kernel<Rule> in blocks of bw × bh (at most one strip per thread)
/// with the window table (`table_bytes`) in dynamic shared memory.
template <class Rule>
void launch_strips(const Rule& rule, uint8_t* x, int W, int H, uint32_t seed, uint32_t first, uint32_t n, int bw, int bh,
                   int table_bytes) {
  launch_cooperative_sweeps(reinterpret_cast<const void*>(sweep_strips_kernel<Rule>), static_cast<size_t>(table_bytes),
                            strip_blocks(W, H, bw * bh), rule, x, W, H, seed, first, n, bw, bh, table_bytes);
}

/// `n` sweeps from `first` under sweep_strips_ahead_kernel<Rule> in blocks of bw × bh (at most one strip per
/// thread) with the window table and the random words in dynamic shared memory (lattice_strips_ahead_smem).
template <class Rule>
void launch_strips_ahead(const Rule& rule, uint8_t* x, int W, int H, uint32_t seed, uint32_t first, uint32_t n, int bw,
                         int bh, int table_bytes) {
  const int threads = bw * bh;
  const size_t smem = lattice_strips_ahead_smem(table_bytes, threads, kLatticeStripRows);
  const void* kernel = reinterpret_cast<const void*>(sweep_strips_ahead_kernel<Rule>);
  MV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  launch_cooperative_sweeps(kernel, smem, strip_blocks(W, H, threads), rule, x, W, H, seed, first, n, bw, bh,
                            table_bytes);
}

/// A launch of sweep_strips_resident_kernel: bands of band_strip_rows strip rows, one block each, with smem
/// bytes of dynamic shared memory; band_strip_rows 0 where the kernel does not apply (a band that with the kernel's
/// static shared memory exceeds the opt-in shared memory, or more bands than blocks resident at once).
struct ResidentPlan {
  int band_strip_rows = 0, bands = 0;
  size_t smem = 0;
};

/// The plan for a W × H lattice in blocks of `threads` with a window table of table_bytes and strips of R rows: as
/// many bands as SMs (fewer where the lattice has fewer strip rows), each a whole number of strip rows.
ResidentPlan resident_plan(const void* kernel, int W, int H, int threads, int table_bytes, int R) {
  int sms = 0, dev = 0, optin = 0, per_sm = 0;
  MV_CUDA_CHECK(cudaGetDevice(&dev));
  MV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  MV_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const int srows = (H + R - 1) / R;
  ResidentPlan p;
  const int per_band = (srows + sms - 1) / sms;
  const size_t smem = lattice_strips_resident_smem(table_bytes, threads, per_band, W, R);
  // The opt-in limit covers the kernel's static shared memory (its block barrier) too.
  cudaFuncAttributes attr{};
  MV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (smem + attr.sharedSizeBytes > static_cast<size_t>(optin)) return p;
  MV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  MV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const int bands = (srows + per_band - 1) / per_band;
  if (bands > per_sm * sms) return p;
  p.band_strip_rows = per_band;
  p.bands = bands;
  p.smem = smem;
  return p;
}

/// `n` sweeps from `first` under sweep_strips_resident_kernel<Rule, R> in blocks of bw × bh (resident_plan's bands),
/// the exchange buffer cleared before each launch: strips of 8 rows in blocks of at most 512 threads (128 registers
/// a thread), else of 4 rows (64 registers; docs/perf.md compares them). Returns false, running nothing, where the
/// kernel does not apply.
template <class Rule>
bool launch_strips_resident(const Rule& rule, uint8_t* x, int W, int H, uint32_t seed, uint32_t first, uint32_t n,
                            int bw, int bh, int table_bytes, DeviceBuffer<unsigned long long>& exchange) {
  constexpr int kTall = 2 * kLatticeStripRows;
  const bool tall = bw * bh <= lattice_strip_max_threads(kTall);
  const int R = tall ? kTall : kLatticeStripRows;
  const void* kernel = tall ? reinterpret_cast<const void*>(sweep_strips_resident_kernel<Rule, kTall>)
                            : reinterpret_cast<const void*>(sweep_strips_resident_kernel<Rule, kLatticeStripRows>);
  const ResidentPlan plan = resident_plan(kernel, W, H, bw * bh, table_bytes, R);
  if (plan.band_strip_rows == 0) return false;
  exchange.resize(lattice_strips_resident_exchange_words(plan.bands, W));
  unsigned long long* ex = exchange.data();
  int band_strip_rows = plan.band_strip_rows;
  for (uint32_t done = 0; done < n;) {
    const uint32_t chunk = std::min<uint32_t>(n - done, 1024u);
    exchange.zero();
    launch_cooperative_sweeps(kernel, plan.smem, plan.bands, rule, x, W, H, seed, first + done, chunk, bw, bh,
                              table_bytes, band_strip_rows, ex);
    done += chunk;
  }
  return true;
}
}  // namespace

template <int NX, bool Site>
void GibbsRun::sweeps_gpu_with(uint32_t first, uint32_t n) {
  Device& d = *d_;
  using Rule = PoissonIsingRule<NX, Site>;
  const Rule rule = d.rule<NX, Site>(tables_, s_.width, s_.philox_rounds);
  // The window draw's rule and table, for gibbs-window and the strip kernels, which stage the table in shared
  // memory when it fits kPoissonIsingStripTableBytes (else they run gibbs-window's kernel).
  const PoissonIsingRule<NX, Site, true> window_rule = d.rule<NX, Site, true>(tables_, s_.width, s_.philox_rounds);
  const size_t window_bytes = poisson_ising_window_bytes(tables_.X);
  const bool strips_fit = window_bytes <= kPoissonIsingStripTableBytes;
  const int table_bytes = static_cast<int>(window_bytes);
  const int W = s_.width, H = s_.height;
  const uint32_t seed = static_cast<uint32_t>(s_.seed);
  kernel_ = all_strategy_names()[strategy_];  // its own kernel; a fallback below names the one it runs
  if (strategy_ == kGroups) {
    const dim3 block(s_.block_width, s_.block_height);
    const dim3 grid((W / 8 + block.x - 1) / block.x, (H + block.y - 1) / block.y);
    for (uint32_t s = first; s != first + n; ++s)
      for (int c = 0; c < 2; ++c) {
        sweep_groups_kernel<<<grid, block>>>(rule, d.x.data(), W, H, lattice_keys(seed), s, c);
        MV_CUDA_CHECK_LAUNCH();
      }
  } else if (strategy_ == kPersistent) {
    launch_persistent(rule, d.x.data(), W, H, seed, first, n, s_.block_width, s_.block_height);
  } else if (strategy_ == kStrips && strips_fit) {
    launch_strips(window_rule, d.x.data(), W, H, seed, first, n, s_.block_width, s_.block_height, table_bytes);
  } else if (strategy_ == kResident && strips_fit &&
             launch_strips_resident(window_rule, d.x.data(), W, H, seed, first, n, s_.block_width, s_.block_height,
                                    table_bytes, d.exchange)) {
    // gibbs-resident ran
  } else if ((strategy_ == kAhead || strategy_ == kResident) && strips_fit) {
    // gibbs-resident where its band does not fit: gibbs-ahead
    kernel_ = "gibbs-ahead";
    launch_strips_ahead(window_rule, d.x.data(), W, H, seed, first, n, s_.block_width, s_.block_height, table_bytes);
  } else if (strategy_ == kWindow || strategy_ == kStrips || strategy_ == kAhead || strategy_ == kResident) {
    // gibbs-strips, gibbs-ahead and gibbs-resident with a table over 48 KiB: gibbs-window
    kernel_ = "gibbs-window";
    launch_persistent(window_rule, d.x.data(), W, H, seed, first, n, s_.block_width, s_.block_height);
  } else if (strategy_ == kDeep) {
    const int threads = s_.block_width * s_.block_height;
    for (uint32_t done = 0; done < n;) {
      DeepTileShape shape{s_.tile_width, s_.tile_height,
                          static_cast<int>(std::min<uint32_t>(n - done, static_cast<uint32_t>(s_.sweeps_per_launch)))};
      const dim3 grid((W + shape.tw - 1) / shape.tw, (H + shape.th - 1) / shape.th);
      // The weight table goes to shared memory beside the tile when both fit 48 KiB (else it stays in L1).
      const size_t tile = (shape.smem_bytes() + 15) / 16 * 16;
      const int table = NX <= kPoissonIsingFastTerms && tile + sizeof(float) * tables_.weights.size() <= 48 * 1024
                            ? static_cast<int>(tables_.weights.size())
                            : 0;
      const size_t smem = tile + sizeof(float) * table;
      deep_tile_kernel<<<grid, threads, smem>>>(rule, d.x.data(), d.x2.data(), W, H, lattice_keys(seed), first + done, shape,
                                                table);
      MV_CUDA_CHECK_LAUNCH();
      std::swap(d.x, d.x2);
      done += static_cast<uint32_t>(shape.sweeps);
    }
  } else {  // kBlog
    const size_t cells = static_cast<size_t>(W) * H;
    d.img.resize(cells);
    d.padded.resize(static_cast<size_t>(W + 2) * (H + 2));
    d.u.resize(static_cast<size_t>(H) * ((W + 1) / 2));
    const int blocks1 = static_cast<int>((cells + 255) / 256);
    blog_from_u8_kernel<<<blocks1, 256>>>(d.x.data(), d.img.data(), cells);
    MV_CUDA_CHECK_LAUNCH();
    const dim3 pb(32, 8), pg((W + 2 + 31) / 32, (H + 2 + 7) / 8);
    blog_pad_kernel<<<pg, pb>>>(d.img.data(), nullptr, d.padded.data(), W, H);
    MV_CUDA_CHECK_LAUNCH();
    const int pad = s_.padding ? gibbs_doc_padding(s_.block_width) : 0;
    const dim3 block(s_.block_width, s_.block_height);
    const dim3 grid(((W + 1) / 2 + block.x - 1) / block.x, (H + block.y - 1) / block.y);
    const size_t smem = static_cast<size_t>(2 * block.x + 2 + pad) * (block.y + 2) * sizeof(int);
    const dim3 ub(256), ug(((W + 1) / 2 + 255) / 256, H);
    for (uint32_t s = first; s != first + n; ++s)
      for (int c = 0; c < 2; ++c) {
        blog_fill_uniforms_kernel<<<ug, ub>>>(d.u.data(), W, H, seed, s, c, s_.philox_rounds);
        MV_CUDA_CHECK_LAUNCH();
        blog_sample_kernel<<<grid, block, smem>>>(rule, d.padded.data(), d.u.data(), d.img.data(), W, H, c, pad);
        MV_CUDA_CHECK_LAUNCH();
        blog_pad_kernel<<<pg, pb>>>(d.img.data(), nullptr, d.padded.data(), W, H);
        MV_CUDA_CHECK_LAUNCH();
      }
    blog_to_u8_kernel<<<blocks1, 256>>>(d.img.data(), d.x.data(), cells);
    MV_CUDA_CHECK_LAUNCH();
  }
}

void GibbsRun::keep_sample() {
  ++kept_;
  const size_t n = static_cast<size_t>(s_.width) * s_.height;
  if (gpu_) {
    accumulate_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(d_->x.data(), d_->sum.data(), n);
    MV_CUDA_CHECK_LAUNCH();
  } else {
    for (size_t i = 0; i < n; ++i) hsum_[i] += hx_[i];
  }
}

double GibbsRun::run_sweeps(uint64_t sweeps) {
  s_.validate();
  ensure_current();
  const auto t0 = std::chrono::steady_clock::now();
  if (gpu_ && strategy_ != kCpu) MV_CUDA_CHECK(cudaEventRecord(d_->start));
  uint64_t done = 0;
  if (!gpu_ && sweeps > 0 && mid_sweep()) {  // the sweep that advance() left in progress, as the first
    while (mid_sweep()) band_cpu(s_.height - band_row_);
    done = 1;
  }
  while (done < sweeps) {
    const uint64_t to_keep = s_.thinning - steps_ % s_.thinning;
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({sweeps - done, to_keep, 1u << 30}));
    const uint32_t first = static_cast<uint32_t>(steps_);
    if (!gpu_ || strategy_ == kCpu) sweep_cpu(first, n);
    else sweeps_gpu(first, n);
    steps_ += n;
    done += n;
    if (steps_ % s_.thinning == 0) keep_sample();
  }
  double ms;
  if (gpu_ && strategy_ != kCpu) {
    MV_CUDA_CHECK(cudaEventRecord(d_->stop));
    MV_CUDA_CHECK(cudaEventSynchronize(d_->stop));
    float f = 0.f;
    MV_CUDA_CHECK(cudaEventElapsedTime(&f, d_->start, d_->stop));
    ms = f;
  } else {
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  if (sweeps > 0 && ms > 0.0) {
    sweeps_per_ms_ = sweeps / ms;
    last_rate_sweeps_per_s_ = sweeps_per_ms_ * 1000.0;
  }
  return ms;
}

void GibbsRun::band_cpu(int rows) {
  kernel_ = all_strategy_names()[kCpu];
  const int r0 = band_row_, r1 = std::min(s_.height, r0 + rows);
  const uint32_t seed = static_cast<uint32_t>(s_.seed), sweep = static_cast<uint32_t>(steps_);
  if (field_.separable())
    gibbs_half_sweep_rows_cpu(host_rule<false>(), hx_.data(), s_.width, s_.height, seed, sweep, band_colour_, r0, r1);
  else
    gibbs_half_sweep_rows_cpu(host_rule<true>(), hx_.data(), s_.width, s_.height, seed, sweep, band_colour_, r0, r1);
  band_row_ = r1;
  if (band_row_ < s_.height) return;
  band_row_ = 0;
  if (band_colour_ == 0) {
    band_colour_ = 1;
    return;
  }
  band_colour_ = 0;
  ++steps_;
  if (steps_ % s_.thinning == 0) keep_sample();
}

uint64_t GibbsRun::advance_cpu(double budget_ms) {
  // Bands of at least kMinRows rows (TBB's grain), as many as the measured rate fits in what is left of the
  // budget, at most to the end of the half-sweep; the rate is measured on the bands themselves.
  constexpr int kMinRows = 16;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t steps0 = steps_;
  const double rows_per_sweep = 2.0 * s_.height;
  double spent = 0.0, rows_done = 0.0;
  for (;;) {
    const int left = s_.height - band_row_;
    int rows = std::min(left, kMinRows);
    if (sweeps_per_ms_ > 0.0)
      rows = static_cast<int>(std::clamp(std::floor((budget_ms - spent) * sweeps_per_ms_ * rows_per_sweep),
                                         static_cast<double>(rows), static_cast<double>(left)));
    band_cpu(rows);
    rows_done += rows;
    spent = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (spent > 0.0) {
      sweeps_per_ms_ = rows_done / rows_per_sweep / spent;
      last_rate_sweeps_per_s_ = sweeps_per_ms_ * 1000.0;
    }
    const bool sweep_fits = sweeps_per_ms_ > 0.0 && 1.0 / sweeps_per_ms_ <= budget_ms;
    if (spent >= 0.8 * budget_ms && (steps_ > steps0 || !sweep_fits)) break;
  }
  return steps_ - steps0;
}

uint64_t GibbsRun::advance(double budget_ms) {
  s_.validate();
  ensure_current();
  if (!gpu_) return advance_cpu(budget_ms);
  uint64_t ran = 0;
  double spent = 0.0;
  uint64_t total_sweeps = 0;
  double total_ms = 0.0;
  do {
    uint64_t n = 1;
    if (sweeps_per_ms_ > 0.0)
      n = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor((budget_ms - spent) * sweeps_per_ms_)));
    const double ms = run_sweeps(n);
    spent += ms;
    ran += n;
    total_sweeps += n;
    total_ms += ms;
  } while (spent < 0.8 * budget_ms);
  if (total_ms > 0.0) {
    sweeps_per_ms_ = total_sweeps / total_ms;
    last_rate_sweeps_per_s_ = sweeps_per_ms_ * 1000.0;
  }
  return ran;
}

std::vector<uint8_t> GibbsRun::state() const {
  if (!gpu_) return hx_;
  std::vector<uint8_t> x(d_->x.size());
  d_->x.download(x.data(), x.size());
  MV_CUDA_CHECK(cudaDeviceSynchronize());
  return x;
}

void GibbsRun::image(size_t view, std::vector<uint32_t>& rgba, uint32_t& width, uint32_t& height) {
  if (view >= views().size()) throw std::out_of_range("gibbs: view index " + std::to_string(view));
  ensure_current();
  width = static_cast<uint32_t>(s_.width);
  height = static_cast<uint32_t>(s_.height);
  const size_t n = static_cast<size_t>(width) * height;
  rgba.resize(n);
  // The colour ramp spans what the chain visits: the sample to λ + 2√λ at the largest λ (most sites stay
  // below it), the running mean and the λ map to the largest λ (the mean of x is about λ).
  const float lmax = field_.max();
  const float x_scale = 1.f / std::max(1.f, lmax + 2.f * std::sqrt(std::max(lmax, 0.f)));
  const float mean_scale = kept_ ? 1.f / (std::max(lmax, 1e-3f) * static_cast<float>(kept_)) : 0.f;
  const float lambda_scale = lmax > 0.f ? 1.f / lmax : 1.f;
  const int v = view == 1 && kept_ == 0 ? 0 : static_cast<int>(view);  // no sample kept yet: the current one
  if (gpu_) {
    Device& d = *d_;
    d.rgba.resize(n);
    colour_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(v, d.x.data(), d.sum.data(), d.lam_row.data(),
                                                                  d.lam_col.data(), d.lam_site.data(), s_.width, d.rgba.data(), n, x_scale,
                                                                  mean_scale, lambda_scale);
    MV_CUDA_CHECK_LAUNCH();
    d.rgba.download(rgba.data(), n);
    MV_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  // Rows in parallel (TBB): a lattice of up to 8192² sites is coloured every frame.
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, height), [&](const tbb::blocked_range<uint32_t>& rows) {
    for (uint32_t r = rows.begin(); r < rows.end(); ++r)
      for (uint32_t c = 0; c < width; ++c) {
        const size_t i = static_cast<size_t>(r) * width + c;
        rgba[i] = colour_cpu(v == 0   ? hx_[i] * x_scale
                             : v == 1 ? hsum_[i] * mean_scale
                                      : field_.at(static_cast<int>(r), static_cast<int>(c)) * lambda_scale);
      }
  });
}

nlohmann::json GibbsRun::report() const {
  nlohmann::json j;
  j["workload"] = workload();
  j["strategy"] = strategy();
  j["steps"] = steps_;
  j["sweeps"] = steps_;
  j["kept_samples"] = kept_;
  j["device"] = gpu_ ? "gpu" : "cpu";
  j["knobs"] = params_json(*params_);
  j["x_max"] = tables_.X;
  if (!kernel_.empty()) j["kernel"] = kernel_;
  j["sweeps_per_s"] = last_rate_sweeps_per_s_;
  j["site_updates_per_ns"] = last_rate_sweeps_per_s_ * static_cast<double>(s_.width) * s_.height * 1e-9;
  // Counted once per sweep, not once per frame (a CPU run's bands within a sweep do not count it again).
  if (hist_steps_ != steps_ || hist_runs_ != runs_) {
    hist_.assign(static_cast<size_t>(tables_.X) + 1, 0);
    for (uint8_t v : state()) ++hist_[std::min<size_t>(v, hist_.size() - 1)];
    hist_steps_ = steps_;
    hist_runs_ = runs_;
  }
  j["histogram"] = hist_;
  return j;
}

}  // namespace mv
