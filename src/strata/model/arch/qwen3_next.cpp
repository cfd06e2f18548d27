// Qwen3-Next: Gated DeltaNet layers with a gated-attention layer every full_attention_interval
// (or as layer_types says); attention has a sigmoid output gate, partial rotary and q/k norm.
// Every RMSNorm except the DeltaNet's gated one is zero-centred (1 + w). The feed-forward is a
// softmax top-k MoE plus a sigmoid-gated shared expert on sparse layers, a dense MLP elsewhere.
#include "strata/model/arch/qwen3_next.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/gated_deltanet.h"

namespace strata {
namespace {

bool is_full_attention(const ModelConfig& config, int64_t layer) {
  const std::vector<std::string> types = config.get_string_list("layer_types");
  if (!types.empty()) {
    if (static_cast<int64_t>(types.size()) != config.num_hidden_layers)
      fail("config.json: layer_types has {} entries for {} layers", types.size(), config.num_hidden_layers);
    if (types[layer] != "full_attention" && types[layer] != "linear_attention")
      fail("config.json: layer_types[{}] is '{}'; expected full_attention or linear_attention",
           layer, types[layer]);
    return types[layer] == "full_attention";
  }
  const int64_t interval = config.get_int("full_attention_interval", 4);
  if (interval < 1) fail("config.json: full_attention_interval is {}; it must be >= 1", interval);
  return (layer + 1) % interval == 0;
}

bool names_partial_rotary_factor(const nlohmann::json& raw) {
  if (raw.contains("partial_rotary_factor")) return true;
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (raw.contains(key) && raw[key].is_object() && raw[key].contains("partial_rotary_factor")) return true;
  return false;
}

// Qwen3.5's rope_parameters.mrope_section / mrope_interleaved (Qwen3-Next has none: plain rotary).
ops::MropeSections mrope_sections(const ModelConfig& config, int64_t rotary_dim) {
  const nlohmann::json& params = config.raw.contains("rope_parameters") ? config.raw["rope_parameters"] : config.raw;
  if (!params.is_object() || !params.contains("mrope_section")) return {};
  const auto section = params["mrope_section"].get<std::vector<int32_t>>();
  if (section.size() != 3 || section[0] + section[1] + section[2] != rotary_dim / 2)
    fail("config.json: rope_parameters.mrope_section {} must name 3 streams (temporal, height, width) whose "
         "frequencies add up to rotary_dim / 2 = {}", params["mrope_section"].dump(), rotary_dim / 2);
  return {.section = {section[0], section[1], section[2]},
          .interleaved = params.value("mrope_interleaved", false)};
}

}  // namespace

AttentionOptions gated_attention_options(const ModelConfig& config) {
  AttentionOptions attention = attention_options(config);
  attention.qk_norm = true;
  attention.norm_unit_offset = true;
  attention.output_gate = true;
  if (!names_partial_rotary_factor(config.raw)) {  // transformers' default for both families
    RopeConfig rope = config.rope;
    rope.partial_rotary_factor = 0.25;
    attention.rope = ops::rope_frequencies(rope, config.head_dim, config.max_position_embeddings, config.dtype);
  }
  attention.rope.mrope = mrope_sections(config, attention.rope.rotary_dim);
  return attention;
}

std::unique_ptr<Mixer> gated_deltanet_mixer(const ModelConfig& config, const WeightScope& w, bool split,
                                            ops::GateActivation output_gate) {
  const GatedDeltaNetOptions gdn{.hidden_size = config.hidden_size,
                                 .num_k_heads = config.require_int("linear_num_key_heads"),
                                 .num_v_heads = config.require_int("linear_num_value_heads"),
                                 .k_head_dim = config.require_int("linear_key_head_dim"),
                                 .v_head_dim = config.require_int("linear_value_head_dim"),
                                 .conv_kernel = config.get_int("linear_conv_kernel_dim", 4),
                                 .norm_eps = static_cast<float>(config.rms_norm_eps),
                                 .split_projections = split,
                                 .output_gate = output_gate};
  return std::make_unique<GatedDeltaNet>(gdn, w.scope("linear_attn"));
}

namespace {

std::unique_ptr<Mixer> make_mixer(const ModelConfig& config, const WeightScope& w, bool full, bool split) {
  if (full) return std::make_unique<Attention>(gated_attention_options(config), w.scope("self_attn"));
  return gated_deltanet_mixer(config, w, split);
}

}  // namespace

std::unique_ptr<Model> build_qwen3_next_stack(const ModelConfig& config, const ModelWeights& weights,
                                              const Qwen3NextStack& stack) {
  auto model = std::make_unique<Model>(
      config, decoder_parts(config, weights, {.embed_tokens = stack.prefix + ".embed_tokens.weight",
                                              .final_norm = stack.prefix + ".norm.weight",
                                              .norm_unit_offset = true}));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("{}.layers.{}", stack.prefix, i));
    const bool full = is_full_attention(config, i);
    Qwen3NextFfn ffn = stack.make_ffn(w.scope("mlp"), i);
    model->add_layer(
        std::make_unique<DecoderBlock>(DecoderBlock::Parts{
            .input_norm = rms_norm_weight(w, "input_layernorm.weight", config, true),
            .mixer = make_mixer(config, w, full, stack.split_gdn_projections),
            .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config, true),
            .ffn = std::move(ffn.ffn),
        }),
        fmt::format("{} + {}", full ? "gated attention" : "gated_deltanet", ffn.kind));
  }
  return model;
}

