// Pieces most architectures share: the embedding / final norm / lm_head parts, and the
// dense Llama-style decoder that llama, qwen2 and qwen3 configure differently.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "strata/model/layers/attention.h"
#include "strata/model/layers/mlp.h"
#include "strata/model/layers/moe.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model.h"
#include "strata/model/model_weights.h"

namespace strata {

struct DecoderPartsOptions {
  std::string embed_tokens = "model.embed_tokens.weight";
  std::string final_norm = "model.norm.weight";  // Mamba-2 / Nemotron-H: backbone.norm_f.weight; "": none
  bool norm_unit_offset = false;                 // zero-centred (1 + w) final norm
  double norm_eps = 0.0;                         // 0: config.rms_norm_eps
};

// The embedding, final norm and lm_head (the embedding when tie_word_embeddings).
Model::Parts decoder_parts(const ModelConfig& config, const ModelWeights& weights,
                           const DecoderPartsOptions& options = {});

RmsNorm rms_norm_weight(const WeightScope& w, const std::string& name, const ModelConfig& config,
                        bool unit_offset = false, double eps = 0.0);

struct DenseDecoderOptions {
  bool qk_norm = false;
  bool qkv_bias = false;
};

// Qwen-style sparse layers: MoE unless the layer is in mlp_only_layers or off the
// decoder_sparse_step grid (HF Qwen3MoeDecoderLayer / Qwen3NextDecoderLayer).
bool is_sparse_moe_layer(const ModelConfig& config, int64_t layer);
// The routed experts of Qwen-style MoE configs (num_experts or num_local_experts,
// moe_intermediate_size, num_experts_per_tok, norm_topk_prob), without a shared expert.
MoeOptions qwen_moe_options(const ModelConfig& config);
// DeepSeek-V3-style routed experts (n_routed_experts, moe_intermediate_size): sigmoid routing
// with e_score_correction_bias over n_group groups (topk_group eligible), validated; the
// caller sets the activation, gating and shared expert.
MoeOptions grouped_sigmoid_moe_options(const ModelConfig& config);
// Each layer's "sliding_attention" or "full_attention": config.json's layer_types (transformers 5),
// else the older configs' pattern, is_global(i) for layer i. Throws an Error for a bad list.
std::vector<std::string> attention_layer_types(const ModelConfig& config,
                                               const std::function<bool(int64_t)>& is_global);
// The dense gated MLP of config.intermediate_size.
MlpOptions dense_mlp_options(const ModelConfig& config);

// Attention + gated MLP blocks under model.layers.N, HF Llama naming.
std::unique_ptr<Model> build_dense_decoder(const ModelConfig& config, const ModelWeights& weights,
                                           const DenseDecoderOptions& options);
// One of those blocks under w: input_layernorm, self_attn, post_attention_layernorm, mlp (pre-norm,
// each part added to the stream).
std::unique_ptr<Layer> dense_decoder_layer(const WeightScope& w, const ModelConfig& config,
                                           const AttentionOptions& attention, const MlpOptions& mlp);

}  // namespace strata
