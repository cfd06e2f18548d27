// EAGLE-3 heads (architectures LlamaForCausalLMEagle3 and the like, or speculators' Eagle3Speculator):
// Llama-style decoder layers, the first's attention reading the token embedding joined with fc over
// three target layers' hidden states, later ones plain pre-norm layers (vLLM's llama_eagle3); a final
// norm and an lm_head over a draft vocabulary that d2t maps into the target's. Names: fc, norm, lm_head,
// d2t, layers.N.* (midlayer.* too in one-layer heads); the embedding is the target's unless the head has one.
#include <fmt/ranges.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/eagle3_block.h"

namespace strata {
namespace {

// The target layers whose inputs the head reads: eagle_config.eagle_aux_hidden_state_layer_ids, else
// vLLM's default 2, L / 2, L - 3; ascending, as the states are concatenated in layer order.
std::vector<int64_t> target_layers(const ModelConfig& head, int64_t num_target_layers) {
  const nlohmann::json& eagle = head.raw.contains("eagle_config") ? head.raw["eagle_config"] : nlohmann::json();
  if (eagle.is_object() && !eagle.value("use_aux_hidden_state", true))
    fail("EAGLE-3 head: eagle_config.use_aux_hidden_state is false (an EAGLE-1 style head); Strata runs EAGLE-3 "
         "heads, which read three target layers");
  std::vector<int64_t> layers{2, num_target_layers / 2, num_target_layers - 3};
  const char* key = "eagle_aux_hidden_state_layer_ids";
  if (eagle.is_object() && eagle.contains(key)) layers = eagle[key].get<std::vector<int64_t>>();
  if (head.has(key)) layers = head.get_int_list(key);
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  if (layers.empty() || layers.front() < 0 || layers.back() >= num_target_layers)
    fail("EAGLE-3 head: its auxiliary target layers [{}] must lie in [0, {}), the target's {} layers; set "
         "eagle_config.eagle_aux_hidden_state_layer_ids in the head's config.json", fmt::join(layers, ", "),
         num_target_layers, num_target_layers);
  return layers;
}

// vLLM's converted heads (speculators_model_type eagle3, the decoder's config nested under
// transformer_layer_config, which ModelConfig lifts): vLLM reads norm_before_residual as true there
// unless the config says otherwise.
bool speculators_layout(const ModelConfig& head) { return head.has("speculators_model_type"); }

// Each decoder layer's weight prefix: layers.N or model.layers.N (vLLM's names), or midlayer, the EAGLE
// repository's name for a one-layer head's layer. The family is the one that holds layer 0.
std::vector<std::string> layer_prefixes(const ModelWeights& weights, int64_t num_layers) {
  const auto present = [&](const std::string& prefix) {
    return weights.is_dummy() || !weights.names_under(prefix + ".").empty();
  };
  if (num_layers == 1 && present("midlayer")) return {"midlayer"};
  std::string family;
  for (const char* candidate : {"layers", "model.layers"})
    if (family.empty() && present(fmt::format("{}.0", candidate))) family = candidate;
  if (family.empty())
    fail("EAGLE-3 head: {} has no decoder layer ({}layers.0.*)", weights.description(),
         num_layers == 1 ? "midlayer.* or " : "");
  std::vector<std::string> prefixes;
  for (int64_t i = 0; i < num_layers; ++i) {
    prefixes.push_back(fmt::format("{}.{}", family, i));
    if (!present(prefixes.back()))
      fail("EAGLE-3 head: config.json's num_hidden_layers is {}, but {} has no weights under {}.*; set "
           "num_hidden_layers to the number of layers the head's file holds", num_layers, weights.description(),
           prefixes.back());
  }
  if (!weights.is_dummy() && present(fmt::format("{}.{}", family, num_layers)))
    fail("EAGLE-3 head: {} holds {}.{}.*, past config.json's num_hidden_layers {}; set num_hidden_layers to the "
         "number of layers the head's file holds", weights.description(), family, num_layers, num_layers);
  return prefixes;
}

// d2t [draft vocab]: draft id i is target id i + d2t[i]; without it the vocabularies must agree.
std::vector<int32_t> draft_to_target(const ModelWeights& weights, int64_t draft_vocab, int64_t vocab) {
  std::vector<int32_t> offsets(draft_vocab, 0);
  const bool stored = weights.is_dummy() || !weights.names_under("d2t").empty();
  if (!stored && draft_vocab != vocab)
    fail("EAGLE-3 head: draft_vocab_size {} differs from vocab_size {} but {} has no d2t table", draft_vocab, vocab,
         weights.description());
  if (stored) {
    const Tensor table = weights.get_i32_table("d2t", {draft_vocab});
    std::copy_n(table.data_as<const int32_t>(), draft_vocab, offsets.begin());
  }
  for (int64_t i = 0; i < draft_vocab; ++i)
    if (i + offsets[i] < 0 || i + offsets[i] >= vocab)
      fail("EAGLE-3 head: d2t maps draft id {} to {}, outside the target's vocabulary of {}", i, i + offsets[i], vocab);
  return offsets;
}

void check_fits_target(const ModelConfig& head, const ModelConfig& target) {
  const int64_t target_hidden = head.get_int("target_hidden_size", head.hidden_size);
  if (target_hidden != target.hidden_size)
    fail("EAGLE-3 head: it was trained on a target of hidden size {} (target_hidden_size, else hidden_size), but "
         "the target model's is {}; pick the head made for this model", target_hidden, target.hidden_size);
  if (head.vocab_size != target.vocab_size)
    fail("EAGLE-3 head: its vocab_size {} differs from the target's {}; pick the head made for this model",
         head.vocab_size, target.vocab_size);
  if (head.num_hidden_layers < 1)
    fail("EAGLE-3 head: num_hidden_layers is {}; a head has at least one decoder layer", head.num_hidden_layers);
}

Tensor embedding(const ModelConfig& head, const ModelWeights& weights, const Model& target) {
  for (const char* name : {"embed_tokens.weight", "model.embed_tokens.weight"})
    if (!weights.is_dummy() && !weights.names_under(name).empty())
      return weights.get_widened(name, {head.vocab_size, head.hidden_size});
  if (head.hidden_size != target.config().hidden_size)
    fail("EAGLE-3 head: hidden_size {} differs from the target's {} and the head has no embed_tokens of its own",
         head.hidden_size, target.config().hidden_size);
  // A split target holds its rows of the vocabulary only; the head, whole on rank 0, reads every row.
  return target.parts().vocab.split() ? target.parts().whole_embed_tokens() : target.parts().embed_tokens;
}

// Layer 0: attention over [embedding, g], g the fc'd target states or the chained state.
std::unique_ptr<Layer> first_layer(const ModelConfig& config, const WeightScope& w, const Tensor& fc) {
  AttentionOptions attention = attention_options(config);
  attention.input_size = 2 * config.hidden_size;
  return std::make_unique<Eagle3Block>(Eagle3Block::Parts{
      .fc = fc,
      .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
      .hidden_norm = rms_norm_weight(w, "hidden_norm.weight", config),
      .norm_before_residual = config.get_bool("norm_before_residual", speculators_layout(config)),
      .attention = std::make_unique<Attention>(attention, w.scope("self_attn")),
      .post_attention_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
      .mlp = std::make_unique<Mlp>(dense_mlp_options(config), w.scope("mlp")),
  });
}

}  // namespace

std::unique_ptr<Model> build_eagle3_head(const ModelConfig& head, const ModelWeights& weights, const Model& target) {
  check_fits_target(head, target.config());
  if (target.parts().residual_streams != 1)
    fail("EAGLE-3 head: model_type '{}' keeps {} residual streams, not the one whose layer inputs an EAGLE-3 head "
         "reads; use method ngram or draft_model", target.config().model_type, target.parts().residual_streams);
  const int64_t hidden = head.hidden_size, draft_vocab = head.get_int("draft_vocab_size", head.vocab_size);
  // A pipeline stage's target holds some layers only; the head's ids name the whole model's.
  const bool staged = target.pipeline_stage().count > 1;
  const std::vector<int64_t> layers =
      target_layers(head, staged ? target.config().num_hidden_layers : target.num_layers());
  const int64_t fc_in = static_cast<int64_t>(layers.size()) * target.config().hidden_size;
  if (fc_in == hidden)
    fail("EAGLE-3 head: fc's input width {} equals hidden_size; the head could not tell target states from its own",
         fc_in);
  ModelConfig config = head;
  config.vocab_size = draft_vocab;  // the width of its logits
  const WeightScope root(weights, "");
  Model::Parts parts{.embed_tokens = embedding(head, weights, target),
                     .final_norm = rms_norm_weight(root, "norm.weight", config),
                     .lm_head = weights.get("lm_head.weight", {draft_vocab, hidden}),
                     .eagle3 = {.target_layers = layers,
                                .draft_to_target = draft_to_target(weights, draft_vocab, head.vocab_size)}};
  auto model = std::make_unique<Model>(config, std::move(parts));
  const std::vector<std::string> prefixes = layer_prefixes(weights, head.num_hidden_layers);
  model->add_layer(first_layer(config, root.scope(prefixes[0]), weights.get("fc.weight", {hidden, fc_in})),
                   "eagle3: attention over [embedding, fc(target states)] + mlp");
  // Layers 1.. are plain pre-norm layers over the stream: q, k, v take hidden.
  for (size_t i = 1; i < prefixes.size(); ++i)
    model->add_layer(dense_decoder_layer(root.scope(prefixes[i]), config, attention_options(config),
                                         dense_mlp_options(config)),
                     "attention + mlp");
  return model;
}

}  // namespace strata
