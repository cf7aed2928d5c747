#include "app/cli/figures.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "app/session/output_file.h"

extern char** environ;

namespace mv {

namespace fs = std::filesystem;

namespace {

/// `arg` as a shell word: unchanged when it holds only safe characters, else in single quotes.
std::string shell_word(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                            "-_./=:,+@%") == std::string::npos)
    return arg;
  std::string q = "'";
  for (char ch : arg) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

/// This process's command line, each argument a shell word (Linux: /proc/self/cmdline).
std::string own_command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string raw{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::string line;
  size_t start = 0;
  while (start < raw.size()) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    line += (line.empty() ? "" : " ") + shell_word(raw.substr(start, end - start));
    start = end + 1;
  }
  return line;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Every executable `name` on PATH, in PATH's order.
std::vector<std::string> all_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> found;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate, ec)) found.push_back(candidate);
    start = end + 1;
  }
  return found;
}

/// Runs argv[0] (a path) with `args`, stdout and stderr ours unless `quiet` (then /dev/null); returns the
/// exit status, or -1 when it could not be started or ended by a signal.
int run_program(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string find_python_with_matplotlib(bool* any_python) {
  std::vector<std::string> candidates = all_on_path("python3");
  const bool found_any = !candidates.empty();
  // Debian's python3-matplotlib belongs to the system interpreter, which a pyenv or venv python3 earlier
  // on PATH hides.
  if (::access("/usr/bin/python3", X_OK) == 0 &&
      std::find(candidates.begin(), candidates.end(), "/usr/bin/python3") == candidates.end())
    candidates.push_back("/usr/bin/python3");
  if (any_python) *any_python = found_any || ::access("/usr/bin/python3", X_OK) == 0;
  for (const std::string& python : candidates)
    if (run_program({python, "-c", "import matplotlib"}, true) == 0) return python;
  return {};
}

std::string figure_stem(const std::string& csv_path) {
  const std::string ext = ".csv";
  if (csv_path.size() > ext.size() && csv_path.compare(csv_path.size() - ext.size(), ext.size(), ext) == 0)
    return csv_path.substr(0, csv_path.size() - ext.size());
  return csv_path;
}

std::string figure_metadata_path(const std::string& csv_path) { return figure_stem(csv_path) + ".json"; }

std::vector<std::string> figure_files(const std::string& kind, const std::string& stem) {
  std::vector<std::string> files;
  if (kind == "mse-curve") {
    for (const char* part : {"-time", "-samples"})
      for (const char* ext : {".png", ".pdf"}) files.push_back(stem + part + ext);
  } else if (kind == "gibbs-blocks") {
    for (const char* part : {"-padding", "-warps", "-widths"})
      for (const char* ext : {".png", ".pdf"}) files.push_back(stem + part + ext);
  } else if (kind == "sort-bench" || kind == "sched-bench" || kind == "sched-model" || kind == "strand-sweep" ||
             kind == "strand-bench" || kind == "stencil-bench") {
    for (const char* ext : {".png", ".pdf"}) files.push_back(stem + ext);
  }
  return files;
}

nlohmann::json figure_metadata_json(const FigureMetadata& m, const std::string& csv_path) {
  nlohmann::json units = nlohmann::json::object();
  for (const auto& [column, unit] : m.units) units[column] = unit;
  return {{"kind", m.kind},
          {"subcommand", m.subcommand},
          {"command_line", own_command_line()},
          {"gpu", m.gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.gpu)},
          {"date", utc_now_iso8601()},
          {"megaview_version", MV_VERSION},
          {"csv", fs::path(csv_path).filename().string()},
          {"redoes", m.redoes.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.redoes)},
          {"context", m.context},
          {"units", units}};
}

void write_figure_metadata(const std::string& csv_path, const FigureMetadata& m) {
  std::string header;
  {
    std::ifstream f(csv_path);
    std::getline(f, header);
  }
  FigureMetadata kept = m;
  if (!header.empty()) {
    const std::string cells = "," + header + ",";
    kept.units.clear();
    for (const auto& unit : m.units)
      if (cells.find("," + unit.first + ",") != std::string::npos) kept.units.push_back(unit);
  }
  write_new_text_file(figure_metadata_path(csv_path), figure_metadata_json(kept, csv_path).dump(2) + "\n");
}

std::string figures_script_path() {
  const char* env = std::getenv("MV_FIGURES_SCRIPT");
  if (env && *env) return env;
  return std::string(MV_SOURCE_DIR) + "/tools/figures.py";
}

std::string figures_command(const std::string& csv_path, const std::string& out_stem) {
  std::string cmd = "python3 " + shell_word(figures_script_path());
  if (!out_stem.empty()) cmd += " --out " + shell_word(out_stem);
  return cmd + " " + shell_word(csv_path);
}

bool draw_figures(const std::string& csv_path, const std::string& out_stem) {
  try {
    const std::string script = figures_script_path();
    if (!fs::is_regular_file(script)) {
      fmt::print("figures: {} not found (set MV_FIGURES_SCRIPT to tools/figures.py of a megaview checkout); "
                 "the CSV is kept: draw them with `{}`\n",
                 script, figures_command(csv_path, out_stem));
      std::fflush(stdout);
      return false;
    }
    bool any_python = false;
    const std::string python = find_python_with_matplotlib(&any_python);
    if (python.empty()) {
      fmt::print("figures: {}; install python3-matplotlib and draw them with `{}`\n",
                 any_python ? "matplotlib not found" : "python3 not found", figures_command(csv_path, out_stem));
      std::fflush(stdout);
      return false;
    }
    std::vector<std::string> args = {python, script, "--no-overwrite"};
    if (!out_stem.empty()) args.insert(args.end(), {"--out", out_stem});
    args.push_back(csv_path);
    const int rc = run_program(args, false);
    if (rc == 0) return true;
    std::fprintf(stderr, "warning: figures: %s exited with status %d; the CSV is kept, redraw with `%s`\n",
                 script.c_str(), rc, figures_command(csv_path, out_stem).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: figures: not drawn (%s); draw them with `%s`\n", e.what(),
                 figures_command(csv_path, out_stem).c_str());
  }
  std::fflush(stderr);
  return false;
}

}  // namespace mv
