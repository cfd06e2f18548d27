#include "strata/ops/logit_bias.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases) {
  STRATA_CHECK(logits.rank() == 2 && logits.dtype() == DType::kF32);
  STRATA_CHECK(targets.dtype() == DType::kI32 && biases.dtype() == DType::kF32 && biases.rank() == 1);
  expect_shape(targets, {biases.dim(0), 2}, "add_logit_bias targets");
  if (biases.dim(0) == 0) return;
  STRATA_DISPATCH(logits.device(), cpu::add_logit_bias(logits, targets, biases),
                  cuda::add_logit_bias(logits, targets, biases));
}

}  // namespace strata::ops
