// Weighted sums of table rows (torch's embedding_bag with per-sample weights): vision towers
// resample a learned square grid of position embeddings to each image's grid this way.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// table: [V, D] f32; indices: [N, K] i32 in [0, V); weights: [N, K] f32; all on one device;
// out: [N, D] f32, out[n] = sum_k weights[n, k] * table[indices[n, k]].
void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out);
}
namespace strata::cuda {
void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out);
}
