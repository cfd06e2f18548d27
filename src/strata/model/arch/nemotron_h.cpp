// Nemotron-H: a hybrid of single-part blocks, one norm each, by hybrid_override_pattern
// (M mamba2, * attention, - mlp, E moe) or layers_block_type. Attention has no rotary
// embedding; the MLP is up/down with relu², MoE blocks route like DeepSeek-V3 (sigmoid +
// correction bias, groups) to relu² experts plus a shared expert; the Mamba-2 gated norm is grouped
// (intermediate / n_groups) and dt is clamped below at time_step_min as HF's torch path does.
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/mamba2_mixer.h"
#include "strata/model/layers/moe.h"

namespace strata {
namespace {

enum class BlockType : uint8_t { kMamba, kAttention, kMlp, kMoe };

std::vector<BlockType> block_types(const ModelConfig& config) {
  std::vector<BlockType> types;
  if (config.has("hybrid_override_pattern")) {
    for (char c : config.get_string("hybrid_override_pattern", "")) {
      if (c == 'M') types.push_back(BlockType::kMamba);
      else if (c == '*') types.push_back(BlockType::kAttention);
      else if (c == '-') types.push_back(BlockType::kMlp);
      else if (c == 'E') types.push_back(BlockType::kMoe);
      else fail("config.json: hybrid_override_pattern has '{}'; expected M, *, - or E", c);
    }
  } else {
    for (const std::string& name : config.get_string_list("layers_block_type")) {
      if (name == "mamba" || name == "linear_attention") types.push_back(BlockType::kMamba);
      else if (name == "attention" || name == "full_attention") types.push_back(BlockType::kAttention);
      else if (name == "mlp") types.push_back(BlockType::kMlp);
      else if (name == "moe") types.push_back(BlockType::kMoe);
      else fail("config.json: layers_block_type has '{}'; expected mamba, attention, mlp or moe", name);
    }
  }
  if (static_cast<int64_t>(types.size()) != config.num_hidden_layers)
    fail("config.json: the block pattern has {} entries for {} layers", types.size(),
         config.num_hidden_layers);
  return types;
}

Mamba2MixerOptions mixer_options(const ModelConfig& config) {
  Mamba2MixerOptions o;
  o.hidden_size = config.hidden_size;
  o.num_heads = config.require_int("mamba_num_heads");
  o.head_dim = config.require_int("mamba_head_dim");
  o.n_groups = config.get_int("n_groups", 1);
  o.state_size = config.require_int("ssm_state_size");
  o.conv_kernel = config.get_int("conv_kernel", 4);
  o.chunk_size = config.get_int("chunk_size", 256);
  o.conv_bias = config.get_bool("use_conv_bias", true);
  o.proj_bias = config.get_bool("use_bias", false);
  o.norm_eps = static_cast<float>(config.get_double("layer_norm_epsilon", 1e-5));
  if (o.n_groups < 1 || o.num_heads % o.n_groups != 0)
    fail("config.json: mamba_num_heads {} must be a multiple of n_groups {}", o.num_heads, o.n_groups);
  o.norm_group_size = o.num_heads * o.head_dim / o.n_groups;
  o.dt_min = static_cast<float>(config.get_double("time_step_min", 0.001));
  return o;
}

// Sigmoid routing with e_score_correction_bias over n_group groups (DeepSeek-V3's router),
// relu² up/down experts and a shared expert of the same kind.
MoeOptions moe_options(const ModelConfig& config) {
  MoeOptions o = grouped_sigmoid_moe_options(config);
  o.activation = ops::parse_activation(config.get_string("mlp_hidden_act", "relu2"));
  o.gated = false;
  o.shared_intermediate_size = config.get_int("moe_shared_expert_intermediate_size", 0);
  o.latent_size = config.get_int("moe_latent_size", 0);
  o.latent_bias = config.get_bool("mlp_bias", false);
  return o;
}

std::unique_ptr<Layer> make_block(const ModelConfig& config, const WeightScope& w, BlockType type) {
  const RmsNorm norm = rms_norm_weight(w, "norm.weight", config, false,
                                       config.get_double("layer_norm_epsilon", 1e-5));
  const WeightScope mixer = w.scope("mixer");
  switch (type) {
    case BlockType::kMamba:
      return std::make_unique<DecoderBlock>(DecoderBlock::Parts{
          .input_norm = norm, .mixer = std::make_unique<Mamba2Mixer>(mixer_options(config), mixer)});
    case BlockType::kAttention: {
      AttentionOptions attention = attention_options(config);
      attention.head_dim = config.get_int("attention_head_dim", config.head_dim);
      attention.qkv_bias = attention.o_bias = false;
      attention.rope = {};  // Nemotron-H attention is position-free
      return std::make_unique<DecoderBlock>(DecoderBlock::Parts{
          .input_norm = norm, .mixer = std::make_unique<Attention>(attention, mixer)});
    }
    case BlockType::kMlp: {
      const MlpOptions mlp{.hidden_size = config.hidden_size,
                           .intermediate_size = config.intermediate_size,
                           .activation = ops::parse_activation(config.get_string("mlp_hidden_act", "relu2")),
                           .gated = false,
                           .bias = config.get_bool("mlp_bias", false)};
      return std::make_unique<DecoderBlock>(DecoderBlock::Parts{
          .pre_ffn_norm = norm, .ffn = std::make_unique<Mlp>(mlp, mixer)});
    }
    case BlockType::kMoe:
      return std::make_unique<DecoderBlock>(DecoderBlock::Parts{
          .pre_ffn_norm = norm,
          .ffn = std::make_unique<MoeFfn>(moe_options(config), mixer, MoeWeightNames{.shared_expert = "shared_experts"})});
  }
  fail("{}: unknown Nemotron-H block type", w.name("mixer"));
}

}  // namespace

std::unique_ptr<Model> build_nemotron_h(const ModelConfig& config, const ModelWeights& weights) {
  auto model = std::make_unique<Model>(
      config, decoder_parts(config, weights,
                            {.embed_tokens = "backbone.embeddings.weight",
                             .final_norm = "backbone.norm_f.weight",
                             .norm_eps = config.get_double("layer_norm_epsilon", 1e-5)}));
  const std::vector<BlockType> types = block_types(config);
  static constexpr const char* kNames[] = {"mamba2", "attention (no rope)", "relu2 mlp", "moe"};
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("backbone.layers.{}", i));
    model->add_layer(make_block(config, w, types[i]), kNames[static_cast<int>(types[i])]);
  }
  return model;
}

}  // namespace strata
