// ModernBERT: an encoder (ModernBertModel for embeddings, ModernBertForSequenceClassification for
// rerankers): token embeddings and a LayerNorm (no positions: RoPE in attention), pre-norm blocks
// without biases, every global_attn_every_n_layers-th layer global and the others local (keys
// within local_attention / 2 on either side, their own rotary base), a GeGLU MLP (Wi: input | gate)
// and a final LayerNorm. A classifier reads head(x) = norm(act(dense(x))) of its pooled row.
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/attention.h"
#include "strata/model/layers/encoder_block.h"
#include "strata/model/layers/mlp.h"

namespace strata {
namespace {

// transformers 5 lists layer_types; older configs (the Hub's) give global_attn_every_n_layers.
std::vector<std::string> modernbert_layer_types(const ModelConfig& config) {
  const int64_t every = config.get_int("global_attn_every_n_layers", 3);
  if (every < 1) fail("config.json: global_attn_every_n_layers is {}; it must be at least 1", every);
  return attention_layer_types(config, [every](int64_t i) { return i % every == 0; });
}

// rope_parameters per layer type (transformers 5), else global_rope_theta / local_rope_theta.
RopeConfig modernbert_rope(const ModelConfig& config, const std::string& type) {
  const nlohmann::json& raw = config.raw;
  if (raw.contains("rope_parameters") && raw["rope_parameters"].is_object() && raw["rope_parameters"].contains(type))
    return config.rope_for_layer_type(type);
  RopeConfig rope;
  rope.rope_theta = type == "full_attention" ? config.get_double("global_rope_theta", 160000.0)
                                             : config.get_double("local_rope_theta", 10000.0);
  return rope;
}

AttentionOptions modernbert_attention(const ModelConfig& config, const std::string& type) {
  AttentionOptions o{.hidden_size = config.hidden_size, .num_heads = config.num_attention_heads,
                     .num_kv_heads = config.num_attention_heads, .head_dim = config.head_dim,
                     .qkv_bias = config.get_bool("attention_bias", false),
                     .o_bias = config.get_bool("attention_bias", false), .causal = false,
                     .names = {.o = "Wo", .qkv = "Wqkv"}};
  o.rope = ops::rope_frequencies(modernbert_rope(config, type), config.head_dim, config.max_position_embeddings,
                                 config.dtype);
  // transformers masks keys farther than local_attention / 2 either way: a window of half + 1.
  if (type == "sliding_attention") o.sliding_window = config.get_int("local_attention", 128) / 2 + 1;
  return o;
}

// ModernBertForSequenceClassification's head and classifier: on the [CLS] row the pooling picks
// (classifier_pooling "cls"), or on the sequence's mean hidden state ("mean").
void load_classifier(const ModelConfig& config, const ModelWeights& weights, Model::Parts& parts) {
  const std::string pooling = config.get_string("classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean")
    fail("config.json: classifier_pooling '{}' is not supported; ModernBERT pools 'cls' or 'mean'", pooling);
  parts.classifier_reads_mean = pooling == "mean";
  const int64_t hidden = config.hidden_size, num_labels = config.pooler->num_labels;
  const double eps = config.get_double("norm_eps", 1e-5);
  parts.classifier_pooler = weights.get("head.dense.weight", {hidden, hidden});
  if (config.get_bool("classifier_bias", false)) parts.classifier_pooler_bias = weights.get("head.dense.bias", {hidden});
  parts.classifier_pooler_activation = ops::parse_activation(config.get_string("classifier_activation", "gelu"));
  parts.classifier_pooler_norm =
      load_layer_norm(WeightScope(weights, ""), "head.norm", hidden, eps, config.get_bool("norm_bias", false));
  parts.lm_head = weights.get("classifier.weight", {num_labels, hidden});
  parts.lm_head_bias = weights.get("classifier.bias", {num_labels});
}

}  // namespace

std::unique_ptr<Model> build_modernbert(const ModelConfig& config, const ModelWeights& weights) {
  if (config.head() == ModelHead::kLanguageModel)
    fail("ModernBERT is an encoder: it embeds or scores text but does not generate; serve it with --runner pooling");
  // Task checkpoints keep the encoder under "model."; sentence-transformers folders at the top level.
  const WeightScope encoder(weights, weights.names_under("model.").empty() ? "" : "model");
  const int64_t hidden = config.hidden_size;
  const double eps = config.get_double("norm_eps", 1e-5);
  const bool norm_bias = config.get_bool("norm_bias", false);
  Model::Parts parts;
  parts.embed_tokens = weights.get_widened(encoder.name("embeddings.tok_embeddings.weight"), {config.vocab_size, hidden});
  parts.embedding_norm = load_layer_norm(encoder, "embeddings.norm", hidden, eps, norm_bias);
  parts.final_layer_norm = load_layer_norm(encoder, "final_norm", hidden, eps, norm_bias);
  if (config.head() == ModelHead::kClassifier) load_classifier(config, weights, parts);
  auto model = std::make_unique<Model>(config, std::move(parts));
  const MlpOptions mlp{.hidden_size = hidden, .intermediate_size = config.intermediate_size,
                       .activation = ops::parse_activation(config.get_string("hidden_activation", "gelu")),
                       .gated = true, .bias = config.get_bool("mlp_bias", false),
                       .names = {.down = "Wo", .gate_up = "Wi"}};
  const std::vector<std::string> types = modernbert_layer_types(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w = encoder.scope(fmt::format("layers.{}", i));
    const bool local = types[i] == "sliding_attention";
    model->add_layer(std::make_unique<EncoderBlock>(EncoderBlock::Parts{
                         .mixer = std::make_unique<Attention>(modernbert_attention(config, types[i]), w.scope("attn")),
                         .mixer_norm = i == 0 ? LayerNorm{} : load_layer_norm(w, "attn_norm", hidden, eps, norm_bias),
                         .ffn = std::make_unique<Mlp>(mlp, w.scope("mlp")),
                         .ffn_norm = load_layer_norm(w, "mlp_norm", hidden, eps, norm_bias),
                         .pre_norm = true}),
                     local ? "bidirectional local attention + geglu mlp (pre-norm)"
                           : "bidirectional global attention + geglu mlp (pre-norm)");
  }
  return model;
}

}  // namespace strata
