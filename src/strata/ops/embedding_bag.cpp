#include "strata/ops/embedding_bag.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out) {
  STRATA_CHECK(table.rank() == 2 && table.dtype() == DType::kF32 && out.dtype() == DType::kF32);
  STRATA_CHECK(indices.rank() == 2 && indices.dtype() == DType::kI32 && weights.dtype() == DType::kF32);
  expect_shape(weights, indices.shape(), "embedding_bag weights");
  expect_shape(out, Shape{indices.dim(0), table.dim(1)}, "embedding_bag out");
  for (const Tensor* t : {&indices, &weights, &out}) STRATA_CHECK(t->device() == table.device());
  STRATA_DISPATCH(table.device(), cpu::embedding_bag(table, indices, weights, out),
                  cuda::embedding_bag(table, indices, weights, out));
}

}  // namespace strata::ops
