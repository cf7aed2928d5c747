// Strand workload registry: one line per workload; the strategies come from make_strand_registry<W>.
#include "app/session/strand_workloads.h"
#include "app/session/path_tracer_strand_workload.h"
#include "app/session/volume_strand_workloads.h"
#include "render/strands/checkerboard.h"
#include "render/strands/lic2d.h"
#include "sched/strand_registry.cuh"

namespace mv {

namespace {

/// The workloads whose strands are pixels have no picture of their own (StrandResult::view_rgba stays
/// empty); ridge3d's overload (app/session/volume_strand_workloads.h) draws its particles.
template <class W>
void add_view_image(const W&, const StrandRun<W>&, const StrandViewParams&, StrandResult&) {}

/// `make_workload(width, height, side, view)` builds the workload over data on `side`: Side::Device for a strategy
/// that needs the GPU, Side::Host for the CPU ones (volume workloads point at a host or a device volume); a
/// workload with knobs of its own is made by `make_workload(width, height, side, view, knobs)`.
template <class W, class Make>
StrandWorkloadEntry make_entry(std::string name, std::string description, uint32_t width, uint32_t height,
                               uint32_t max_side, StrandViewKind view_kind, const StrandStrategyRegistry<W>& registry,
                               Make make_workload, StrandTolerance tolerance = StrandTolerance{}) {
  StrandWorkloadEntry e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.default_width = width;
  e.default_height = height;
  e.max_side = max_side;
  e.tolerance = tolerance;
  e.view_kind = view_kind;
  for (const auto& s : registry.entries()) e.strategies.push_back(s.info);
  e.run_fn = [&registry, make_workload, max_side, name = e.name](std::string_view strategy, uint32_t w, uint32_t h,
                                                                  const StrandRunSettings& settings, bool image,
                                                                  const StrandViewParams& view,
                                                                  const ParamValues& knobs) {
    if (w < 1 || h < 1 || w > max_side || h > max_side)
      throw InputError("", "--size",
                       std::to_string(w) + "x" + std::to_string(h) + " is out of range: width and height in [1, " +
                           std::to_string(max_side) + "]");
    find_strand_workload(name).check_size_multiple(w, h, "--size");
    view.validate();
    const auto& entry = registry.find(strategy);
    const Side side = entry.info.needs_gpu() ? Side::Device : Side::Host;
    const W workload = [&] {
      if constexpr (std::is_invocable_v<Make, uint32_t, uint32_t, Side, const StrandViewParams&, const ParamValues&>)
        return make_workload(w, h, side, view, knobs);
      else
        return make_workload(w, h, side, view);
    }();
    auto s = entry.make();
    StrandRun<W> run = s->run(workload, settings);
    if (image) {
      StrandResult view_only;  // the workload's own picture (ridge3d's splats) while the states still exist
      add_view_image(workload, run, view, view_only);
      StrandResult r = finish_strand_run(workload, std::move(run), w, h);
      r.view_rgba = std::move(view_only.view_rgba);
      r.view_width = view_only.view_width;
      r.view_height = view_only.view_height;
      return r;
    }
    StrandResult r;
    r.width = w;
    r.height = h;
    r.status = std::move(run.status);
    r.steps = std::move(run.steps);
    r.finish_order = std::move(run.finish_order);
    r.timing = std::move(run.timing);
    return r;
  };
  return e;
}

}  // namespace

MandelbrotStrands mandelbrot_workload(uint32_t width, uint32_t height, Side /*the workload holds no data*/,
                                      const StrandViewParams& view) {
  view.validate();
  MandelbrotParams p;
  p.width = width;
  p.height = height;
  const MandelbrotRegion r = mandelbrot_region(view, width, height);
  p.x0 = r.x0;
  p.x1 = r.x1;
  p.y0 = r.y0;
  p.y1 = r.y1;
  return MandelbrotStrands{p};
}

namespace {
/// A tolerance for results that may differ (StrandTolerance's fields after `exact`, in their order).
StrandTolerance inexact(uint32_t max_step_diff, double min_same_steps, float pixel_tol, double min_close_pixels,
                        float max_pixel_diff) {
  return StrandTolerance{false, max_step_diff, min_same_steps, pixel_tol, min_close_pixels, max_pixel_diff};
}

/// The volume renderers' agreement (measured by tests/test_volume_strands_gpu.cu on the GPU against the
/// CPU: steps within 2 for ≥ 99.5 % identical strands, colours within 2e-3 for ≥ 99.5 % of pixels and
/// 0.1 everywhere): FMA contraction differs between nvcc and the host compiler (and between the CPU
/// loops' FMA and plain copies), so a ray can cross the opacity threshold a step apart.
StrandTolerance volume_tolerance() {
  StrandTolerance t;
  t.exact = false;
  return t;
}

/// path-tracer's agreement between strategies. CPU strategies run the same host code (no FMA clones:
/// render/strands/path_tracer_strands.h) and must agree bit for bit, which the tests demand separately. Step
/// counts are identical by construction (every strand takes ⌈target_spp / paths_per_pixel⌉ updates), so no
/// step may differ. GPU colours differ from the CPU's by nvcc's FMA contraction and CUDA's math functions:
/// ~1e-6 relative for a path that takes the same way (far below pixel_tol = 2e-3 after the gamma-2.2 encode
/// of a [0, 1] value), and anything up to a full channel (1, the clamp) in the rare pixel where one of its
/// samples' paths branches differently (a hit within rounding of an edge, a roulette draw at its threshold).
/// The share of such pixels is bounded by min_close_pixels = 0.99. Measured stand-in on the CPU (the same code
/// FMA-contracted against plain, room, 32 spp): 99.953 % of the pixels within 2e-3 at 800 × 600 (max |Δ| 0.31),
/// 99.940 % at 400 × 300; the bound leaves 20× that share for the GPU's further differences (its math
/// functions). max_pixel_diff = 1 says that one divergent path may move its pixel anywhere in the displayed
/// range. docs/strands.md, "The path tracer as a strand program".
StrandTolerance path_tracer_tolerance() { return inexact(0, 1.0, 2e-3f, 0.99, 1.f); }

/// lic2d's agreement: the CPU strategies equal sequential bit for bit (render/strands/lic2d.h, kCpuFma), so
/// these bounds are for the GPU, whose sinf/cosf and FMA contraction move a position in its last bits. That
/// changes a step count only where a strand ends within rounding of the domain's edge (up to steps − 1 = 9
/// updates apart), and a LIC value by rounding unless a streak ends at a different edge sample.
StrandTolerance lic2d_tolerance() { return inexact(9, 0.999, 2e-3f, 0.995, 0.5f); }

/// ridge3d's agreement: the CPU strategies equal sequential bit for bit (render/strands/ridge3d.h, kCpuFma). On
/// the GPU, FMA contraction moves a probe in its last bits; a particle that converges does so to the same
/// step, but one that wanders on a weak ridge until max_steps may end up elsewhere (any step count up to
/// max_steps − 1 = 15 apart). Measured stand-in on the CPU (the FMA clones against the plain code, ch2
/// 20³ seeds): 98.95 % identical step counts; the bounds allow 2 % of the particles to differ.
StrandTolerance ridge3d_tolerance() { return inexact(15, 0.98, 2e-3f, 0.98, 1.f); }

/// Sets e's knobs to `table`'s specs and their defaults to `defaults`' values.
template <class S>
void set_knobs(StrandWorkloadEntry& e, const ParamTable<S>& table, S defaults) {
  e.knobs = table.specs();
  e.knob_defaults = BoundParams<S>(table, defaults).values();
}

/// The strand strategies instantiated for workload type W (built once).
template <class W>
const StrandStrategyRegistry<W>& strategies_for() {
  static const StrandStrategyRegistry<W> r = make_strand_registry<W>();
  return r;
}
}  // namespace

const StrandStrategyRegistry<MandelbrotStrands>& mandelbrot_strand_strategies() {
  return strategies_for<MandelbrotStrands>();
}

const StrandStrategyRegistry<PathTracerStrands>& path_tracer_strand_strategies() {
  return strategies_for<PathTracerStrands>();
}

const std::vector<StrandWorkloadEntry>& strand_workloads() {
  static const std::vector<StrandWorkloadEntry> entries = [] {
    std::vector<StrandWorkloadEntry> v;
    v.push_back(make_entry("mandelbrot", "escape-time fractal, one strand per pixel, cap 1900 (Lehmann 2023 A.3)",
                           2000, 2000, 16384, StrandViewKind::Plane, mandelbrot_strand_strategies(), mandelbrot_workload));
    v.back().paper_steps = {284.571, 679.472, 2.388};
    v.push_back(make_entry(VrLiteCam::kName,
                           "Phong-shaded volume ray caster on Colin27 (ch2), one strand per pixel, one step per update "
                           "(Lehmann 2023 A.1)",
                           460, 360, 4096, StrandViewKind::Orbit, strategies_for<VrLiteCam>(), vr_lite_cam_workload, volume_tolerance()));
    set_knobs(v.back(), volume_knob_table(), volume_knob_defaults<VrLiteCamParams>());
    v.back().paper_steps = {457.903, 311.090, 0.679};
    v.push_back(make_entry(IllustVr::kName,
                           "curvature-based illustrative volume rendering on ch2 (Kindlmann 2003; Lehmann 2023 A.2)",
                           640, 480, 4096, StrandViewKind::Orbit, strategies_for<IllustVr>(), illust_vr_workload, volume_tolerance()));
    set_knobs(v.back(), volume_knob_table(), volume_knob_defaults<IllustVrParams>());
    v.back().paper_steps = {775.904, 378.906, 0.488};
    v.push_back(make_entry("path-tracer",
                           "the path tracer's patch tasks on room: one strand per pixel of 4x4 patches, 2 paths per "
                           "update, stable at 32 spp (Kerbl 2012 6.3)",
                           800, 600, kPathTracerStrandMaxSide, StrandViewKind::Fixed, path_tracer_strand_strategies(),
                           path_tracer_workload, path_tracer_tolerance()));
    v.back().size_multiple = kPatchSize;
    v.back().size_multiple_why = "one strand per pixel of 4×4 patch tasks";
    v.push_back(make_entry("lic2d", "line integral convolution of a cellular 2D flow, 10 midpoint steps per strand "
                           "(Cabral 1993; Lehmann 2023 A.9)", 1020, 561, 16384, StrandViewKind::Fixed,
                           strategies_for<Lic2dStrands>(), lic2d_workload, lic2d_tolerance()));
    v.back().paper_steps = {9.975, 0.474, 0.048};
    v.push_back(make_entry("ridge3d",
                           "particles converging onto ridge surfaces of ch2 by Newton steps in the Hessian's "
                           "eigenbasis, a 120^3 seed grid as 120 slices (Eberly 1996; Lehmann 2023 A.25)",
                           120, 14400, 16384, StrandViewKind::Orbit, strategies_for<Ridge3dStrands>(), ridge3d_workload,
                           ridge3d_tolerance()));
    v.back().paper_steps = {8.155, 5.939, 0.728};
    v.push_back(make_entry("checkerboard", "toy: one strand per pixel, 256 steps in light cells, 8 in dark ones", 512,
                           512, 16384, StrandViewKind::Fixed, strategies_for<CheckerboardStrands>(), checkerboard_workload));
    return v;
  }();
  return entries;
}

std::string strand_workload_names() {
  std::string names;
  for (const StrandWorkloadEntry& e : strand_workloads()) names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

std::vector<ParamSpec> strand_workload_knobs() {
  std::vector<ParamSpec> all;
  for (const StrandWorkloadEntry& e : strand_workloads())
    for (const ParamSpec& k : e.knobs)
      if (!find_param(all, k.name)) all.push_back(k);
  return all;
}

void StrandWorkloadEntry::check_knobs(const ParamValues& values) const {
  for (const auto& [knob, text] : values) {
    if (const ParamSpec* spec = find_param(knobs, knob)) {
      parse_param(*spec, text);
      continue;
    }
    std::string owners;
    for (const StrandWorkloadEntry& e : strand_workloads())
      if (find_param(e.knobs, knob)) owners += (owners.empty() ? "" : ", ") + e.name;
    throw InputError("", "--" + knob,
                     owners.empty() ? "is not a knob of any strand workload"
                                    : "applies to " + owners + ", not to " + name);
  }
}

ParamValues StrandWorkloadEntry::knob_values(const ParamValues& given) const {
  ParamValues all = knob_defaults;
  for (const auto& [knob, text] : given)
    if (find_param(knobs, knob)) all[knob] = text;
  return all;
}

const StrandWorkloadEntry& find_strand_workload(std::string_view name) {
  for (const StrandWorkloadEntry& e : strand_workloads())
    if (e.name == name) return e;
  throw InputError("", "--workload",
                   "unknown strand workload \"" + std::string(name) + "\" (allowed: " + strand_workload_names() + ")");
}

void StrandWorkloadEntry::check_size_multiple(uint32_t width, uint32_t height, const std::string& option) const {
  if (size_multiple <= 1 || (width % size_multiple == 0 && height % size_multiple == 0)) return;
  throw InputError("", option,
                   std::to_string(width) + "x" + std::to_string(height) + ": width and height must be multiples of " +
                       std::to_string(size_multiple) + " for " + name +
                       (size_multiple_why.empty() ? "" : " (" + size_multiple_why + ")"));
}

const StrategyInfo& StrandWorkloadEntry::strategy(std::string_view n) const {
  std::string names;
  for (const StrategyInfo& i : strategies) {
    if (i.name == n) return i;
    names += (names.empty() ? "" : ", ") + i.name;
  }
  throw InputError("", "--strategy", "unknown strand strategy \"" + std::string(n) + "\" (allowed: " + names + ")");
}

}  // namespace mv
