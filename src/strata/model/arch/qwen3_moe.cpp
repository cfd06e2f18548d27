// Qwen3-MoE: Qwen3 attention (per-head q/k RMSNorm) with a softmax top-k MoE feed-forward on
// the sparse layers (decoder_sparse_step, mlp_only_layers) and a dense MLP on the others.
#include <fmt/format.h>

#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"

namespace strata {

std::unique_ptr<Model> build_qwen3_moe(const ModelConfig& config, const ModelWeights& weights) {
  auto model = std::make_unique<Model>(config, decoder_parts(config, weights));
  AttentionOptions attention = attention_options(config);
  attention.qk_norm = true;
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    const bool sparse = is_sparse_moe_layer(config, i);
    std::unique_ptr<Ffn> ffn;
    if (sparse) {
      ffn = std::make_unique<MoeFfn>(qwen_moe_options(config), w.scope("mlp"));
    } else {
      ffn = std::make_unique<Mlp>(dense_mlp_options(config), w.scope("mlp"));
    }
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
                         .mixer = std::make_unique<Attention>(attention, w.scope("self_attn")),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
                         .ffn = std::move(ffn),
                     }),
                     sparse ? "attention + moe" : "attention + mlp");
  }
  return model;
}

}  // namespace strata
