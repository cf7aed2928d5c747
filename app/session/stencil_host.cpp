// The stencil's host-memory check (app/session/stencil_run.h), apart from the CUDA code of
// app/session/stencil_run.cu: the live run and the bench (app/cli/cli_stencil_bench.cpp) refuse a CPU grid
// that does not fit with the same check as every other size option (app/cli/cli_validate.h).
#include <fmt/format.h>

#include "app/cli/cli_validate.h"
#include "app/session/stencil_run.h"

namespace mv {

void check_stencil_host_memory(int n, const std::string& option) {
  const uint64_t field_copies = 2;
  cli::check_host_memory(uint64_t(n) * uint64_t(n) * field_copies * sizeof(float), option,
                         fmt::format("the {0}x{0} grid on the CPU", n));
}

}  // namespace mv
