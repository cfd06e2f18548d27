// The logits of a vocabulary split over tensor-parallel ranks, back in token order: the ranks'
// [T, S] logits gathered rank after rank ([N, T, S]) become [T, V], rank r's column j being
// vocabulary entry r * S + j; the padding columns past V are dropped.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// shards: [N, T, S] f32; out: [T, V] f32 with V <= N * S, not aliased (a small vocabulary
// over many ranks may leave the last ranks padding only). out[t, r * S + j] = shards[r, t, j].
void join_vocab_shards(const Tensor& shards, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void join_vocab_shards(const Tensor& shards, const Tensor& out);
}
namespace strata::cuda {
void join_vocab_shards(const Tensor& shards, const Tensor& out);
}
