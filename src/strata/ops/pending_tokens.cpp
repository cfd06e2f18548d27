#include "strata/ops/pending_tokens.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids) {
  STRATA_CHECK(sampled_ids.rank() == 1 && sampled_ids.dtype() == DType::kI32);
  STRATA_CHECK(pending.rank() == 2 && pending.dim(1) == 2 && pending.dtype() == DType::kI32);
  STRATA_CHECK(token_ids.rank() == 1 && token_ids.dtype() == DType::kI32);
  STRATA_CHECK(sampled_ids.device() == token_ids.device() && pending.device() == token_ids.device());
  if (pending.dim(0) == 0) return;
  STRATA_DISPATCH(token_ids.device(), cpu::fill_pending_tokens(sampled_ids, pending, token_ids),
                  cuda::fill_pending_tokens(sampled_ids, pending, token_ids));
}

}  // namespace strata::ops
