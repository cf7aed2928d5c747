// The deep-halo stencil's live run (app/session/stencil_run.h): the Jacobi rule of render/lattice/jacobi.h
// on the halo executors of sched/lattice/.
#include "app/session/stencil_run.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/session/params_report.h"
#include "base/cuda_check.h"
#include "base/param_file.h"
#include "render/lattice/jacobi.h"
#include "render/tonemap.h"
#include "sched/lattice/halo_cpu.h"
#include "sched/lattice/halo_gpu.cuh"

#include "assets_embedded.h"

namespace mv {

namespace {

/// Largest side of the view image.
constexpr int kMaxImageSide = 1024;

/// Writes the sampled field of one tile into `out` (w × h, pixel (i, j) shows global site
/// (i·n/w, j·n/h)); pixels whose site is not in the tile are left alone.
__global__ void sample_tile_kernel(const float* field, int pitch, int depth, HaloTile t, int n, int w, int h, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= w || j >= h) return;
  const int64_t gx = int64_t(i) * n / w, gy = int64_t(j) * n / h;
  if (gx < t.gx0 || gx >= t.gx0 + t.w || gy < t.gy0 || gy >= t.gy0 + t.h) return;
  out[size_t(j) * w + i] = field[size_t(gy - t.gy0 + depth) * pitch + size_t(gx - t.gx0 + depth)];
}

}  // namespace

const ParamTable<StencilSettings>& stencil_params() {
  static const ParamTable<StencilSettings> table = [] {
    using S = StencilSettings;
    ParamFile f("knobs-stencil.json", assets::find("knobs-stencil.json"));
    ParamTable<S> t;
    t.add(f.spec("size"), &S::size);
    t.add(f.spec("partitions"), &S::partitions);
    t.add(f.spec("gpus"), &S::gpus);
    t.add(f.spec("depth"), &S::depth);
    t.add(f.spec("exchange"), &S::exchange);
    t.add(f.spec("overlap"), &S::overlap);
    t.add(f.spec("iterations-per-frame"), &S::iterations_per_frame);
    t.add(f.spec("kernel", {std::begin(kHaloKernelShapes), std::end(kHaloKernelShapes)}), &S::kernel);
    f.expect_all_bound();
    return t;
  }();
  return table;
}

int stencil_gpu_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

double stencil_dram_peak_gbps(int device) {
  if (device >= stencil_gpu_count()) return 0.0;
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) return 0.0;
  if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) return 0.0;
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

struct StencilRun::Engine {
  std::unique_ptr<HaloCpu<JacobiRule>> cpu;
  std::unique_ptr<HaloGpu<JacobiRule>> gpu;

