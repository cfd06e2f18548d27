#include "strata/ops/layer_norm.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && x.dtype() == DType::kF32 && out.dtype() == DType::kF32);
  expect_shape(out, x.shape(), "layer_norm out");
  expect_shape(weight, Shape{x.dim(1)}, "layer_norm weight");
  expect_shape(bias, Shape{x.dim(1)}, "layer_norm bias");
  STRATA_CHECK_MSG(x.device().is_cpu(), "layer_norm has no CUDA kernel; the vision tower runs on the CPU backend");
  cpu::layer_norm(x, weight, bias, eps, out);
}

}  // namespace strata::ops
