// How an op front reaches its backend implementation: CPU tensors run the cpu:: kernel,
// CUDA tensors the cuda:: kernel. Without a CUDA build no CUDA tensor can exist.
#pragma once

#include "strata/core/error.h"
#include "strata/core/tensor.h"

#if defined(STRATA_WITH_CUDA)
#define STRATA_DISPATCH(device, cpu_call, cuda_call) \
  do {                                               \
    if ((device).is_cpu()) {                         \
      cpu_call;                                      \
    } else {                                         \
      cuda_call;                                     \
    }                                                \
  } while (0)
#else
#define STRATA_DISPATCH(device, cpu_call, cuda_call)                       \
  do {                                                                     \
    STRATA_CHECK_MSG((device).is_cpu(), "CUDA tensor in a CPU-only build"); \
    cpu_call;                                                              \
  } while (0)
#endif

namespace strata::ops {

// Shape checks shared by op fronts; failures are programming errors, not user input.
inline void expect_shape(const Tensor& t, const Shape& shape, const char* what) {
  STRATA_CHECK_MSG(t.shape() == shape, "{}: shape {} expected {}", what, t.shape().str(), shape.str());
}

}  // namespace strata::ops
