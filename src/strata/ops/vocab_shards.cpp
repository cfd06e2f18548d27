#include "strata/ops/vocab_shards.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void join_vocab_shards(const Tensor& shards, const Tensor& out) {
  STRATA_CHECK(shards.rank() == 3 && out.rank() == 2);
  STRATA_CHECK(shards.dtype() == DType::kF32 && out.dtype() == DType::kF32 && shards.device() == out.device());
  const int64_t num_ranks = shards.dim(0), shard_cols = shards.dim(2);
  STRATA_CHECK_MSG(shards.dim(1) == out.dim(0) && out.dim(1) <= num_ranks * shard_cols,
                   "join_vocab_shards: {} shards of {} into {}", shards.shape().str(), shard_cols, out.shape().str());
  if (out.numel() == 0) return;
  STRATA_DISPATCH(out.device(), cpu::join_vocab_shards(shards, out), cuda::join_vocab_shards(shards, out));
}

}  // namespace strata::ops
