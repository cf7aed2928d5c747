#include "app/cli/cli_validate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/errors.h"

namespace mv::cli {

namespace fs = std::filesystem;

namespace {

/// A value of a range for the messages: integers exactly, 1e6 and above as "1e7" when that is exact.
std::string value_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 9.2e18) {
    const double a = std::fabs(v);
    if (a >= 1e6) {
      const int e = static_cast<int>(std::floor(std::log10(a)));
      const double mant = a / std::pow(10.0, e);
      if (mant == std::floor(mant)) return fmt::format("{}{}e{}", v < 0 ? "-" : "", static_cast<int>(mant), e);
    }
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{:g}", v);
}

std::string with_unit(const std::string& what, const std::string& unit) { return unit.empty() ? what : what + " " + unit; }

}  // namespace

std::string range_text(Bound lo, Bound hi) {
  if (std::isinf(hi.value)) return fmt::format("{} {}", lo.closed ? ">=" : ">", value_text(lo.value));
  return fmt::format("{}{}, {}{}", lo.closed ? "[" : "(", value_text(lo.value), value_text(hi.value),
                     hi.closed ? "]" : ")");
}

std::string must_be(const std::string& what, const std::string& text, bool not_a_number) {
  return fmt::format("must be {}, got \"{}\"{}", what, text, not_a_number ? " (not a number)" : "");
}

bool parse_number(const std::string& text, double& out) {
  // strtod accepts what users type (1e7, .5, inf, nan); hex and leading blanks are refused.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) ||
      text.find_first_of("xX") != std::string::npos)
    return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  out = v;
  return true;
}

bool is_number_text(const std::string& text) {
  double v = 0;
  return parse_number(text, v) && !std::isnan(v);
}

bool parse_number(const std::string& text, int64_t& out) {
  const char* b = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const char* e = text.data() + text.size();
  const auto r = std::from_chars(b, e, out, 10);
  return !text.empty() && r.ec == std::errc() && r.ptr == e;
}

bool parse_number(const std::string& text, uint64_t& out) {
  if (text.empty() || text[0] == '-') return false;
  const char* b = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const char* e = text.data() + text.size();
  const auto r = std::from_chars(b, e, out, 10);
  return r.ec == std::errc() && r.ptr == e;
}

CLI::Validator real(Bound lo, Bound hi, const std::string& unit) {
  const std::string what = with_unit("a finite number " + std::string(std::isinf(hi.value) ? "" : "in ") + range_text(lo, hi), unit);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        const bool number = parse_number(text, v);
        const bool ok = number && std::isfinite(v) && (lo.closed ? v >= lo.value : v > lo.value) &&
                        (hi.closed ? v <= hi.value : v < hi.value);
        return ok ? std::string() : must_be(what, text, !number);
      },
      what);
}

CLI::Validator integer(int64_t lo, int64_t hi, const std::string& unit) {
  // Every digit of the bounds: "1e9" would name a bound in a form the option refuses.
  const std::string what = with_unit(fmt::format("an integer in [{}, {}]", lo, hi), unit);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int64_t v = 0;
        const bool number = parse_number(text, v);
        if (number && v >= lo && v <= hi) {
          text = std::to_string(v);  // CLI11 converts with base 0: "010" would be octal
          return {};
        }
        return must_be(what, text, !number && !is_number_text(text));
      },
      what);
}

CLI::Validator unsigned64() {
  const std::string what = "an integer in [0, 2^64 - 1]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        uint64_t v = 0;
        if (parse_number(text, v)) {
          text = std::to_string(v);
          return {};
        }
        return must_be(what, text, !is_number_text(text));
      },
      what);
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string { return text.empty() ? "needs " + what + ", got \"\"" : std::string(); },
      what);
}

std::string list_text(const std::vector<std::string>& names) {
  std::string t;
  for (const std::string& n : names) t += (t.empty() ? "" : ", ") + n;
  return t;
}

CLI::Validator one_of(std::vector<std::string> names) {
  const std::string what = "one of " + list_text(names);
  return CLI::Validator(
      [names, what](std::string& text) -> std::string {
        if (std::find(names.begin(), names.end(), text) != names.end()) return {};
        return fmt::format("must be {}, got \"{}\"", what, text);
      },
      what);
}

CLI::Validator power_of_two(uint32_t lo, uint32_t hi) {
  return checked<uint32_t>(fmt::format("a power of two in [{}, {}]", lo, hi),
                           [=](uint32_t v) { return v >= lo && v <= hi && (v & (v - 1)) == 0; });
}

CLI::Validator multiple_of(uint32_t step, uint32_t lo, uint32_t hi) {
  return checked<uint32_t>(fmt::format("a multiple of {} in [{}, {}]", step, lo, hi),
                           [=](uint32_t v) { return v >= lo && v <= hi && v % step == 0; });
}

// ---- output files ----

