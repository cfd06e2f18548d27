// Mamba-2: a stack of pre-norm Mamba-2 mixer blocks under backbone.*, no attention and no
// feed-forward; every norm uses layer_norm_epsilon, and the gated norm spans the whole
// intermediate (HF MambaRMSNormGated has no groups).
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"
#include "strata/model/layers/mamba2_mixer.h"

namespace strata {
namespace {

Mamba2MixerOptions mamba2_options(const ModelConfig& config) {
  Mamba2MixerOptions o;
  o.hidden_size = config.hidden_size;
  o.num_heads = config.require_int("num_heads");
  o.head_dim = config.require_int("head_dim");
  o.n_groups = config.get_int("n_groups", 1);
  o.state_size = config.require_int("state_size");
  o.conv_kernel = config.get_int("conv_kernel", 4);
  o.chunk_size = config.get_int("chunk_size", 256);
  o.conv_bias = config.get_bool("use_conv_bias", true);
  o.proj_bias = config.get_bool("use_bias", false);
  o.norm_eps = static_cast<float>(config.get_double("layer_norm_epsilon", 1e-5));
  if (config.has("time_step_limit")) {
    const nlohmann::json& limit = config.raw["time_step_limit"];
    if (!limit.is_array() || limit.size() != 2)
      fail("config.json: time_step_limit must be a list of two numbers, got {}", limit.dump());
    o.dt_min = static_cast<float>(json_to_double(limit[0]));
    o.dt_max = static_cast<float>(json_to_double(limit[1]));
  }
  if (o.n_groups < 1 || o.num_heads % o.n_groups != 0)
    fail("config.json: num_heads {} must be a multiple of n_groups {}", o.num_heads, o.n_groups);
  return o;
}

}  // namespace

std::unique_ptr<Model> build_mamba2(const ModelConfig& config, const ModelWeights& weights) {
  const double eps = config.get_double("layer_norm_epsilon", 1e-5);
  auto model = std::make_unique<Model>(
      config, decoder_parts(config, weights,
                            {.embed_tokens = "backbone.embeddings.weight",
                             .final_norm = "backbone.norm_f.weight", .norm_eps = eps}));
  const Mamba2MixerOptions mixer = mamba2_options(config);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("backbone.layers.{}", i));
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "norm.weight", config, false, eps),
                         .mixer = std::make_unique<Mamba2Mixer>(mixer, w.scope("mixer")),
                     }),
                     "mamba2");
  }
  return model;
}

}  // namespace strata
