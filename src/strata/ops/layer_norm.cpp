#include "strata/ops/layer_norm.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && out.dtype() == x.dtype());
  STRATA_CHECK(x.dtype() == DType::kF32 || (!x.device().is_cpu() && x.dtype() == DType::kBF16));
  STRATA_CHECK(weight.dtype() == DType::kF32 && bias.dtype() == DType::kF32);
  expect_shape(out, x.shape(), "layer_norm out");
  expect_shape(weight, Shape{x.dim(1)}, "layer_norm weight");
  expect_shape(bias, Shape{x.dim(1)}, "layer_norm bias");
  STRATA_DISPATCH(x.device(), cpu::layer_norm(x, weight, bias, eps, out), cuda::layer_norm(x, weight, bias, eps, out));
}

}  // namespace strata::ops
