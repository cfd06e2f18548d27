// Embedding lookup: out[t] = table[ids[t]], widened to the activation dtype.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// table: [vocab, hidden] any float or quantized dtype; ids: [T] i32;
// out: [T, hidden] f32 (CPU) or bf16 (CUDA).
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
}
namespace strata::cuda {
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
}
