// Writing files for a user without ever replacing one: renders, captures, references, curves and CSV
// all go through here. A file is written under a temporary name in its directory and then moved to its
// name atomically with renameat2(RENAME_NOREPLACE) (or link(), which never replaces either, on file
// systems without it), so a reader never sees a half-written file and an existing file is never lost,
// even when another process creates it while megaview is writing.
#pragma once

#include <functional>
#include <string>

namespace mv {

/// Throws InputError naming `path` if something exists there (checked before spending time on a render;
/// write_new_file checks again atomically).
void ensure_absent(const std::string& path);

/// Creates `path` exclusively (O_CREAT|O_EXCL, mode 0666 & ~umask) and returns its open descriptor, or
/// -1 if it already exists. Throws InputError naming the file on any other failure.
int create_exclusive(const std::string& path);

/// Writes the file `path`: `write` receives a temporary path in the same directory and must write the
/// complete file there; it is then moved to `path`. Unless `replace`, an existing `path` is left alone and
/// InputError("<path>: already exists; ...") is thrown. The temporary file never outlives the call.
void write_new_file(const std::string& path, const std::function<void(const std::string& tmp)>& write,
                    bool replace = false);

/// write_new_file for text.
void write_new_text_file(const std::string& path, const std::string& text, bool replace = false);

}  // namespace mv
