// Gemma 3 (text): embeddings scaled by sqrt(hidden), zero-centred (1 + w) RMSNorms, four per
// block (before and after attention and MLP), q/k norms, query_pre_attn_scalar scaling,
// sliding-window layers with their own rotary base beside global ones, and a GeGLU MLP.
#include <cmath>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"

namespace strata {
namespace {

// transformers 5 lists layer_types; older configs give sliding_window_pattern (every n-th
// layer is global).
std::vector<std::string> layer_types(const ModelConfig& config) {
  const int64_t pattern = config.get_int("sliding_window_pattern", config.get_int("_sliding_window_pattern", 6));
  return attention_layer_types(config, [pattern](int64_t i) { return pattern > 0 && (i + 1) % pattern == 0; });
}

AttentionOptions gemma_attention(const ModelConfig& config, const std::string& type) {
  AttentionOptions o = attention_options(config);
  o.qk_norm = true;
  o.norm_unit_offset = true;
  o.rope = ops::rope_frequencies(config.rope_for_layer_type(type), config.head_dim, config.max_position_embeddings,
                                 config.dtype);
  o.scale = static_cast<float>(1.0 / std::sqrt(config.get_double("query_pre_attn_scalar", config.head_dim)));
  if (type == "sliding_attention") o.sliding_window = config.require_int("sliding_window");
  return o;
}

}  // namespace

std::unique_ptr<Model> build_gemma3_text(const ModelConfig& config, const ModelWeights& weights) {
  if (config.has("attn_logit_softcapping") || config.has("final_logit_softcapping"))
    fail("config.json: attn_logit_softcapping / final_logit_softcapping are set; Gemma 3 has neither (a Gemma 2 "
         "checkpoint?), and logit soft-capping is not supported");
  Model::Parts parts = decoder_parts(config, weights, {.norm_unit_offset = true});
  // transformers keeps the scale in the model's dtype (sqrt(2560) is 50.5 in bf16, not 50.596).
  parts.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)));
  if (config.dtype == DType::kBF16) parts.embed_scale = bf16_to_f32(f32_to_bf16(parts.embed_scale));
  auto model = std::make_unique<Model>(config, std::move(parts));
  MlpOptions mlp = dense_mlp_options(config);
  mlp.activation = ops::parse_activation(config.get_string("hidden_activation", config.hidden_act));
  const std::vector<std::string> types = layer_types(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    auto norm = [&](const char* name) { return rms_norm_weight(w, name, config, /*unit_offset=*/true); };
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = norm("input_layernorm.weight"),
                         .mixer = std::make_unique<Attention>(gemma_attention(config, types[i]), w.scope("self_attn")),
                         .post_mixer_norm = norm("post_attention_layernorm.weight"),
                         .pre_ffn_norm = norm("pre_feedforward_layernorm.weight"),
                         .ffn = std::make_unique<Mlp>(mlp, w.scope("mlp")),
                         .post_ffn_norm = norm("post_feedforward_layernorm.weight"),
                     }),
                     types[i] == "sliding_attention" ? "attention (sliding window) + geglu mlp"
                                                     : "attention (global) + geglu mlp");
  }
  return model;
}

}  // namespace strata
