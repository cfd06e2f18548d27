// gpt-oss: attention with q/k/v/o biases, learned attention sinks and sliding-window layers
// (layer_types) under YaRN rotary; every block's MLP is a MoE whose router has a bias, whose
// top-k logits are softmaxed, and whose experts are clamped SwiGLUs with biases, stored as
// fused [E, in, out] tensors with gate and up interleaved (bf16, or MXFP4 blocks + scales).
#include <numeric>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/decoder_block.h"

namespace strata {
namespace {

// Gate rows (even columns of gate_up) then up rows (odd columns) of intermediate columns
// [begin, end): the fused layout MoeFfn reads.
std::vector<int64_t> gate_then_up_columns(int64_t begin, int64_t end) {
  std::vector<int64_t> columns;
  for (int64_t i = begin; i < end; ++i) columns.push_back(2 * i);
  for (int64_t i = begin; i < end; ++i) columns.push_back(2 * i + 1);
  return columns;
}

// This rank's experts and intermediate columns (all of them without tensor parallelism); the
// biases are small enough to load whole and keep a view of.
MoeExpertWeights experts(const ModelConfig& config, const MoeOptions& moe, const WeightScope& w) {
  const ModelWeights& weights = w.weights();
  const int64_t e = moe.num_experts, hidden = config.hidden_size, inter = moe.intermediate_size;
  const ExpertSplit split = expert_split(w.shard(), e, inter);
  const std::pair<int64_t, int64_t> local{split.first_expert, split.first_expert + split.num_local_experts};
  const std::pair<int64_t, int64_t> columns{split.first_column, split.first_column + split.num_local_columns};
  const std::vector<int64_t> gate_up = gate_then_up_columns(columns.first, columns.second);
  std::vector<int64_t> all_hidden(hidden);
  std::iota(all_hidden.begin(), all_hidden.end(), 0);
  return {.gate_up = weights.expert_columns(w.name("gate_up_proj"), {e, hidden, 2 * inter}, gate_up, local, {0, hidden}),
          .down = weights.expert_columns(w.name("down_proj"), {e, inter, hidden}, all_hidden, local, columns),
          .gate_up_bias = weights.columns_f32(w.name("gate_up_proj_bias"), {e, 2 * inter}, gate_up)
                              .slice_rows(local.first, local.second),
          .down_bias = weights.get_f32(w.name("down_proj_bias"), {e, hidden}).slice_rows(local.first, local.second)};
}

MoeOptions moe_options(const ModelConfig& config) {
  MoeOptions o = qwen_moe_options(config);  // num_local_experts, num_experts_per_tok
  o.route.norm_topk_prob = true;            // softmax over the top-k logits
  o.activation = ops::Activation::kClampedSwiglu;
  o.router_bias = true;
  if (o.num_experts < 1) fail("config.json: num_local_experts must be at least 1");
  return o;
}

}  // namespace

std::unique_ptr<Model> build_gpt_oss(const ModelConfig& config, const ModelWeights& weights) {
  auto model = std::make_unique<Model>(config, decoder_parts(config, weights));
  const std::vector<std::string> types = config.get_string_list("layer_types");
  if (static_cast<int64_t>(types.size()) != config.num_hidden_layers)
    fail("config.json: layer_types has {} entries for {} layers", types.size(), config.num_hidden_layers);
  const MoeOptions moe = moe_options(config);
  const MoeWeightNames names{.router = "router.weight", .router_bias = "router.bias"};
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    if (types[i] != "sliding_attention" && types[i] != "full_attention")
      fail("config.json: layer_types has '{}'; expected sliding_attention or full_attention", types[i]);
    const WeightScope w(weights, fmt::format("model.layers.{}", i));
    AttentionOptions attention = attention_options(config);
    attention.sinks = true;
    if (types[i] == "sliding_attention") attention.sliding_window = config.require_int("sliding_window");
    model->add_layer(std::make_unique<DecoderBlock>(DecoderBlock::Parts{
                         .input_norm = rms_norm_weight(w, "input_layernorm.weight", config),
                         .mixer = std::make_unique<Attention>(attention, w.scope("self_attn")),
                         .pre_ffn_norm = rms_norm_weight(w, "post_attention_layernorm.weight", config),
                         .ffn = std::make_unique<MoeFfn>(moe, experts(config, moe, w.scope("mlp.experts")),
                                                         w.scope("mlp"), names),
                     }),
                     types[i] == "sliding_attention" ? "attention (sliding window, sinks) + moe"
                                                     : "attention (sinks) + moe");
  }
  return model;
}

}  // namespace strata
