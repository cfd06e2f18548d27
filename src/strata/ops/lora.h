// LoRA deltas for a batch whose tokens use different adapters (or none): for each token t with
// slot s = token_slots[t] >= 0, y[t, col_offset : col_offset + out] += scales[s] * B[s] (A[s] x[t]).
// Adapters of smaller rank are zero-padded to the stack's rank, so every slot has one shape.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

struct LoraArgs {
  Tensor x;            // [T, in] activations
  Tensor a;            // [S, r, in] stacked A (f32 on the CPU, bf16 on a GPU)
  Tensor b;            // [S, out, r] stacked B
  Tensor scales;       // [S] f32: lora_alpha / r (or / sqrt(r) for rsLoRA)
  Tensor token_slots;  // [T] i32: adapter slot per token, -1 for none
  Tensor y;            // [T, cols] activations, updated in columns [col_offset, col_offset + out)
  int64_t col_offset = 0;
};

void lora_add(const LoraArgs& args);

}  // namespace strata::ops

namespace strata::cpu {
void lora_add(const ops::LoraArgs& args);
}
namespace strata::cuda {
void lora_add(const ops::LoraArgs& args);
}
