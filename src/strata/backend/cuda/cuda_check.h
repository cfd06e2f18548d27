// CUDA error checks (a CUDA API error is fatal) and the stream kernels launch on.
#pragma once

#include <cuda_runtime.h>

#include "strata/core/error.h"

#define STRATA_CUDA_CHECK(expr)                                                      \
  do {                                                                               \
    const cudaError_t strata_err_ = (expr);                                          \
    if (strata_err_ != cudaSuccess)                                                  \
      ::strata::check_failed(#expr, __FILE__, __LINE__, cudaGetErrorString(strata_err_)); \
  } while (0)

namespace strata::cuda {

void set_current_stream(cudaStream_t stream);
cudaStream_t current_stream();

}  // namespace strata::cuda
