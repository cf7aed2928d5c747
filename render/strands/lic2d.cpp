// Host side of render/strands/lic2d.h: parameter validation and the factory.
#include "render/strands/lic2d.h"

#include "render/strands/param_check.h"

namespace mv {

void Lic2dStrands::validate() const {
  using namespace param_check;
  const char* const c = "lic2d";
  range(c, "width", width, 2, 16384);
  range(c, "height", height, 2, 16384);
  range(c, "cells_x", cells_x, 1, 64);
  range(c, "cells_y", cells_y, 1, 64);
  range(c, "h", h, 0.0, 64.0, true);
  range(c, "steps", steps, 1, 100000);
  range(c, "contrast", contrast, 0.0, 100.0, true);
}

Lic2dStrands lic2d_workload(uint32_t width, uint32_t height, Side, const StrandViewParams&) {
  Lic2dStrands w;
  w.width = width;
  w.height = height;
  w.validate();
  return w;
}

}  // namespace mv
