// The stencil's host-memory check (app/session/stencil_run.h), apart from the CUDA code of
// app/session/stencil_run.cu: the live run and the bench (app/cli/cli_stencil_bench.cpp) refuse a CPU grid
// that does not fit with the same check as every other size option (app/cli/cli_validate.h).
#include <fmt/format.h>

#include "app/cli/cli_validate.h"
#include "app/session/stencil_run.h"

namespace mv {

uint64_t stencil_cpu_host_bytes(int n) { return uint64_t(n) * uint64_t(n) * 2 * sizeof(float); }

void check_stencil_host_memory(int n, const std::string& option) {
  cli::check_host_memory(stencil_cpu_host_bytes(n), option, fmt::format("the {0}x{0} grid on the CPU", n));
}

}  // namespace mv
