// BERT: an encoder (BertModel for embeddings, BertForSequenceClassification for cross-encoders):
// word + absolute position + token type embeddings and a LayerNorm, post-norm blocks with biases,
// a GELU MLP and bidirectional attention, no final norm; a classifier reads tanh(dense(x)) of its
// [CLS] row. Weights under "bert." (task checkpoints) or at the top level (sentence-transformers).
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/layers/attention.h"
#include "strata/model/layers/encoder_block.h"
#include "strata/model/layers/mlp.h"

namespace strata {
namespace {

void check_bert_config(const ModelConfig& config) {
  if (config.head() == ModelHead::kLanguageModel)
    fail("BERT is an encoder: it embeds or scores text but does not generate; serve it with --runner pooling");
  const std::string positions = config.get_string("position_embedding_type", "absolute");
  if (positions != "absolute")
    fail("BERT with position_embedding_type '{}' is not supported; only absolute position embeddings are", positions);
}

// The [CLS] pooler and classifier of BertForSequenceClassification.
void load_classifier(const ModelConfig& config, const ModelWeights& weights, const WeightScope& bert,
                     Model::Parts& parts) {
  const int64_t hidden = config.hidden_size, num_labels = config.pooler->num_labels;
  parts.classifier_pooler = bert.get("pooler.dense.weight", {hidden, hidden});
  parts.classifier_pooler_bias = bert.get("pooler.dense.bias", {hidden});
  parts.lm_head = weights.get("classifier.weight", {num_labels, hidden});
  parts.lm_head_bias = weights.get("classifier.bias", {num_labels});
}

}  // namespace

std::unique_ptr<Model> build_bert(const ModelConfig& config, const ModelWeights& weights) {
  check_bert_config(config);
  const WeightScope bert(weights, weights.names_under("bert.").empty() ? "" : "bert");
  const int64_t hidden = config.hidden_size;
  const double eps = config.get_double("layer_norm_eps", 1e-12);
  Model::Parts parts;
  parts.encoder_embeddings = load_encoder_embeddings(config, bert.scope("embeddings"));
  parts.embed_tokens = weights.get_widened(bert.name("embeddings.word_embeddings.weight"), {config.vocab_size, hidden});
  if (config.head() == ModelHead::kClassifier) load_classifier(config, weights, bert, parts);
  auto model = std::make_unique<Model>(config, std::move(parts));
  const AttentionOptions attention{
      .hidden_size = hidden, .num_heads = config.num_attention_heads, .num_kv_heads = config.num_attention_heads,
      .head_dim = config.head_dim, .qkv_bias = true, .o_bias = true, .causal = false,
      .names = {.q = "self.query", .k = "self.key", .v = "self.value", .o = "output.dense"}};
  const MlpOptions mlp{.hidden_size = hidden, .intermediate_size = config.intermediate_size,
                       .activation = ops::parse_activation(config.hidden_act), .gated = false, .bias = true,
                       .names = {.up = "intermediate.dense", .down = "output.dense"}};
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w = bert.scope(fmt::format("encoder.layer.{}", i));
    model->add_layer(std::make_unique<EncoderBlock>(EncoderBlock::Parts{
                         .mixer = std::make_unique<Attention>(attention, w.scope("attention")),
                         .mixer_norm = load_layer_norm(w, "attention.output.LayerNorm", hidden, eps),
                         .ffn = std::make_unique<Mlp>(mlp, w),
                         .ffn_norm = load_layer_norm(w, "output.LayerNorm", hidden, eps)}),
                     "bidirectional attention + mlp (post-norm)");
  }
  return model;
}

}  // namespace strata
