// Error types. Errors become exceptions with context at the boundary where they are detected (file,
// field, CUDA call); the CLI prints `what()` on one line and exits non-zero, the GUI shows it in its error
// panel and keeps running. Nothing deep inside calls exit().
#pragma once

#include <stdexcept>
#include <string>

namespace mv {

/// Bad user input: a scene file, a reference image, a command-line value, a setting out of range.
/// `what()` reads "<file>: <field>: <message>" (the parts that are known).
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& field, const std::string& message)
      : std::runtime_error(compose(file, field, message)), file_(file), field_(field) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }

 private:
  static std::string compose(const std::string& file, const std::string& field, const std::string& message) {
    std::string s;
    if (!file.empty()) s += file + ": ";
    if (!field.empty()) s += field + ": ";
    return s + message;
  }
  std::string file_, field_;
};

/// A failed CUDA runtime call or kernel launch; `what()` names the call, the error and the source line.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mv
