// Constrained decoding: logits of tokens a row's mask leaves out become -inf before sampling.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// logits: [L, V] f32; rows: [M] i32 (logits rows); bits: [M, ceil(V / 32)] i32 (bit v % 32
// of word v / 32 set: token v allowed). Rows may repeat (n > 1 choices) with equal masks.
void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits);

}  // namespace strata::ops

namespace strata::cpu {
void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits);
}
namespace strata::cuda {
void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits);
}
