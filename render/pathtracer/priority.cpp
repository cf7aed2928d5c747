#include "render/pathtracer/priority.h"

#include <cstring>
#include <string>

#include "base/errors.h"

namespace mv {

const char* priority_name(PriorityFunction f) {
  switch (f) {
    case PriorityFunction::None: return "none";
    case PriorityFunction::Intensity: return "intensity";
    case PriorityFunction::Convergence: return "convergence";
    case PriorityFunction::Variance: return "variance";
    case PriorityFunction::RelativeError: return "relative-error";
    case PriorityFunction::Adaptive: return "adaptive";
    case PriorityFunction::Neyman: return "neyman";
  }
  return "?";
}

PriorityFunction parse_priority(const char* name) {
  for (int i = 0; i < kNumPriorityFunctions; ++i) {
    const auto f = static_cast<PriorityFunction>(i);
    if (std::strcmp(name, priority_name(f)) == 0) return f;
  }
  std::string allowed;
  for (int i = 0; i < kNumPriorityFunctions; ++i)
    allowed += std::string(i ? ", " : "") + priority_name(static_cast<PriorityFunction>(i));
  throw InputError("", "priority", std::string("unknown priority function \"") + name + "\" (allowed: " + allowed + ")");
}

}  // namespace mv