  const HaloPlan& plan() const { return cpu ? cpu->plan() : gpu->plan(); }
  void step(uint64_t k) { cpu ? cpu->step(k) : gpu->step(k); }
  HaloPhaseTimes times() { return cpu ? cpu->times() : gpu->times(); }
  void get_field(std::vector<float>& f) { cpu ? cpu->get_field(f) : gpu->get_field(f); }
  void set_field(const std::vector<float>& f) { cpu ? cpu->set_field(f) : gpu->set_field(f); }
  void fill() {
    const int n = plan().cfg.n;
    if (gpu) return gpu->fill(StencilInitial{n});
    cpu->set_field(stencil_initial_field(n));
  }
  /// The field sampled at w × h pixels.
  std::vector<float> sample(int w, int h) {
    const HaloPlan& p = plan();
    const int n = p.cfg.n, d = p.depth();
    std::vector<float> out(size_t(w) * h, 0.0f);
    if (cpu) {
      std::vector<float> f;
      cpu->get_field(f);
      for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) out[size_t(j) * w + i] = f[size_t(int64_t(j) * n / h) * n + size_t(int64_t(i) * n / w)];
      return out;
    }
    gpu->sync();
    int home = 0;
    MV_CUDA_CHECK(cudaGetDevice(&home));
    for (size_t t = 0; t < p.tiles.size(); ++t) {
      const HaloTile& T = p.tiles[t];
      MV_CUDA_CHECK(cudaSetDevice(T.gpu));
      float* dev = nullptr;
      MV_CUDA_CHECK(cudaMalloc(&dev, out.size() * sizeof(float)));
      MV_CUDA_CHECK(cudaMemcpy(dev, out.data(), out.size() * sizeof(float), cudaMemcpyHostToDevice));
      const dim3 block(16, 16), grid(unsigned((w + 15) / 16), unsigned((h + 15) / 16));
      sample_tile_kernel<<<grid, block>>>(gpu->tile_field(t), gpu->tile_pitch(t), d, T, n, w, h, dev);
      MV_CUDA_CHECK_LAUNCH();
      MV_CUDA_CHECK(cudaMemcpy(out.data(), dev, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
      MV_CUDA_CHECK(cudaFree(dev));
    }
    MV_CUDA_CHECK(cudaSetDevice(home));
    return out;
  }
};

const std::vector<StrategyInfo>& stencil_strategies() {
  static const std::vector<StrategyInfo> v = {
      {"deep-halo",
       "P partitions on G GPUs, halos of depth d exchanged every d iterations (NCCL between GPUs), the halo "
       "computed redundantly in between; the CPU reference (sched/lattice/halo_cpu.h) where there is no GPU",
       "Valen 2023 §2.7, §3", Side::Device}};
  return v;
}

StencilRun::StencilRun(const ParamValues& knobs, bool gpu) : gpu_(gpu), params_(stencil_params(), settings_) {
  params_.apply(knobs);
  rebuild(false);
}

StencilRun::~StencilRun() = default;

void StencilRun::set_strategy(const std::string& name) {
  if (name != "deep-halo") throw InputError("", "--strategy", "must be deep-halo for the stencil, got \"" + name + "\"");
}

const HaloPlan& StencilRun::plan() const { return engine_->plan(); }

void StencilRun::rebuild(bool keep_field) {
  HaloConfig c;
  c.n = settings_.size;
  c.partitions = settings_.partitions;
  c.gpus = gpu_ ? settings_.gpus : 1;
  c.depth = settings_.depth;
  c.exchange = settings_.exchange;
  c.overlap = settings_.overlap;
  c.kernel = settings_.kernel;
  const int present = gpu_ ? stencil_gpu_count() : 0;
  HaloPlan plan;
  try {
    if (!gpu_) check_stencil_host_memory(c.n, "--size");
    if (!gpu_ && settings_.gpus > 1)
      throw InputError("", "--gpus", "must be 1 on the CPU reference, got " + std::to_string(settings_.gpus));
    check_halo_config(c, gpu_ ? std::max(present, 1) : 0);
    plan = make_halo_plan(c);
  } catch (const InputError&) {
    if (engine_) settings_ = running_;  // refused: the run goes on as it was
    throw;
  }
  std::vector<float> field;
  if (keep_field && engine_) engine_->get_field(field);
  auto e = std::make_unique<Engine>();
  try {
    if (gpu_)
      e->gpu = std::make_unique<HaloGpu<JacobiRule>>(plan);
    else
      e->cpu = std::make_unique<HaloCpu<JacobiRule>>(plan);
  } catch (...) {
    if (engine_) settings_ = running_;
    throw;
  }
  engine_.reset();  // free the old buffers first
  engine_ = std::move(e);
  if (keep_field)
    engine_->set_field(field);
  else {
    engine_->fill();
    steps_ = 0;
  }
  running_ = settings_;
  since_ = {};
  ms_per_iteration_ = 0.0;
}

void StencilRun::apply_pending() {
  const StencilSettings& a = settings_;
  const StencilSettings& b = running_;
  if (a.size != b.size) return rebuild(false);
  if (a.partitions != b.partitions || a.gpus != b.gpus || a.depth != b.depth || a.exchange != b.exchange ||
      a.overlap != b.overlap || a.kernel != b.kernel)
    rebuild(true);
  running_ = settings_;
}

void StencilRun::restart() {
  rebuild(false);
}

HaloPhaseTimes StencilRun::run_timed(uint64_t iterations) {
  apply_pending();
  const HaloPhaseTimes before = engine_->times();
  engine_->step(iterations);
  const HaloPhaseTimes after = engine_->times();
  HaloPhaseTimes d;
  d.total_ms = after.total_ms - before.total_ms;
  d.compute_ms = after.compute_ms - before.compute_ms;
  d.inner_ms = after.inner_ms - before.inner_ms;
  d.outer_ms = after.outer_ms - before.outer_ms;
  d.pack_ms = after.pack_ms - before.pack_ms;
  d.exchange_ms = after.exchange_ms - before.exchange_ms;
  d.unpack_ms = after.unpack_ms - before.unpack_ms;
  d.wait_ms = after.wait_ms - before.wait_ms;
  d.iterations = after.iterations - before.iterations;
  d.exchanges = after.exchanges - before.exchanges;
  steps_ += iterations;
  since_.add(d);
  if (d.iterations > 0) ms_per_iteration_ = d.total_ms / double(d.iterations);
  return d;
}

uint64_t StencilRun::advance(double budget_ms) {
  apply_pending();
  // At most iterations-per-frame (or 2^20), and no more than the measured rate fits in the budget: an
  // unknown rate is measured on one iteration first, so that no frame runs far past its budget.
  const uint64_t most = settings_.iterations_per_frame > 0 ? uint64_t(settings_.iterations_per_frame) : uint64_t(1) << 20;
  uint64_t done = 0;
  double spent = 0.0;
  if (ms_per_iteration_ <= 0.0) {
    spent = run_timed(1).total_ms;
    done = 1;
  }
  if (done < most && ms_per_iteration_ > 0.0) {  // at least one iteration per frame
    const double fits = std::floor((budget_ms - spent) / ms_per_iteration_);
    const uint64_t k = uint64_t(std::clamp(fits, done == 0 ? 1.0 : 0.0, double(most - done)));
    if (k > 0) run_timed(k);
    done += k;
  }
  return done;
}

std::vector<float> StencilRun::field() {
  apply_pending();
  std::vector<float> f;
  engine_->get_field(f);
  return f;
}

void StencilRun::image(size_t view, std::vector<uint32_t>& rgba, uint32_t& width, uint32_t& height) {
  if (view >= views().size()) throw std::out_of_range("stencil view " + std::to_string(view));
  apply_pending();
  const HaloPlan& p = engine_->plan();
  const int n = p.cfg.n, w = std::min(n, kMaxImageSide), h = w;
  const std::vector<float> v = engine_->sample(w, h);
  float lo = v.empty() ? 0.f : v[0], hi = lo;
  for (float x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  const float scale = hi > lo ? 1.f / (hi - lo) : 0.f;
  rgba.resize(size_t(w) * h);
  // Which tile column / row a pixel's site falls in (tiles share columns and rows).
  auto tile_col = [&](int i) {
    const int64_t gx = int64_t(i) * n / w;
    int c = 0;
    while (c + 1 < p.px && p.tiles[size_t(c + 1)].gx0 <= gx) ++c;
    return c;
  };
  auto tile_row = [&](int j) {
    const int64_t gy = int64_t(j) * n / h;
    int r = 0;
    while (r + 1 < p.py && p.tiles[size_t((r + 1) * p.px)].gy0 <= gy) ++r;
    return r;
  };
  std::vector<int> col(static_cast<size_t>(w)), row(static_cast<size_t>(h));
  for (int i = 0; i < w; ++i) col[size_t(i)] = tile_col(i);
  for (int j = 0; j < h; ++j) row[size_t(j)] = tile_row(j);
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      const bool border = (i > 0 && col[size_t(i)] != col[size_t(i - 1)]) || (j > 0 && row[size_t(j)] != row[size_t(j - 1)]);
      rgba[size_t(j) * w + i] = border ? 0xFFFFFFFFu : pack_rgba8(heat_color((v[size_t(j) * w + i] - lo) * scale));
    }
  width = uint32_t(w);
  height = uint32_t(h);
}

nlohmann::json StencilRun::report() const {
  nlohmann::json r;
  r["workload"] = workload();
  r["strategy"] = strategy();
  r["steps"] = steps_;
  r["device"] = gpu_ ? "gpu" : "cpu";
  r["knobs"] = params_json(params_);  // typed, keyed as every sidecar's settings (app/session/params_report.h)
  const HaloPlan& p = engine_->plan();
  r["tiles"] = std::to_string(p.px) + "x" + std::to_string(p.py);
  const HaloPhaseTimes& t = since_;
  r["iterations"] = t.iterations;
  r["exchanges"] = t.exchanges;
  if (t.iterations > 0 && t.total_ms > 0) {
    const double it = double(t.iterations);
    nlohmann::json ph;
    ph["total"] = t.total_ms / it;
    ph["compute"] = t.compute_ms / it;
    ph["inner"] = t.inner_ms / it;
    ph["outer"] = t.outer_ms / it;
    ph["pack"] = t.pack_ms / it;
    ph["exchange"] = t.exchange_ms / it;
    ph["unpack"] = t.unpack_ms / it;
    ph["wait"] = t.wait_ms / it;
    r["phase_ms_per_iteration"] = ph;
    const double n2 = double(p.cfg.n) * p.cfg.n;  // useful updates per iteration
    r["gupdates_per_s"] = n2 / (t.total_ms / it) / 1e6;
    r["gb_per_s"] = n2 * JacobiRule::kBytesPerUpdate / (t.total_ms / it) / 1e6;
    r["bytes_per_update"] = JacobiRule::kBytesPerUpdate;
  }
  return r;
}

}  // namespace mv
