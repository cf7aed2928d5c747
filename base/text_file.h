// Reading a whole text file for a loader whose errors name the file (scene files, transfer functions).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "base/errors.h"

namespace mv {

/// The whole file at `path`. Throws InputError(path, "", "cannot open <what> (…)") when it is a directory, does
/// not exist, cannot be opened or fails while it is read; `what` names the file's role ("scene file").
inline std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "cannot open " + what + " (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const bool exists = std::filesystem::exists(path, ec);
    throw InputError(path, "", "cannot open " + what + " (" +
                                   (exists ? "permission denied or unreadable" : "no such file") + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "", "cannot open " + what + " (read error)");
  return text.str();
}

}  // namespace mv
