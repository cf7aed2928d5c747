#include "app/session/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/errors.h"

namespace mv {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void throw_exists(const std::string& path) {
  throw InputError(path, "", "already exists; refusing to overwrite it (choose another name or remove it)");
}

/// Moves `tmp` to `path` unless something is already there.
void move_no_replace(const std::string& tmp, const std::string& path) {
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return;
  int err = errno;
  if (err == EINVAL || err == ENOSYS) {  // the file system lacks RENAME_NOREPLACE; link() never replaces
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return;
    }
    err = errno;
  }
  if (err == EEXIST) throw_exists(path);
  throw InputError(path, "", std::string("cannot write: ") + std::strerror(err));
}

}  // namespace

void ensure_absent(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) throw_exists(path);
}

int create_exclusive(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0) return fd;
  if (errno == EEXIST) return -1;
  throw InputError(path, "", std::string("cannot create file: ") + std::strerror(errno));
}

void write_new_file(const std::string& path, const std::function<void(const std::string& tmp)>& write, bool replace) {
  if (!replace) ensure_absent(path);  // fail before the (possibly slow) write
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp;
  for (;;) {
    // The temporary name keeps at most 100 characters of the file's name, so that it fits wherever the
    // name itself does.
    tmp = (dir / ("." + target.filename().string().substr(0, 100) + "." + std::to_string(::getpid()) + "." +
                  std::to_string(counter++) + ".tmp"))
              .string();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      break;
    }
    if (errno != EEXIST)
      throw InputError(path, "", "cannot create a file in " + dir.string() + ": " + std::strerror(errno));
  }
  try {
    write(tmp);
    if (!replace) {
      move_no_replace(tmp, path);
    } else if (::rename(tmp.c_str(), path.c_str()) != 0) {
      throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
    }
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

void write_new_text_file(const std::string& path, const std::string& text, bool replace) {
  write_new_file(
      path,
      [&](const std::string& tmp) {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.close();
        if (!f) throw InputError(path, "", "cannot write");
      },
      replace);
}

}  // namespace mv
