// Qwen4-Exp's per-layer embeddings (PLE): each token's n-grams of orders 2..ngram_size hashed into
// rows of per-head tables, and the gate mixing the embedding into every stream. The n-gram carry:
// the last ngram_size - 1 tokens as (id + 1) in two 11-bit halves, exact in any SSM pool (f16
// too); 0 is no token, which hashes as end-of-sequence. Both backends; CUDA takes n-gram orders and
// heads up to the limits below (check_per_layer_embedding_supported refuses more at build).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/tensor.h"

namespace strata::ops {

struct NgramHash {
  int64_t ngram_size = 0;        // orders 2..ngram_size
  int64_t heads_per_ngram = 0;
  int32_t eos_token_id = 0;      // n-grams do not reach across it
  std::vector<int64_t> multipliers;  // [ngram_size], odd
  std::vector<int64_t> vocab_sizes;  // [(ngram_size - 1) * heads_per_ngram], order-major
  std::vector<int64_t> offsets;      // of each head's rows in the joint table
  int64_t num_heads() const { return (ngram_size - 1) * heads_per_ngram; }
  int64_t carry_elems() const { return 2 * (ngram_size - 1); }
};

struct NgramIdsArgs {
  Tensor token_ids;            // [T] i32: one sequence's tokens, or one per slot with state_slots
  Tensor carry;                // [carry_elems] f32 in and out; with state_slots [num_slots, carry_elems]
  Tensor out;                  // [T, num_heads] i32: rows of the joint table
  Tensor intermediate_states;  // [T, carry_elems] f32: the carry after each token, or undefined
  Tensor state_slots;          // [T] i32: batched decode, token t's carry is carry[state_slots[t]]
};

// transformers' Qwen4ExpTextNGramEmbedding ids: token t's order-g n-gram is its own id and the
// g - 1 before it (the end-of-sequence id where the history ends or passes one), mixed as
// xor_k(id_k * multipliers[k]) in wrapping int64 and taken modulo each head's vocab size.
void ngram_ids(const NgramHash& hash, const NgramIdsArgs& args);

// key, query: [T, n, hidden] (normed); value: [T, hidden]; out: [T, n, hidden]; activations of one dtype:
// g = key[t, j] . query[t, j] / sqrt(hidden), g = sign(g) sqrt(max(|g|, 1e-6)), out[t, j] = sigmoid(g) value[t].
void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out);

// The CUDA n-gram kernel's fixed arrays (its parameters travel by value).
inline constexpr int64_t kCudaMaxNgramSize = 8;
inline constexpr int64_t kCudaMaxNgramHeads = 32;
// Throws an Error naming `layer` when `device` cannot run ngram_ids for `hash`.
void check_per_layer_embedding_supported(Device device, const NgramHash& hash, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void ngram_ids(const ops::NgramHash& hash, const ops::NgramIdsArgs& args);
void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out);
}  // namespace strata::cpu

namespace strata::cuda {
void ngram_ids(const ops::NgramHash& hash, const ops::NgramIdsArgs& args);
void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out);
}  // namespace strata::cuda
