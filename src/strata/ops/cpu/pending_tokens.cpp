#include "strata/ops/pending_tokens.h"

#include "strata/core/error.h"

namespace strata::cpu {

void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids) {
  const int32_t* sampled = sampled_ids.data_as<const int32_t>();
  const int32_t* pairs = pending.data_as<const int32_t>();
  int32_t* tokens = token_ids.data_as<int32_t>();
  for (int64_t j = 0; j < pending.dim(0); ++j) {
    const int32_t dst = pairs[2 * j], src = pairs[2 * j + 1];
    STRATA_CHECK(dst >= 0 && dst < token_ids.dim(0) && src >= 0 && src < sampled_ids.dim(0));
    tokens[dst] = sampled[src];
  }
}

}  // namespace strata::cpu
