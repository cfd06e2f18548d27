// Mixtral: Llama-style attention with a softmax top-k MoE (renormalised weights) in every
// layer, experts named w1 (gate) / w3 (up) / w2 (down) under block_sparse_moe.
#include <fmt/format.h>

#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"

namespace strata {

std::unique_ptr<Model> build_mixtral(const ModelConfig& config, const ModelWeights& weights) {
  auto model = std::make_unique<Model>(config, decoder_parts(config, weights));
  AttentionOptions attention = attention_options(config);
  attention.sliding_window = config.get_int("sliding_window", 0);
  MoeOptions moe = qwen_moe_options(config);
  moe.intermediate_size = config.intermediate_size;
  moe.route.norm_topk_prob = true;
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
                         .mixer = std::make_unique<Attention>(attention, w.scope("self_attn")),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
                         .ffn = std::make_unique<MoeFfn>(moe, w.scope("block_sparse_moe"),
                                                         mixtral_moe_names()),
                     }),
                     "attention + moe");
  }
  return model;
}

}  // namespace strata
