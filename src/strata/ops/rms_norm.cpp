#include "strata/ops/rms_norm.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void rms_norm(const Tensor& x, const Tensor& weight, const Tensor& out, const RmsNormParams& params) {
  STRATA_CHECK(x.rank() == 2 && weight.numel() == x.dim(1));
  expect_shape(out, x.shape(), "rms_norm out");
  STRATA_DISPATCH(x.device(), cpu::rms_norm(x, nullptr, weight, out, params),
                  cuda::rms_norm(x, nullptr, weight, out, params));
}

void add_rms_norm(const Tensor& residual, const Tensor& x, const Tensor& weight, const Tensor& out,
                  const RmsNormParams& params) {
  STRATA_CHECK(x.rank() == 2 && weight.numel() == x.dim(1));
  expect_shape(residual, x.shape(), "add_rms_norm residual");
  expect_shape(out, x.shape(), "add_rms_norm out");
  STRATA_DISPATCH(x.device(), cpu::rms_norm(x, &residual, weight, out, params),
                  cuda::rms_norm(x, &residual, weight, out, params));
}

}  // namespace strata::ops
