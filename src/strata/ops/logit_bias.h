// OpenAI's logit_bias: fixed amounts added to chosen tokens' logits before sampling.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// logits: [L, V] f32, updated in place; targets: [K, 2] i32 of (logits row, token id);
// biases: [K] f32. Each (row, token) pair at most once; pairs outside logits are skipped.
void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases);

}  // namespace strata::ops

namespace strata::cpu {
void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases);
}
namespace strata::cuda {
void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases);
}
