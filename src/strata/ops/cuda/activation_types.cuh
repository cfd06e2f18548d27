// Launches a kernel template for an activation tensor's storage type: `launch` is called with a
// value of __nv_bfloat16 or float (the type to instantiate with); any other dtype is an Error.
#pragma once

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

template <typename Launch>
void for_activation_type(DType dtype, const char* op, Launch&& launch) {
  if (dtype == DType::kBF16) {
    launch(__nv_bfloat16{});
  } else if (dtype == DType::kF32) {
    launch(0.0f);
  } else {
    unsupported_dtype(op, dtype);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
