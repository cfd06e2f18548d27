// Qwen4-Exp's QSA attention (Qwen4ExpTextAttention): Qwen3.5's gated attention over the tokens its
// indexer selects: the top budget / ratio blocks of compress_ratio tokens by sum_h relu(q_h . key),
// a block's key the mean of its tokens' index keys, normed and rotated at its first position, plus
// the tokens after the last complete block. State in cache rows (decision 0020): K [k heads | index
// key], V [v heads | block key, in the block's last token]. The cache rows and the layer's own
// math are f32 on every backend; its input and output rows take the activation dtype. Under
// tensor parallelism a rank holds its query and key/value heads (o_proj a row-parallel sum) and
// the whole indexer, so every rank selects the same blocks; its cache rows end with the index head.
#pragma once

#include "strata/model/layer.h"
#include "strata/model/layers/attention.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model_weights.h"

namespace strata {

struct QsaOptions {
  int64_t index_heads = 0;     // indexer_n_heads
  int64_t index_head_dim = 0;  // indexer_head_dim (<= head_dim: it fits the cache's extra head)
  int64_t budget = 0;          // indexer_budget tokens
  int64_t compress_ratio = 0;  // indexer_compress_ratio tokens per block
};

class QsaAttention final : public Mixer {
 public:
  // attention: gated, q/k-normed (unit offset), rotary; w: the layer's self_attn scope.
  QsaAttention(const AttentionOptions& attention, const QsaOptions& qsa, const WeightScope& w);
  LayerCaps caps() const override { return {.uses_kv_cache = true, .graph_safe = false, .tensor_parallel = true}; }
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  // Stores this step's index keys and closing blocks' keys; returns each query's blocks [T, K] i32.
  Tensor select_blocks(const StepBatch& step, const Tensor& h, const Tensor& k_rows, const Tensor& v_rows,
                       ForwardContext& ctx) const;
  void rotate(const Tensor& x, const Tensor& positions, ForwardContext& ctx) const;
  int64_t index_column() const { return options_.num_kv_heads * options_.head_dim; }

  QsaOptions qsa_;
  AttentionOptions options_;  // this rank's heads
  Tensor q_proj_;                             // [2 heads hd, hidden]: query | gate per head
  Tensor k_proj_, v_proj_, o_proj_;           // [kv hd, hidden], [kv hd, hidden], [hidden, heads hd]
  RmsNorm q_norm_, k_norm_;                   // [head_dim]
  Tensor index_q_proj_, index_k_proj_;        // [index_heads index_dim, hidden], [index_dim, hidden]
  RmsNorm index_q_norm_, index_k_norm_;       // [index_dim]
  Tensor inv_freq_;                           // [rotary_dim / 2] f32
};

}  // namespace strata
