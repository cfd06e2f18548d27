// DeepSeek-V3: multi-head latent attention (layers/mla_attention.h), the first
// first_k_dense_replace blocks with a dense SwiGLU MLP, the rest MoE: sigmoid routing with
// e_score_correction_bias over n_group groups (noaux_tc), SwiGLU experts and
// n_shared_experts shared ones. Multi-token-prediction layers of the checkpoint are not read.
#include <cmath>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/mla_attention.h"

namespace strata {
namespace {

MlaOptions mla_options(const ModelConfig& config) {
  MlaOptions o;
  o.hidden_size = config.hidden_size;
  o.num_heads = config.num_attention_heads;
  o.q_lora_rank = config.get_int("q_lora_rank", 0);
  o.kv_lora_rank = config.require_int("kv_lora_rank");
  o.qk_nope_head_dim = config.require_int("qk_nope_head_dim");
  o.qk_rope_head_dim = config.require_int("qk_rope_head_dim");
  o.v_head_dim = config.require_int("v_head_dim");
  o.rope_interleave = config.get_bool("rope_interleave", true);
  o.rms_norm_eps = static_cast<float>(config.rms_norm_eps);
  if (o.qk_rope_head_dim % 2 != 0 || o.v_head_dim > o.qk_head_dim())
    fail("config.json: qk_rope_head_dim {} must be even and v_head_dim {} at most qk_nope + qk_rope = {}",
         o.qk_rope_head_dim, o.v_head_dim, o.qk_head_dim());
  if (config.attention_bias) fail("config.json: attention_bias is set; DeepSeek-V3 attention has no biases");
  o.rope = ops::rope_frequencies(config.rope, o.qk_rope_head_dim, config.max_position_embeddings, config.dtype);
  // yarn: the softmax scale grows by mscale(factor, mscale_all_dim)^2, as transformers does.
  double scale = 1.0 / std::sqrt(static_cast<double>(o.qk_head_dim()));
  const RopeConfig& rope = config.rope;
  if (rope.rope_type != "default" && rope.mscale_all_dim && *rope.mscale_all_dim != 0 && rope.factor > 1) {
    const double m = 0.1 * *rope.mscale_all_dim * std::log(rope.factor) + 1.0;
    scale *= m * m;
  }
  o.scale = static_cast<float>(scale);
  return o;
}

MoeOptions moe_options(const ModelConfig& config) {
  if (config.get_string("scoring_func", "sigmoid") != "sigmoid" || config.get_string("topk_method", "noaux_tc") != "noaux_tc")
    fail("config.json: scoring_func '{}' / topk_method '{}': only DeepSeek-V3's sigmoid / noaux_tc routing is supported",
         config.get_string("scoring_func", "sigmoid"), config.get_string("topk_method", "noaux_tc"));
  MoeOptions o = grouped_sigmoid_moe_options(config);
  o.activation = ops::parse_activation(config.hidden_act);
  o.shared_intermediate_size = o.intermediate_size * config.get_int("n_shared_experts", 0);
  return o;
}

}  // namespace

std::unique_ptr<Model> build_deepseek_v3(const ModelConfig& config, const ModelWeights& weights) {
  const MlaOptions mla = mla_options(config);
  Model::Parts parts = decoder_parts(config, weights);
  const auto [head_begin, head_end] = weights.shard().range(mla.num_heads, "num_attention_heads");
  parts.kv_cache_heads = head_end - head_begin;  // this rank's heads, each expanded from the latent
  parts.kv_cache_head_dim = mla.qk_head_dim();
  auto model = std::make_unique<Model>(config, std::move(parts));
  const int64_t first_moe = config.get_int("first_k_dense_replace", 0);
  const int64_t moe_every = config.get_int("moe_layer_freq", 1);
  if (moe_every < 1) fail("config.json: moe_layer_freq is {}; it must be >= 1", moe_every);
  const MoeOptions moe = moe_options(config);
  const MlpOptions dense = dense_mlp_options(config);
  const MoeWeightNames names{.shared_expert = "shared_experts"};
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    const bool is_moe = i >= first_moe && i % moe_every == 0;
    std::unique_ptr<Ffn> ffn;
    if (is_moe) ffn = std::make_unique<MoeFfn>(moe, w.scope("mlp"), names);
    else ffn = std::make_unique<Mlp>(dense, w.scope("mlp"));
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
                         .mixer = std::make_unique<MlaAttention>(mla, w.scope("self_attn")),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
                         .ffn = std::move(ffn),
                     }),
                     is_moe ? "latent attention + moe" : "latent attention + mlp");
  }
  return model;
}

}  // namespace strata