std::unique_ptr<Model> build_qwen3_next_mtp_stack(const Model& target, const ModelWeights& weights,
                                                  const Qwen3NextStack& stack) {
  const ModelConfig& config = target.config();
  if (!weights.is_dummy() && weights.names_under("mtp.").empty())
    fail("--speculative-config: method mtp needs the checkpoint's multi-token-prediction weights (mtp.*), and this "
         "{} checkpoint has none; use a checkpoint that ships them, or method ngram or draft_model", config.model_type);
  const int64_t num_layers = config.get_int("num_nextn_predict_layers", config.get_int("mtp_num_hidden_layers", 1));
  if (num_layers < 1)
    fail("config.json: the MTP module has {} layers (num_nextn_predict_layers / mtp_num_hidden_layers); it needs at "
         "least one for method mtp", num_layers);
  STRATA_CHECK(weights.shard().size == 1);  // the module runs whole on one rank
  const int64_t hidden = config.hidden_size;
  const WeightScope mtp(weights, "mtp");
  // A split target holds its rows of the vocabulary only, and stage 0 of a pipeline no LM head; the
  // module reads every row of both.
  const DecoderPartsOptions tables{.embed_tokens = stack.prefix + ".embed_tokens.weight", .final_norm = ""};
  const bool whole_tables = target.parts().vocab.split() || target.pipeline_stage().count > 1;
  const Model::Parts vocab = whole_tables ? decoder_parts(config, weights, tables) : target.parts();
  Model::Parts parts{.embed_tokens = vocab.embed_tokens,
                     .embed_scale = target.parts().embed_scale,
                     .final_norm = rms_norm_weight(mtp, "norm.weight", config, true),
                     .lm_head = vocab.lm_head,
                     .vocab = vocab.vocab,
                     .mtp_input = {.embedding_norm = rms_norm_weight(mtp, "pre_fc_norm_embedding.weight", config, true),
                                   .hidden_norm = rms_norm_weight(mtp, "pre_fc_norm_hidden.weight", config, true),
                                   .fc = mtp.get("fc.weight", {hidden, 2 * hidden})}};
  auto model = std::make_unique<Model>(config, std::move(parts));
  for (int64_t i = 0; i < num_layers; ++i) {
    const WeightScope w = mtp.scope(fmt::format("layers.{}", i));
    Qwen3NextFfn ffn = stack.make_ffn(w.scope("mlp"), i);
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config, true),
                         .mixer = make_mixer(config, w, /*full=*/true, stack.split_gdn_projections),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config, true),
                         .ffn = std::move(ffn.ffn),
                     }),
                     fmt::format("mtp: gated attention + {}", ffn.kind));
  }
  return model;
}

namespace {

Qwen3NextStack qwen3_next_stack(const ModelConfig& config) {
  MoeOptions moe = qwen_moe_options(config);
  moe.shared_intermediate_size = config.get_int("shared_expert_intermediate_size", 0);
  moe.shared_expert_gate = moe.shared_intermediate_size > 0;
  return {.make_ffn = [config, moe](const WeightScope& mlp, int64_t layer) {
    if (is_sparse_moe_layer(config, layer)) return Qwen3NextFfn{std::make_unique<MoeFfn>(moe, mlp), "moe"};
    return Qwen3NextFfn{std::make_unique<Mlp>(dense_mlp_options(config), mlp), "mlp"};
  }};
}

}  // namespace

std::unique_ptr<Model> build_qwen3_next(const ModelConfig& config, const ModelWeights& weights) {
  return build_qwen3_next_stack(config, weights, qwen3_next_stack(config));
}

std::unique_ptr<Model> build_qwen3_next_mtp(const Model& target, const ModelWeights& weights) {
  return build_qwen3_next_mtp_stack(target, weights, qwen3_next_stack(target.config()));
}

}  // namespace strata
