#include "strata/model/arch/common.h"

#include <fmt/format.h>

#include "strata/core/error.h"

#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/mlp.h"

namespace strata {

RmsNorm rms_norm_weight(const WeightScope& w, const std::string& name, const ModelConfig& config,
                        bool unit_offset, double eps) {
  return {w.get(name, {config.hidden_size}),
          {.eps = static_cast<float>(eps > 0 ? eps : config.rms_norm_eps), .unit_offset = unit_offset}};
}

Model::Parts decoder_parts(const ModelConfig& config, const ModelWeights& weights,
                           const DecoderPartsOptions& options) {
  const WeightScope root(weights, "");
  Model::Parts parts;
  // The lookup reads bf16 rows on a GPU, whatever format the table is stored in. Under tensor
  // parallelism each rank holds its rows of the vocabulary (layers/vocab_parallel.h).
  parts.vocab = vocab_shard(config.vocab_size, weights.shard());
  parts.embed_tokens = vocab_rows(weights, options.embed_tokens, config.hidden_size, parts.vocab, /*widened=*/true);
  parts.whole_embed_tokens = whole_table_loader(weights, options.embed_tokens, config.hidden_size, parts.vocab);
  if (!options.final_norm.empty())
    parts.final_norm = rms_norm_weight(root, options.final_norm, config, options.norm_unit_offset, options.norm_eps);
  if (config.head() == ModelHead::kHiddenStates) return parts;  // an lm_head in the file stays unread
  if (config.head() == ModelHead::kClassifier) {
    const Shape shape{config.pooler->num_labels, config.hidden_size};
    const std::optional<Tensor> score = weights.find("score.weight", shape);
    if (!score)
      fail("a classifier (--task classify / score, or a *ForSequenceClassification checkpoint) needs the tensor "
           "'score.weight' [{}, {}], which {} lacks; serve an embedding model with --task embed, or a generative one "
           "with --runner generate", shape[0], shape[1], weights.description());
    parts.lm_head = *score;
    return parts;
  }
  std::optional<Tensor> lm_head;
  if (!config.tie_word_embeddings || !weights.is_dummy())
    lm_head = find_vocab_rows(weights, "lm_head.weight", config.hidden_size, parts.vocab,
                              /*dummy_absent=*/config.tie_word_embeddings);
  if (!lm_head && !config.tie_word_embeddings)
    fail("missing tensor 'lm_head.weight' in {} (tie_word_embeddings is false)", weights.description());
  parts.lm_head = lm_head ? *lm_head : parts.embed_tokens;
  return parts;
}

bool is_sparse_moe_layer(const ModelConfig& config, int64_t layer) {
  for (int64_t dense : config.get_int_list("mlp_only_layers"))
    if (dense == layer) return false;
  const int64_t step = config.get_int("decoder_sparse_step", 1);
  if (step < 1) fail("config.json: decoder_sparse_step is {}; it must be >= 1", step);
  return qwen_moe_options(config).num_experts > 0 && (layer + 1) % step == 0;
}

MoeOptions qwen_moe_options(const ModelConfig& config) {
  MoeOptions o;
  o.hidden_size = config.hidden_size;
  o.intermediate_size = config.get_int("moe_intermediate_size", config.intermediate_size);
  o.num_experts = config.get_int("num_experts", config.get_int("num_local_experts", 0));
  o.route = {.top_k = config.get_int("num_experts_per_tok", 1),
             .scoring = ops::MoeScoring::kSoftmax,
             .norm_topk_prob = config.get_bool("norm_topk_prob", false)};
  o.activation = ops::parse_activation(config.hidden_act);
  if (o.num_experts > 0 && (o.route.top_k < 1 || o.route.top_k > o.num_experts))
    fail("config.json: num_experts_per_tok is {}; it must be in [1, {}] (the number of experts)",
         o.route.top_k, o.num_experts);
  return o;
}

MoeOptions grouped_sigmoid_moe_options(const ModelConfig& config) {
  MoeOptions o;
  o.hidden_size = config.hidden_size;
  o.intermediate_size = config.require_int("moe_intermediate_size");
  o.num_experts = config.require_int("n_routed_experts");
  o.route = {.top_k = config.require_int("num_experts_per_tok"),
             .scoring = ops::MoeScoring::kSigmoid,
             .norm_topk_prob = config.get_bool("norm_topk_prob", true),
             .routed_scaling_factor = static_cast<float>(config.get_double("routed_scaling_factor", 1.0)),
             .n_group = config.get_int("n_group", 1),
             .topk_group = config.get_int("topk_group", 1)};
  o.correction_bias = true;
  const ops::MoeRouteOptions& r = o.route;
  if (r.top_k < 1 || r.top_k > o.num_experts || r.n_group < 1 || o.num_experts % r.n_group != 0 ||
      (r.n_group > 1 && o.num_experts / r.n_group < 2) || r.topk_group < 1 || r.topk_group > r.n_group ||
      r.top_k > r.topk_group * (o.num_experts / r.n_group))
    fail("config.json: {} routed experts in n_group {} groups, topk_group {} and num_experts_per_tok {} do not fit; "
         "the groups must split the experts evenly (at least 2 each) and the chosen groups hold the chosen experts",
         o.num_experts, r.n_group, r.topk_group, r.top_k);
  return o;
}

MlpOptions dense_mlp_options(const ModelConfig& config) {
  return {.hidden_size = config.hidden_size,
          .intermediate_size = config.intermediate_size,
          .activation = ops::parse_activation(config.hidden_act),
          .bias = config.get_bool("mlp_bias", false)};
}

std::unique_ptr<Model> build_dense_decoder(const ModelConfig& config, const ModelWeights& weights,
                                           const DenseDecoderOptions& options) {
  auto model = std::make_unique<Model>(config, decoder_parts(config, weights));
  AttentionOptions attention = attention_options(config);
  attention.qk_norm = options.qk_norm;
  attention.qkv_bias = options.qkv_bias || config.attention_bias;
  attention.o_bias = config.attention_bias;
  const MlpOptions mlp = dense_mlp_options(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    model->add_layer(dense_decoder_layer(w, config, attention, mlp), "attention + mlp");
  }
  return model;
}

std::unique_ptr<Layer> dense_decoder_layer(const WeightScope& w, const ModelConfig& config,
                                           const AttentionOptions& attention, const MlpOptions& mlp) {
  return std::make_unique<DecoderBlock>(DecoderBlock::Parts{
      .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
      .mixer = std::make_unique<Attention>(attention, w.scope("self_attn")),
      .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
      .ffn = std::make_unique<Mlp>(mlp, w.scope("mlp")),
  });
}

std::vector<std::string> attention_layer_types(const ModelConfig& config,
                                               const std::function<bool(int64_t)>& is_global) {
  std::vector<std::string> types = config.get_string_list("layer_types");
  if (types.empty())
    for (int64_t i = 0; i < config.num_hidden_layers; ++i)
      types.push_back(is_global(i) ? "full_attention" : "sliding_attention");
  if (static_cast<int64_t>(types.size()) != config.num_hidden_layers)
    fail("config.json: layer_types has {} entries for {} layers", types.size(), config.num_hidden_layers);
  for (const std::string& type : types)
    if (type != "sliding_attention" && type != "full_attention")
      fail("config.json: layer_types has '{}'; expected sliding_attention or full_attention", type);
  return types;
}

}  // namespace strata
