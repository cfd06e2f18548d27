// The embedding table and LM head split by vocabulary over tensor-parallel ranks (vLLM's
// VocabParallelEmbedding / ParallelLMHead). The vocabulary is padded to a multiple of
// kVocabPadding * N rows and rank r holds rows [r * Vp / N, (r + 1) * Vp / N) of both tables
// (one shard when tied); padding rows are zeros. Lookups sum the ranks' rows (zeros for tokens
// outside a rank's range); logits are gathered, each one a single rank's dot product.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "strata/model/forward_context.h"
#include "strata/model/model_weights.h"

namespace strata {

// Each rank's rows are a multiple of this (vLLM pads the vocabulary to 64 too).
constexpr int64_t kVocabPadding = 64;

struct VocabShard {
  int64_t vocab_size = 0;         // V: config.json's
  int64_t padded_vocab_size = 0;  // Vp: V rounded up to a multiple of kVocabPadding * num_ranks
  int64_t begin = 0;              // this rank's rows [begin, end) of the padded vocabulary
  int64_t end = 0;
  int num_ranks = 1;  // 1: the whole table, unpadded (also a builder's own, replicated table)

  bool split() const { return num_ranks > 1; }
  int64_t num_rows() const { return end - begin; }
  // Rows of the checkpoint's table this rank holds (the rest of its rows are padding).
  int64_t num_vocab_rows() const { return std::max<int64_t>(0, std::min(end, vocab_size) - begin); }
};

// Rank shard.rank's rows of a vocabulary of vocab_size tokens over shard.size ranks.
VocabShard vocab_shard(int64_t vocab_size, const TensorShard& shard);

// This rank's rows [rows, hidden] of the table `name` [vocab_size, hidden]: the whole table
// (get_widened / get) on one rank. widened: as get_widened (an embedding a lookup reads).
Tensor vocab_rows(const ModelWeights& weights, const std::string& name, int64_t hidden, const VocabShard& vocab,
                  bool widened);
// Split: what loads the whole table (get_widened) later, for a draft that runs on rank 0 alone (an
// EAGLE-3 head without an embedding of its own). Unsplit: empty. `weights` must outlive it.
std::function<Tensor()> whole_table_loader(const ModelWeights& weights, const std::string& name, int64_t hidden,
                                           const VocabShard& vocab);
// As vocab_rows, nullopt where ModelWeights::find gives none.
std::optional<Tensor> find_vocab_rows(const ModelWeights& weights, const std::string& name, int64_t hidden,
                                      const VocabShard& vocab, bool dummy_absent);

// out [T, hidden] = table's rows of ids [T] i32; split: this rank's rows summed over
// ctx.tensor_parallel (each token's row comes from one rank, the others add zeros).
void embed_tokens(const Tensor& table, const VocabShard& vocab, const Tensor& ids, const Tensor& out,
                  ForwardContext& ctx);

// logits [T, vocab_size] f32 = x [T, hidden] head^T (+ bias); split: each rank's
// [T, rows] gathered over ctx.tensor_parallel and laid out by token, padding dropped.
void lm_head_logits(const Tensor& x, const Tensor& head, const Tensor& bias, const VocabShard& vocab,
                    const Tensor& logits, ForwardContext& ctx);

}  // namespace strata
