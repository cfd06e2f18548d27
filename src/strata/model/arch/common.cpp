#include "strata/model/arch/common.h"

#include <fmt/format.h>

#include "strata/core/error.h"

#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/mlp.h"

namespace strata {

RmsNorm rms_norm_weight(const WeightScope& w, const std::string& name, const ModelConfig& config,
                        bool unit_offset) {
  return {w.get(name, {config.hidden_size}),
          {.eps = static_cast<float>(config.rms_norm_eps), .unit_offset = unit_offset}};
}

Model::Parts decoder_parts(const ModelConfig& config, const ModelWeights& weights,
                           bool norm_unit_offset) {
  const WeightScope root(weights, "");
  Model::Parts parts;
  parts.embed_tokens = root.get("model.embed_tokens.weight", {config.vocab_size, config.hidden_size});
  parts.final_norm = rms_norm_weight(root, "model.norm.weight", config, norm_unit_offset);
  std::optional<Tensor> lm_head;
  if (!config.tie_word_embeddings || !weights.is_dummy())
    lm_head = weights.find("lm_head.weight", {config.vocab_size, config.hidden_size},
                           /*dummy_absent=*/config.tie_word_embeddings);
  if (!lm_head && !config.tie_word_embeddings)
    fail("missing tensor 'lm_head.weight' in {} (tie_word_embeddings is false)", weights.description());
  parts.lm_head = lm_head ? *lm_head : parts.embed_tokens;
  return parts;
}

std::unique_ptr<Model> build_dense_decoder(const ModelConfig& config, const ModelWeights& weights,
                                           const DenseDecoderOptions& options) {
  auto model = std::make_unique<Model>(config, decoder_parts(config, weights));
  AttentionOptions attention = attention_options(config);
  attention.qk_norm = options.qk_norm;
  attention.qkv_bias = options.qkv_bias || config.attention_bias;
  attention.o_bias = config.attention_bias;
  const MlpOptions mlp{.hidden_size = config.hidden_size,
                       .intermediate_size = config.intermediate_size,
                       .activation = ops::parse_activation(config.hidden_act),
                       .bias = config.get_bool("mlp_bias", false)};
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
                         .mixer = std::make_unique<Attention>(attention, w.scope("self_attn")),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
                         .ffn = std::make_unique<Mlp>(mlp, w.scope("mlp")),
                     }),
                     "attention + mlp");
  }
  return model;
}

}  // namespace strata
