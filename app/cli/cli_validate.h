// Command-line values checked while CLI11 parses, before any work starts, with one message style:
//   --time-ms: must be a finite number in (0, 1e7] ms, got "nan"
//   --spp: must be an integer in [1, 1048576], got "abc" (not a number)
// CLI11 prefixes the option's name ("--time-ms: ") to what a validator returns; app/cli/main.cpp prints the
// whole as one line "megaview: <message>" and exits non-zero. The validators only check: CLI11 converts
// the text afterwards, so a validator must accept exactly the texts that the option's type converts.
//
// Also here: output paths checked before the work (folder exists and takes new files, a file name that
// is not empty or hidden, nothing there yet), and the memory a job needs against what the host has.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mv::cli {

/// A bound of a range: its value and whether the value itself is allowed.
struct Bound {
  double value;
  bool closed = true;
};

/// The range text of the messages: "[1, 64]", "(0, 1e7]"; integral values print exactly (a power of
/// ten of 1e6 or more as "1e7"). An infinite upper bound prints as "> lo" / ">= lo".
std::string range_text(Bound lo, Bound hi);

/// A finite decimal number in [lo, hi] (each end open unless `closed`); `unit` (e.g. "ms") follows the
/// range in the message. Rejects NaN, ±inf, trailing characters and empty text.
CLI::Validator real(Bound lo, Bound hi, const std::string& unit = "");

/// A decimal integer in [lo, hi] (no sign for lo >= 0, no fraction, no exponent, no hex or octal; "-1" for an
/// unsigned option is refused rather than wrapped). The message prints the bounds with every digit, as the
/// option takes them ("[0, 100000000]", not "1e8"). `unit` as for real().
CLI::Validator integer(int64_t lo, int64_t hi, const std::string& unit = "");

/// A decimal integer in [0, 2^64 - 1] (seeds of 64 bits); "-1" is refused, not wrapped.
CLI::Validator unsigned64();

/// Any text but the empty one: "needs <what>, got """ (e.g. what = "a file name").
CLI::Validator non_empty(const std::string& what);

/// One of `names` (case-sensitive): "must be one of a, b, c, got "x"".
CLI::Validator one_of(std::vector<std::string> names);

/// "a, b, c" (the list of the messages).
std::string list_text(const std::vector<std::string>& names);

/// A power of two in [lo, hi] (lo, hi powers of two).
CLI::Validator power_of_two(uint32_t lo, uint32_t hi);

/// An integer in [lo, hi] that is a multiple of `step`.
CLI::Validator multiple_of(uint32_t step, uint32_t lo, uint32_t hi);

/// A number checked by a predicate: "must be <what>, got "<text>"" (" (not a number)" when the text does
/// not convert to T). For ranges that are not one interval, e.g. "0 or in [2, 65536]".
template <class T, class Ok>
CLI::Validator checked(const std::string& what, Ok ok);

/// The validator message for `text` failing `what` (shared by the templates above).
std::string must_be(const std::string& what, const std::string& text, bool not_a_number);

/// Parses `text` fully as T (decimal; floating point accepts what strtod does except hex): false if it
/// does not convert or has trailing characters.
bool parse_number(const std::string& text, double& out);
bool parse_number(const std::string& text, int64_t& out);
bool parse_number(const std::string& text, uint64_t& out);
/// Whether `text` reads as a number at all (NaN does not): "1.5" and "-1" do, "abc" and "nan" do not. A
/// value that is a number but not of the option's kind (e.g. "1.5" for an integer) is not flagged
/// " (not a number)".
bool is_number_text(const std::string& text);

template <class T, class Ok>
CLI::Validator checked(const std::string& what, Ok ok) {
  return CLI::Validator(
      [what, ok](std::string& text) -> std::string {
        using P = std::conditional_t<std::is_floating_point_v<T>, double,
                                     std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
        P v{};
        const bool number = parse_number(text, v);
        const bool fits = number && (std::is_floating_point_v<T> ||
                                     (v >= static_cast<P>(std::numeric_limits<T>::lowest()) &&
                                      v <= static_cast<P>(std::numeric_limits<T>::max())));
        if (!fits || !ok(static_cast<T>(v))) return must_be(what, text, !number && !is_number_text(text));
        if constexpr (!std::is_floating_point_v<T>) text = std::to_string(v);  // CLI11 reads "010" as octal
        return {};
      },
      what);
}

// ---- output files ----

/// Checks, before any work, that a file can be written at `path` for `option` (e.g. "--out"):
/// the name is not empty, does not end in '/', its file name does not start with '.' (an empty name
/// before the extension, e.g. "d/.csv", would be a hidden file) and fits the folder's limit on name
/// length (pathconf's NAME_MAX), the folder exists, is a folder and takes a new file (a probe file is
/// created and removed), nothing but a file is in the way (a folder is refused even with `replace`),
/// and nothing exists at `path` yet (unless `replace`). Throws InputError naming the option and the path.
void check_output_file(const std::string& path, const std::string& option, bool replace = false);

/// Checks, before any work, a folder that outputs go into (e.g. --capture-dir): the name is not empty and
/// its last part does not start with '.' (hidden), an existing one is a folder that takes new files, a
/// missing one lies in a folder that exists (megaview creates one level, not a whole path). Throws
/// InputError naming the option and the path.
void check_output_folder(const std::string& path, const std::string& option);

/// Whether two paths name the same file: the same device and inode where both exist, else the same
/// absolute path once the folders that exist are resolved (symbolic links, "..").
bool same_file(const std::string& a, const std::string& b);

/// An output file and the option (or the companion it is, e.g. "--out (its EXR)") that names it.
using NamedPath = std::pair<std::string, std::string>;

/// Refuses, naming both options, two outputs that are the same file, and an output that is one of the
/// `inputs` (files read by the job, e.g. the scene: even --force never replaces what is being read).
void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

/// For options that name a prefix P of several files (P.csv, P.png, …): the same checks as
/// check_output_file on every `prefix + suffix`, and the prefix's file-name part must not be empty
/// ("d/" is refused: it would write "d/.csv").
void check_output_prefix(const std::string& prefix, const std::string& option, std::initializer_list<const char*> suffixes);

// ---- memory ----

/// Host memory available for a new allocation, in bytes: MemAvailable of /proc/meminfo, else the free
/// physical pages; 0 if unknown. $MEGAVIEW_HOST_MEMORY (bytes, a decimal integer) caps it, e.g. on a
/// shared machine or in tests.
uint64_t available_host_bytes();

/// "1.5 GiB", "640 MiB", "12 KiB", "17 B".
std::string bytes_text(uint64_t bytes);

/// Throws InputError naming `option` if `need` bytes (for `what`, e.g. "a film of 16384x16384") exceed
/// half of available_host_bytes() (the rest is for everything else); the message gives both amounts.
/// Does nothing when the available memory is unknown.
void check_host_memory(uint64_t need, const std::string& option, const std::string& what);

}  // namespace mv::cli
