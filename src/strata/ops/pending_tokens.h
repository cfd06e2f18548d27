// Pending tokens: a step may take as input tokens the previous step sampled and left on the
// device (the host had not read them back yet). This op writes them into the step's token
// ids: token_ids[pending[j, 0]] = sampled_ids[pending[j, 1]].
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// sampled_ids: [S] i32; pending: [P, 2] i32 (token index, sample index); token_ids: [T] i32.
void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids);

}  // namespace strata::ops

namespace strata::cpu {
void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids);
}
namespace strata::cuda {
void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids);
}
