// DeepSeek-V4 attention: low-rank queries (wq_a -> q_norm -> wq_b, an unweighted norm per head),
// one shared K = V head (wkv -> norm), a sliding window on every layer and, on CSA / HCA layers,
// compressed entries of closed windows (CSA: the lightning indexer's top k), per-head sinks, the
// output rotated back and the grouped low-rank output projection (wo_a per group, wo_b). Every
// token's state is its cache row (decision 0019); heads are permuted at load to
// [rope (half layout) | nope] so ops::rope serves. Its arithmetic is f32 on both backends; the
// projections read activations (bf16 on a GPU, as transformers' bf16 model feeds them). Under
// tensor parallelism a rank holds whole output groups and their query heads (wo_b a row-parallel
// sum); the K = V head, compressors and indexer stay whole, so every rank writes the same rows.
#pragma once

#include <vector>

#include "strata/model/arch/deepseek_v4_config.h"
#include "strata/model/layer.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model_weights.h"
#include "strata/ops/compressed_attention.h"

namespace strata {

struct DeepseekV4AttentionOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  float rms_norm_eps = 1e-6f;
  DeepseekV4LayerPlan layer;
};

class DeepseekV4Attention final : public Mixer {
 public:
  // w: the layer's `attn` scope.
  DeepseekV4Attention(const DeepseekV4Config& config, const DeepseekV4AttentionOptions& options, const WeightScope& w);
  LayerCaps caps() const override { return {.uses_kv_cache = true, .graph_safe = false, .tensor_parallel = true}; }
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  // One compressor's weights: the attention's own (entries of head_dim) or the indexer's.
  struct Compressor {
    Tensor wkv, wgate;  // [series * dim, hidden], rows permuted per series
    Tensor ape;         // [rate, series * dim] f32, columns permuted
    Tensor norm;        // [dim] f32, permuted
    int64_t dim = 0;
  };
  // This rank's output groups and their heads [first, first + num): all of them on one rank.
  struct LocalHeads {
    int64_t first_group = 0, num_groups = 0, first_head = 0, num_heads = 0;
  };
  // Throws an Error unless the ranks divide o_groups.
  static LocalHeads local_heads(const DeepseekV4Config& config, int64_t num_heads, const WeightScope& w);
  void load_output(const WeightScope& w, int64_t num_heads);
  Compressor load_compressor(const WeightScope& w, int64_t dim, int64_t series) const;
  void compress(const StepBatch& step, const Tensor& h, const Compressor& c, int64_t kv_offset, int64_t entry_offset,
                const Tensor& rows, ForwardContext& ctx) const;
  Tensor select_entries(const StepBatch& step, const Tensor& h, const Tensor& q_residual, const Tensor& rows,
                        ForwardContext& ctx) const;
  void project_out(const Tensor& o, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const;

  DeepseekV4Config config_;
  DeepseekV4AttentionOptions options_;  // num_heads: this rank's (H below)
  LocalHeads local_;
  DeepseekV4RowLayout row_;
  Tensor wq_a_, wq_b_, wkv_;  // [q_lora, hidden], [H d, q_lora], [d, hidden] (rows permuted)
  RmsNorm q_norm_;            // [q_lora]
  Tensor kv_norm_;            // [d] f32, permuted
  Tensor ones_;               // [d] f32: the per-head query norm has no weight
  Tensor sinks_;              // [H] f32
  Tensor wo_a_;               // [G, o_lora_rank, H d / G] f32 (G: this rank's groups), columns permuted
  Tensor wo_b_;               // [hidden, G * o_lora_rank]
  Tensor inv_freq_, compress_inv_freq_;  // [rope_dim / 2] f32: this layer's table, the compress table
  Compressor compressor_, indexer_compressor_;
  Tensor indexer_wq_b_;       // [index_heads * index_dim, q_lora], rows permuted per head
  Tensor indexer_weights_;    // [index_heads, hidden]
};

}  // namespace strata
