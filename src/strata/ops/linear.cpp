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

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const LinearOptions& options) {
  STRATA_CHECK(x.rank() == 2 && weight.rank() == 2);
  const int64_t in = options.gated_input ? 2 * weight.dim(1) : weight.dim(1);
  STRATA_CHECK_MSG(x.dim(1) == in, "linear: x {} weight {} gated {}", x.shape().str(), weight.shape().str(),
                   options.gated_input.has_value());
  if (options.gated_input) expect_shape(options.gated_scratch, Shape{x.dim(0), weight.dim(1)}, "linear gated scratch");
  expect_shape(out, Shape{x.dim(0), weight.dim(0)}, "linear out");
  if (bias.defined()) STRATA_CHECK(bias.numel() == weight.dim(0));
  STRATA_DISPATCH(x.device(), cpu::linear(x, weight, bias, out, options),
                  cuda::linear(x, weight, bias, out, options));
}

}  // namespace strata::ops
