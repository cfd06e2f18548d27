// Multi-head attention over the paged KV cache: q/k/v projections (optional biases),
// optional per-head q/k RMSNorm, rotary embedding, an optional sigmoid output gate
// (Qwen3-Next), sliding window and attention sinks (gpt-oss), output projection. Causal, or
// bidirectional for encoders (BERT), whose prompts then run whole (LayerCaps::causal).
#pragma once

#include "strata/model/layer.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model_weights.h"
#include "strata/ops/rope.h"

namespace strata {

// Leaf names of the projections under the layer's scope (".weight" / ".bias" appended).
struct AttentionWeightNames {
  std::string q = "q_proj", k = "k_proj", v = "v_proj", o = "o_proj";
  std::string qkv;  // set: one stored q | k | v tensor (ModernBERT's Wqkv) in place of q, k and v
};

struct AttentionOptions {
  int64_t hidden_size = 0;
  int64_t input_size = 0;  // of q, k and v's input; 0: hidden_size (an EAGLE-3 head's takes 2 * hidden)
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;
  bool output_gate = false;  // q_proj also yields a per-head gate: out *= sigmoid(gate)
  float rms_norm_eps = 1e-6f;
  bool norm_unit_offset = false;
  ops::RopeTable rope;
  float scale = 0.0f;  // 0: 1 / sqrt(head_dim)
  int64_t sliding_window = 0;
  bool sinks = false;
  bool causal = true;  // false: every token attends to every token of its sequence
  AttentionWeightNames names;
};

// This rank's key/value heads [begin, end): its share, or with more ranks than heads (a multiple
// of them) the one head its query heads read, each rank keeping a copy (as vLLM replicates).
std::pair<int64_t, int64_t> kv_head_range(const TensorShard& shard, int64_t num_kv_heads);
// This rank's heads: the options with num_heads and num_kv_heads split over the shard's ranks.
AttentionOptions local_heads(const AttentionOptions& options, const TensorShard& shard);

// Options every Llama-style architecture shares, from config.json.
AttentionOptions attention_options(const ModelConfig& config);
// The rotary inverse frequencies [rotary_dim / 2] f32 in the backend's memory.
Tensor rope_inv_freq(const ops::RopeTable& rope, Backend& backend);

class Attention final : public Mixer {
 public:
  Attention(const AttentionOptions& options, const WeightScope& w);
  LayerCaps caps() const override {
    return {.uses_kv_cache = true, .causal = options_.causal,
            .tensor_parallel = options_.names.qkv.empty()};
  }
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  // full: the options before the heads were split over tensor-parallel ranks (the stored shapes).
  void load_projections(const AttentionOptions& full, const WeightScope& w);
  // q, k, v as one projection, then prepare_qkv (accelerators); else three and rope/store_kv.
  void forward_fused_qkv(const StepBatch& step, NormedInput& in, const Tensor& q, ForwardContext& ctx) const;

  AttentionOptions options_;
  Tensor qkv_proj_, qkv_bias_;                // [q_out + 2 kv_out, in], [q_out + 2 kv_out] or undefined
  Tensor q_proj_, k_proj_, v_proj_, o_proj_;  // [out, in] (q, k, v undefined when fused)
  Tensor q_bias_, k_bias_, v_bias_, o_bias_;  // [out] or undefined
  RmsNorm q_norm_, k_norm_;                   // [head_dim]
  Tensor inv_freq_;                           // [rotary_dim / 2] f32
  Tensor sinks_;                              // [num_heads] f32
};

}  // namespace strata
