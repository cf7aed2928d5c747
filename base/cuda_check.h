// Checked CUDA calls. Every runtime call goes through MV_CUDA_CHECK and every launch is followed by
// MV_CUDA_CHECK_LAUNCH(); failures throw mv::CudaError naming the call and the source location.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/errors.h"

namespace mv::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  throw CudaError(std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                  ") at " + file + ":" + std::to_string(line));
}
}  // namespace mv::detail

#define MV_CUDA_CHECK(call)                                                              \
  do {                                                                                    \
    const cudaError_t mv_err_ = (call);                                                   \
    if (mv_err_ != cudaSuccess) ::mv::detail::throw_cuda_error(mv_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define MV_CUDA_CHECK_LAUNCH()                                                            \
  do {                                                                                    \
    const cudaError_t mv_err_ = cudaGetLastError();                                       \
    if (mv_err_ != cudaSuccess) ::mv::detail::throw_cuda_error(mv_err_, "kernel launch", __FILE__, __LINE__); \
  } while (0)
