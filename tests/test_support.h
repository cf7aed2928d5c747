// Helpers shared by the tests: small scenes built in code and film statistics.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/session/session.h"
#include "base/errors.h"
#include "render/gpu.h"
#include "render/metrics.h"
#include "render/pathtracer/patch_workload.h"
#include "render/pathtracer/scene.h"

namespace mv::test {

#define MV_REQUIRE_GPU()                                                                 \
  do {                                                                                   \
    if (!::mv::gpu_available()) GTEST_SKIP() << "no CUDA GPU: " << ::mv::gpu_info().reason; \
  } while (0)

/// A fresh directory under the system's temp folder, removed with everything in it at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string t = (std::filesystem::temp_directory_path() / ("megaview-" + tag + "-XXXXXX")).string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed for " + t);
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// The whole file as bytes.
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// The megaview binary the CLI tests run: $MEGAVIEW_BINARY when set (a dist/ copy on the GPU machine),
/// else the one CMake built (MV_BINARY).
inline std::string megaview_binary() {
  const char* b = std::getenv("MEGAVIEW_BINARY");
  return b && *b ? b : MV_BINARY;
}

/// Exit status and captured streams of one `megaview` run.
struct CliResult {
  int code = -1;
  std::string out, err;
  double seconds = 0.0;  ///< wall-clock time of the run
  int err_lines() const { return static_cast<int>(std::count(err.begin(), err.end(), '\n')); }
};

/// Runs `<env> megaview <args>` through the shell with stdin from /dev/null, capturing stdout and stderr
/// in files of `dir`. env: "VAR=value ..." or empty.
inline CliResult run_megaview(const TempDir& dir, const std::string& args, const std::string& env = "") {
  const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = env + " '" + megaview_binary() + "' " + args + " > '" + out + "' 2> '" + err + "' < /dev/null";
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// The smallest percentage of the progress lines "<label>NN.N%, …" in `err` (app/cli/progress.h), or +inf
/// when there is none: below 100 means a line came while the job was still running.
inline double least_progress_percent(const std::string& err, const std::string& label) {
  double least = HUGE_VAL;
  for (size_t at = err.find(label); at != std::string::npos; at = err.find(label, at + 1))
    least = std::min(least, std::strtod(err.c_str() + at + label.size(), nullptr));
  return least;
}

/// A closed enclosure seen from inside, every wall diffuse with albedo `a` and emission `e`:
/// the radiance everywhere is e / (1 - a) (the white-furnace test). `quads` builds it from six
/// inward-facing emissive quads (exercising next-event estimation); otherwise from one Box.
inline Scene furnace_scene(float albedo, float emission, bool quads, int size = 16) {
  Scene s;
  s.name = quads ? "furnace-quads" : "furnace-box";
  s.width = s.height = size;
  s.target_spp = 64;
  s.max_depth = 1024;  // truncation bias a^depth is negligible; Russian roulette ends paths
  Material m;
  m.type = MaterialType::Diffuse;
  m.albedo = Vec3{albedo};
  m.emission = Vec3{emission};
  s.materials.push_back(m);
  s.material_names.push_back("wall");
  s.camera.position = {0.1f, 0.2f, 0.3f};
  s.camera.look_at = {0.5f, -0.3f, -1.f};
  s.camera.vfov_deg = 90.f;
  if (quads) {
    const float lo = -1.f, d = 2.f;
    // Each face is listed with edges (a, b) whose a × b points out of the cube; the quad takes them as
    // (b, a), so its normal (and a light's emitting side) faces into the cube.
    auto quad = [&](Vec3 c, Vec3 a, Vec3 b) { s.quads.push_back(Quad{c, b, a, 0, {}, 0.f}); };
    quad({lo, lo, lo}, {0, d, 0}, {d, 0, 0});   // z = lo
    quad({lo, lo, -lo}, {d, 0, 0}, {0, d, 0});  // z = hi
    quad({lo, lo, lo}, {0, 0, d}, {0, d, 0});   // x = lo
    quad({-lo, lo, lo}, {0, d, 0}, {0, 0, d});  // x = hi
    quad({lo, lo, lo}, {d, 0, 0}, {0, 0, d});   // y = lo
    quad({lo, -lo, lo}, {0, 0, d}, {d, 0, 0});  // y = hi
  } else {
    s.boxes.push_back(Box{{-1.f, -1.f, -1.f}, {1.f, 1.f, 1.f}, 0});
  }
  s.finalize();
  return s;
}

/// A small lit box with every material (a light quad; mirror, glass and glossy spheres), width × height,
/// max depth 16: the GPU = CPU image tests render it.
inline Scene all_materials_scene(int width, int height) {
  Scene scene = furnace_scene(0.5f, 0.f, false);
  scene.materials[0].emission = Vec3{0.f};
  Material light;
  light.type = MaterialType::Emissive;
  light.emission = Vec3{4.f};
  Material mirror{MaterialType::Mirror, Vec3{0.9f}, Vec3{0.f}, 1.5f, 64.f};
  Material glass{MaterialType::Glass, Vec3{1.f}, Vec3{0.f}, 1.5f, 64.f};
  Material glossy{MaterialType::Glossy, Vec3{0.8f, 0.6f, 0.3f}, Vec3{0.f}, 1.5f, 50.f};
  scene.materials = {scene.materials[0], light, mirror, glass, glossy};
  scene.material_names = {"wall", "light", "mirror", "glass", "glossy"};
  scene.quads.push_back(Quad{{-0.4f, 0.99f, -0.4f}, {0.8f, 0.f, 0.f}, {0.f, 0.f, 0.8f}, 1, {}, 0.f});
  scene.spheres = {Sphere{{-0.5f, -0.6f, -0.5f}, 0.35f, 2}, Sphere{{0.4f, -0.6f, -0.3f}, 0.35f, 3},
                   Sphere{{0.f, -0.2f, 0.5f}, 0.3f, 4}};
  scene.camera.position = {0.f, 0.f, 0.95f};
  scene.camera.look_at = {0.f, -0.2f, -1.f};
  scene.width = width;
  scene.height = height;
  scene.max_depth = 16;
  scene.finalize();
  return scene;
}

/// Mean and standard error over pixels of the per-pixel luminance-free channel average.
struct ImageStats {
  double mean = 0.0, stderr_ = 0.0;
};
inline ImageStats channel_mean(const std::vector<float>& rgb) {
  const size_t n = rgb.size() / 3;
  double s = 0.0, s2 = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double v = (rgb[3 * i] + rgb[3 * i + 1] + rgb[3 * i + 2]) / 3.0;
    s += v;
    s2 += v * v;
  }
  ImageStats st;
  st.mean = s / n;
  st.stderr_ = std::sqrt(std::max(0.0, s2 / n - st.mean * st.mean) / (n - 1));
  return st;
}

/// Renders `scene` to its target with the named strategy (CPU or GPU) and returns the mean image.
inline std::vector<float> render_mean_image(PatchWorkload& w, const std::string& strategy, uint32_t wave = 8192) {
  const auto& entry = patch_strategies().find(strategy);
  auto strat = entry.make();
  w.make_current(entry.info.side);
  ScheduleSettings s;
  s.wave_size = wave;
  for (int guard = 0; guard < 1000000; ++guard) {
    const StepStats st = strat->step(w, 1u << 20, s);
    if (st.work == 0) break;
  }
  w.make_current(Side::Host);
  return w.film().mean_rgb();
}

/// Expects the mean image `gpu` of a render to match the CPU's `cpu` of the same samples far more closely than
/// `other`, a render with another seed, matches it: MSE(cpu, gpu) < 2 % of MSE(cpu, other), and the latter > 0.
/// All three are RGB floats of the same film.
inline void expect_same_samples_image(const std::vector<float>& cpu, const std::vector<float>& gpu,
                                      const std::vector<float>& other) {
  ASSERT_EQ(cpu.size(), gpu.size());
  ASSERT_EQ(cpu.size(), other.size());
  const size_t px = cpu.size() / 3;
  const double gpu_vs_cpu = mse_images(cpu.data(), gpu.data(), px);
  const double noise = mse_images(cpu.data(), other.data(), px);
  EXPECT_GT(noise, 0.0);
  EXPECT_LT(gpu_vs_cpu, 0.02 * noise) << "GPU-CPU MSE " << gpu_vs_cpu << " vs seed-to-seed MSE " << noise;
}

/// Runs `f`, expecting an InputError whose file is `file`, whose field is `field`, whose message starts
/// with "file: field: " (each part only when not empty) and contains every string in `parts`; returns the
/// message (empty after a failure).
inline std::string expect_input_error(const std::function<void()>& f, const std::string& file, const std::string& field,
                                      const std::vector<std::string>& parts = {}) {
  try {
    f();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), file) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    const std::string what = e.what();
    const std::string prefix = (file.empty() ? "" : file + ": ") + (field.empty() ? "" : field + ": ");
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    return what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error; expected one naming " << file << " and " << field;
  return "";
}

}  // namespace mv::test
