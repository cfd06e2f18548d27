#include "strata/ops/linear.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && weight.rank() == 2);
  STRATA_CHECK_MSG(x.dim(1) == weight.dim(1), "linear: x {} weight {}", x.shape().str(),
                   weight.shape().str());
  expect_shape(out, Shape{x.dim(0), weight.dim(0)}, "linear out");
  if (bias.defined()) STRATA_CHECK(bias.numel() == weight.dim(0));
  STRATA_DISPATCH(x.device(), cpu::linear(x, weight, bias, out), cuda::linear(x, weight, bias, out));
}

}  // namespace strata::ops
