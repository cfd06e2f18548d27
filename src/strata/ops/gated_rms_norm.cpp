#include "strata/ops/gated_rms_norm.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const GatedRmsNormOptions& options) {
  STRATA_CHECK(x.rank() == 2 && weight.dtype() == DType::kF32);
  const int64_t d = x.dim(1), group = options.group_size > 0 ? options.group_size : d;
  STRATA_CHECK_MSG(d % group == 0, "gated_rms_norm: group {} does not divide {}", group, d);
  expect_shape(z, x.shape(), "gated_rms_norm z");
  expect_shape(weight, {d}, "gated_rms_norm weight");
  expect_shape(out, x.shape(), "gated_rms_norm out");
  STRATA_DISPATCH(x.device(), cpu::gated_rms_norm(x, z, weight, out, options),
                  cuda::gated_rms_norm(x, z, weight, out, options));
}

}  // namespace strata::ops
