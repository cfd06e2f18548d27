// Embedding lookup: out[t] = table[ids[t]], widened to the activation dtype.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// table: [vocab, hidden] any float or quantized dtype; ids: [T] i32;
// out: [T, hidden] f32 (CPU) or bf16 (CUDA).
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
// A vocabulary shard's lookup (tensor parallelism): table holds rows [first_id, first_id + rows)
// of the vocabulary; tokens outside them get rows of zeros, which the sum over ranks fills in.
void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out);
}
namespace strata::cuda {
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);
void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out);
}
