#include "strata/ops/logits_mask.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits) {
  STRATA_CHECK(logits.rank() == 2 && logits.dtype() == DType::kF32);
  STRATA_CHECK(rows.rank() == 1 && rows.dtype() == DType::kI32 && bits.dtype() == DType::kI32);
  expect_shape(bits, {rows.dim(0), (logits.dim(1) + 31) / 32}, "mask_logits bits");
  if (rows.dim(0) == 0) return;
  STRATA_DISPATCH(logits.device(), cpu::mask_logits(logits, rows, bits), cuda::mask_logits(logits, rows, bits));
}

}  // namespace strata::ops
