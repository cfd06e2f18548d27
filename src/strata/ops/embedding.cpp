#include "strata/ops/embedding.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) {
  STRATA_CHECK(table.rank() == 2 && ids.rank() == 1 && ids.dtype() == DType::kI32);
  expect_shape(out, Shape{ids.dim(0), table.dim(1)}, "embedding out");
  STRATA_DISPATCH(out.device(), cpu::embedding(table, ids, out), cuda::embedding(table, ids, out));
}

}  // namespace strata::ops
