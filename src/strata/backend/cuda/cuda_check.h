// CUDA error checks and the stream kernels launch on. A failed CUDA call throws DeviceError
// (sticky when the context is lost), so a step that hits one fails its requests instead of
// ending the process; the engine decides whether serving can go on.
#pragma once

#include <cuda_runtime.h>

#include "strata/backend/device_error.h"

#define STRATA_CUDA_CHECK(expr)                                                       \
  do {                                                                                \
    const cudaError_t strata_err_ = (expr);                                           \
    if (strata_err_ != cudaSuccess)                                                   \
      ::strata::cuda::throw_cuda_error(strata_err_, #expr, __FILE__, __LINE__);       \
  } while (0)

namespace strata::cuda {

// Errors after which the context is unusable: every later call fails the same way.
bool is_sticky_error(cudaError_t error);
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line);

void set_current_stream(cudaStream_t stream);
cudaStream_t current_stream();

}  // namespace strata::cuda