void check_output_file(const std::string& path, const std::string& option, bool replace) {
  if (path.empty()) throw InputError("", option, "needs a file name, got \"\"");
  const fs::path p(path);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError("", option, "\"" + path + "\" names a folder; give a file name in it");
  if (name[0] == '.')
    throw InputError("", option, "\"" + path + "\" would be a hidden file (its name starts with '.'); give a name");
  if (path.size() >= PATH_MAX)
    throw InputError("", option,
                     fmt::format("\"{}...\" is {} characters long, more than the system's {}", path.substr(0, 40),
                                 path.size(), PATH_MAX - 1));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw InputError("", option, "the folder of \"" + path + "\" (" + dir.string() + ") does not exist; create it first");
  if (!S_ISDIR(st.st_mode))
    throw InputError("", option, "\"" + dir.string() + "\" in \"" + path + "\" is not a folder");
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t limit = name_max > 0 ? static_cast<size_t>(name_max) : NAME_MAX;
  if (name.size() > limit)
    throw InputError("", option,
                     fmt::format("the file name of \"{}...\" is {} characters long, more than the {} its folder allows",
                                 path.substr(0, 40), name.size(), limit));
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode)) throw InputError("", option, "\"" + path + "\" is a folder; give a file name");
    if (!replace)
      throw InputError("", option, "\"" + path + "\" already exists; megaview never overwrites a file (choose another "
                                   "name or remove it)");
    if (!S_ISREG(target.st_mode)) throw InputError("", option, "\"" + path + "\" is not a regular file; give another name");
  }
  // The folder takes a new file: create and remove a probe (also right for root and read-only mounts).
  static std::atomic<unsigned> counter{0};
  const std::string probe =
      (dir / fmt::format(".megaview-probe-{}-{}", ::getpid(), counter++)).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw InputError("", option, "the folder \"" + dir.string() + "\" of \"" + path + "\" does not take new files (" +
                                     std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_output_folder(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError("", option, "needs a folder, got \"\"");
  const fs::path p = fs::path(path).lexically_normal();
  const std::string last = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  if (!last.empty() && last[0] == '.' && last != "." && last != "..")
    throw InputError("", option, "\"" + path + "\" would be a hidden folder (its name starts with '.'); give a name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw InputError("", option, "\"" + path + "\" is a file, not a folder");
    check_output_file((fs::path(path) / "probe").string(), option, true);  // takes new files
    return;
  }
  const fs::path parent = fs::path(path).has_parent_path() && fs::path(path).parent_path() != fs::path(path)
                              ? fs::path(path).parent_path()
                              : fs::path(".");
  if (::stat(parent.c_str(), &st) != 0)
    throw InputError("", option,
                     "the folder \"" + parent.string() + "\" of \"" + path + "\" does not exist; create it first");
  if (!S_ISDIR(st.st_mode))
    throw InputError("", option, "\"" + parent.string() + "\" in \"" + path + "\" is not a folder");
  check_output_file((parent / "probe").string(), option, true);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ea), ea), pb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  if (ea || eb) return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
  return pa == pb;
}

void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [path, option] = outputs[i];
    if (path.empty()) continue;
    for (const auto& [in, in_option] : inputs)
      if (!in.empty() && same_file(path, in))
        throw InputError("", option,
                         "\"" + path + "\" is the file " + in_option + " reads (\"" + in +
                             "\"); megaview never writes over its input, give another name");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].first.empty() && same_file(path, outputs[j].first))
        throw InputError("", option,
                         "\"" + path + "\" is also the file of " + outputs[j].second + "; give each output its own name");
  }
}

void check_output_prefix(const std::string& prefix, const std::string& option,
                         std::initializer_list<const char*> suffixes) {
  if (prefix.empty()) throw InputError("", option, "needs a file name prefix, got \"\"");
  const std::string name = fs::path(prefix).filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError("", option,
                     "\"" + prefix + "\" names a folder; give a file name prefix in it (e.g. \"" +
                         (fs::path(prefix) / "run").string() + "\")");
  for (const char* s : suffixes) check_output_file(prefix + s, option);
}

// ---- memory ----

uint64_t available_host_bytes_unlimited();

uint64_t available_host_bytes() {
  if (const char* cap = std::getenv("MEGAVIEW_HOST_MEMORY"); cap && *cap) {  // a cap (tests, shared machines)
    uint64_t v = 0;
    if (parse_number(cap, v) && v > 0) return std::min(v, available_host_bytes_unlimited());
  }
  return available_host_bytes_unlimited();
}

uint64_t available_host_bytes_unlimited() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::string bytes_text(uint64_t b) {
  const double v = static_cast<double>(b);
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", v / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.0f} MiB", v / (1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.0f} KiB", v / (1ull << 10));
  return fmt::format("{} B", b);
}

void check_host_memory(uint64_t need, const std::string& option, const std::string& what) {
  const uint64_t avail = available_host_bytes();
  if (avail == 0 || need <= avail / 2) return;
  throw InputError("", option,
                   fmt::format("{} needs {} ({} bytes) of host memory, more than half of the {} available", what,
                               bytes_text(need), need, bytes_text(avail)));
}

}  // namespace mv::cli
