// DeepSeek-V4: hyper-connection streams (hc_mult) around every block; attention with a sliding
// window on every layer, compressed sparse (CSA, lightning indexer) or heavily compressed (HCA)
// entries on the others (layers/deepseek_v4_attention.h, decision 0019); MoE feed-forwards routed
// by tid2eid (hash_moe) or by sqrt-softplus scores with a correction bias (moe), a shared expert,
// swiglu_limit. Checkpoint names as released: attn.*, ffn.*, hc_attn_* / hc_ffn_*, head.weight.
// Runs on both backends (f32 cache rows; no CUDA graphs: the compressors plan on the host). MTP
// layers are not read. Tensor parallelism splits query heads by output group, experts and the
// vocabulary; streams, routing, the K = V head, compressors and indexer are whole on every rank.
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/arch/deepseek_v4_config.h"
#include "strata/model/layers/deepseek_v4_attention.h"
#include "strata/model/layers/hyper_connection_block.h"
#include "strata/model/layers/moe.h"
#include "strata/model/layers/vocab_parallel.h"

namespace strata {
namespace {

MoeOptions moe_options(const ModelConfig& config, const DeepseekV4Config& v4, const DeepseekV4LayerPlan& layer) {
  if (config.get_string("scoring_func", "sqrtsoftplus") != "sqrtsoftplus")
    fail("config.json: scoring_func '{}': DeepSeek-V4 is supported with sqrtsoftplus routing",
         config.get_string("scoring_func", ""));
  const int64_t inter = config.require_int("moe_intermediate_size");
  return {.hidden_size = config.hidden_size, .intermediate_size = inter,
          .num_experts = config.require_int("n_routed_experts"),
          .route = {.top_k = config.require_int("num_experts_per_tok"), .scoring = ops::MoeScoring::kSqrtSoftplus,
                    // transformers' V4 routers always renormalise the chosen weights.
                    .norm_topk_prob = true,
                    .routed_scaling_factor = static_cast<float>(config.get_double("routed_scaling_factor", 1.0))},
          .activation = ops::parse_activation(config.hidden_act),
          .shared_intermediate_size = inter * config.get_int("n_shared_experts", 0),
          .correction_bias = !layer.hash_moe, .swiglu_limit = v4.swiglu_limit,
          .hash_vocab_size = layer.hash_moe ? config.vocab_size : 0};
}

MoeWeightNames moe_names() {
  MoeWeightNames names = mixtral_moe_names();
  names.shared_expert = "shared_experts";
  names.shared_expert_mlp = {.gate = "w1", .up = "w3", .down = "w2"};
  names.correction_bias = "gate.bias";
  return names;
}

std::string describe(const DeepseekV4LayerPlan& layer) {
  const char* attention = layer.attention == DeepseekV4AttentionKind::kSliding ? "sliding attention"
                          : layer.attention == DeepseekV4AttentionKind::kCompressedSparse
                              ? "compressed sparse attention (rate {}, indexer)"
                              : "heavily compressed attention (rate {})";
  return fmt::format(fmt::runtime(attention), layer.compress_rate) + (layer.hash_moe ? " + hash moe" : " + moe");
}

Model::Parts v4_parts(const ModelConfig& config, const ModelWeights& weights, const DeepseekV4Config& v4,
                      const HyperConnectionOptions& hc) {
  if (config.head() != ModelHead::kLanguageModel) fail("DeepSeek-V4 is served as a language model only");
  const WeightScope root(weights, "");
  Model::Parts parts;
  // Under tensor parallelism each rank holds its rows of the vocabulary (layers/vocab_parallel.h).
  parts.vocab = vocab_shard(config.vocab_size, weights.shard());
  const std::string embed = "model.embed_tokens.weight";
  parts.embed_tokens = vocab_rows(weights, embed, config.hidden_size, parts.vocab, /*widened=*/true);
  parts.whole_embed_tokens = whole_table_loader(weights, embed, config.hidden_size, parts.vocab);
  parts.final_norm = rms_norm_weight(root, "model.norm.weight", config);
  parts.lm_head = vocab_rows(weights, "head.weight", config.hidden_size, parts.vocab, /*widened=*/false);
  parts.residual_streams = v4.hc_mult;
  parts.hyper_head = std::make_shared<HyperHead>(hc, root.scope("model.hc_head"));
  parts.kv_cache_heads = 1;
  parts.kv_cache_rows_f32 = true;
  parts.kv_cache_head_dim = v4.max_row_width();
  return parts;
}

}  // namespace

std::unique_ptr<Model> build_deepseek_v4(const ModelConfig& config, const ModelWeights& weights) {
  const DeepseekV4Config v4 = DeepseekV4Config::read(config);
  const HyperConnectionOptions hc{
      .weights = {.num_streams = v4.hc_mult, .sinkhorn_iters = v4.hc_sinkhorn_iters, .eps = v4.hc_eps},
      .hidden_size = config.hidden_size, .rms_norm_eps = static_cast<float>(config.rms_norm_eps)};
  auto model = std::make_unique<Model>(config, v4_parts(config, weights, v4, hc));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    const DeepseekV4LayerPlan& layer = v4.layers[i];
    model->add_layer(
        std::make_unique<HyperConnectionBlock>(HyperConnectionBlock::Parts{
            .hidden_size = config.hidden_size,
            .mixer_hc = std::make_unique<HyperConnection>(hc, w, "hc_attn"),
            .mixer_norm = rms_norm_weight(w, "attn_norm.weight", config),
            .mixer = std::make_unique<DeepseekV4Attention>(
                v4, DeepseekV4AttentionOptions{.hidden_size = config.hidden_size, .num_heads = config.num_attention_heads,
                                               .rms_norm_eps = static_cast<float>(config.rms_norm_eps), .layer = layer},
                w.scope("attn")),
            .ffn_hc = std::make_unique<HyperConnection>(hc, w, "hc_ffn"),
            .ffn_norm = rms_norm_weight(w, "ffn_norm.weight", config),
            .ffn = std::make_unique<MoeFfn>(moe_options(config, v4, layer), w.scope("ffn"), moe_names()),
        }),
        describe(layer));
  }
  return model;
}

}  // namespace strata
