#include "strata/ops/embedding.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) {
  STRATA_CHECK(table.rank() == 2 && ids.rank() == 1 && ids.dtype() == DType::kI32);
  expect_shape(out, Shape{ids.dim(0), table.dim(1)}, "embedding out");
  STRATA_DISPATCH(out.device(), cpu::embedding(table, ids, out), cuda::embedding(table, ids, out));
}

void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out) {
  STRATA_CHECK(table.rank() == 2 && ids.rank() == 1 && ids.dtype() == DType::kI32 && first_id >= 0);
  expect_shape(out, Shape{ids.dim(0), table.dim(1)}, "embedding_shard out");
  STRATA_DISPATCH(out.device(), cpu::embedding_shard(table, ids, first_id, out),
                  cuda::embedding_shard(table, ids, first_id, out));
}

}  // namespace strata::ops
