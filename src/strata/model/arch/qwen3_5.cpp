// Qwen3.5 (qwen3_5, qwen3_5_moe; text-only checkpoints qwen3_5_text, qwen3_5_moe_text): the
// Qwen3-Next stack with the DeltaNet's projections stored split, a dense MLP on every layer or
// (MoE) routed experts, top-k always renormalised, plus a sigmoid-gated shared expert on every
// layer. Text prompts give MRoPE's three position streams one value, so the rotary is plain partial
// rotary. Multimodal checkpoints hold the text model under model.language_model and a vision
// tower under model.visual (image prompts then use MRoPE's three streams).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/qwen3_next.h"
#include "strata/model/vision/vision_tower.h"

namespace strata {
namespace {

// The vision tower of a multimodal checkpoint, on the model's backend (on a GPU, a stream of its own).
// Under tensor parallelism only rank 0 holds it, whole: the other ranks receive image embeddings
// with the steps (parallel/step_message.h).
void add_vision_tower(Model& model, const ModelConfig& config, const ModelWeights& weights) {
  if (weights.shard().rank > 0) return;
  // Dummy weights follow the config; a real checkpoint must hold the tower to have one.
  const bool has_tower = weights.is_dummy() || !weights.names_under("model.visual.").empty();
  if (!has_tower || !config.raw.contains("vision_config")) return;
  const VisionTowerOptions options = vision_tower_options(config.raw["vision_config"]);
  if (options.out_hidden_size != config.hidden_size)
    fail("config.json: vision_config.out_hidden_size is {} but the text model's hidden_size is {}; image embeddings "
         "must have the text model's width", options.out_hidden_size, config.hidden_size);
  model.set_vision_tower(std::make_unique<VisionTower>(options, WeightScope(weights, "model.visual"), weights.backend()));
}

// Parts of the checkpoint the target model leaves unread, said once at start-up.
void log_unread_parts(const ModelConfig& config, const ModelWeights& weights) {
  const size_t mtp = weights.names_under("mtp.").size();
  if (mtp > 0)
    spdlog::info("{}: the multi-token prediction layers (mtp.*, {} tensors) load only as a speculative draft: "
                 "--speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": 1}}'",
                 config.model_type, mtp);
}

void check_supported(const ModelConfig& config) {
  if (!config.get_bool("attn_output_gate", true))
    fail("config.json: attn_output_gate is false; Qwen3.5's attention always has the output gate "
         "(transformers' Qwen3_5Attention), so this checkpoint is not a Qwen3.5 model Strata can run");
}

// The routed experts fused per layer, as transformers' Qwen3_5MoeExperts holds them:
// experts.gate_up_proj [E, 2 I, H] (gate | up) and experts.down_proj [E, H, I]; this rank's experts
// and, each part on its own, its intermediate columns. nullopt for the per-expert
// experts.<e>.{gate,up,down}_proj.weight that save_pretrained writes (MoeFfn reads those).
std::optional<MoeExpertWeights> fused_experts(const MoeOptions& moe, const WeightScope& mlp) {
  if (mlp.weights().names_under(mlp.name("experts.gate_up_proj")).empty()) return std::nullopt;
  const int64_t e = moe.num_experts, inter = moe.intermediate_size, hidden = moe.hidden_size;
  const ExpertSplit split = expert_split(mlp.shard(), e, inter);
  const int64_t first = split.first_column, local = split.num_local_columns;
  const std::string gate_up = mlp.name("experts.gate_up_proj"), down = mlp.name("experts.down_proj");
  const Shape gate_up_shape{e, 2 * inter, hidden}, down_shape{e, hidden, inter};
  if (!split.splits_columns()) {  // whole experts: views of the file on the CPU
    const int64_t end = split.first_expert + split.num_local_experts;
    return MoeExpertWeights{.gate_up = mlp.row_range("experts.gate_up_proj", gate_up_shape, split.first_expert, end),
                            .down = mlp.row_range("experts.down_proj", down_shape, split.first_expert, end)};
  }
  check_whole_blocks(split, mlp.weights().stored_dtype(down, down_shape), down);
  std::vector<MatrixPart> gate_up_parts, down_parts;
  for (int64_t x = split.first_expert; x < split.first_expert + split.num_local_experts; ++x) {
    gate_up_parts.push_back({.name = gate_up, .shape = gate_up_shape, .index = x, .rows = {first, first + local},
                             .cols = {0, hidden}});
    gate_up_parts.push_back({.name = gate_up, .shape = gate_up_shape, .index = x,
                             .rows = {inter + first, inter + first + local}, .cols = {0, hidden}});
    down_parts.push_back({.name = down, .shape = down_shape, .index = x, .rows = {0, hidden},
                          .cols = {first, first + local}});
  }
  const int64_t experts = split.num_local_experts;
  return MoeExpertWeights{.gate_up = mlp.weights().matrix_parts(gate_up_parts, {experts, 2 * local, hidden}),
                          .down = mlp.weights().matrix_parts(down_parts, {experts, hidden, local})};
}

Qwen3NextFfn moe_ffn(const MoeOptions& moe, const WeightScope& mlp) {
  if (std::optional<MoeExpertWeights> experts = fused_experts(moe, mlp))
    return {std::make_unique<MoeFfn>(moe, std::move(*experts), mlp), "moe"};
  return {std::make_unique<MoeFfn>(moe, mlp), "moe"};
}

MoeOptions qwen3_5_moe_options(const ModelConfig& config) {
  MoeOptions moe = qwen_moe_options(config);
  moe.route.norm_topk_prob = true;  // Qwen3_5MoeTopKRouter renormalises; configs carry no flag
  moe.shared_intermediate_size = config.get_int("shared_expert_intermediate_size", 0);
  moe.shared_expert_gate = true;
  if (moe.num_experts < 1 || moe.shared_intermediate_size < 1)
    fail("config.json of {}: num_experts ({}) and shared_expert_intermediate_size ({}) must be positive",
         config.model_type, moe.num_experts, moe.shared_intermediate_size);
  return moe;
}

Qwen3NextStack text_stack(const ModelConfig& config, const ModelWeights& weights, bool moe_layers) {
  const MlpOptions mlp = dense_mlp_options(config);
  return {.prefix = qwen3_5_text_prefix(config, weights),
          .split_gdn_projections = true,
          .make_ffn = [config, mlp, moe_layers](const WeightScope& w, int64_t) {
            if (moe_layers) return qwen3_5_moe_ffn(config, w);
            return Qwen3NextFfn{std::make_unique<Mlp>(mlp, w), "mlp"};
          }};
}

std::unique_ptr<Model> build(const ModelConfig& config, const ModelWeights& weights, bool moe_layers) {
  check_supported(config);
  log_unread_parts(config, weights);
  std::unique_ptr<Model> model = build_qwen3_next_stack(config, weights, text_stack(config, weights, moe_layers));
  add_vision_tower(*model, config, weights);
  return model;
}

}  // namespace

std::string qwen3_5_text_prefix(const ModelConfig& config, const ModelWeights& weights) {
  constexpr const char* kNestedPrefix = "model.language_model";
  const bool nested = weights.is_dummy() ? config.has("text_config")
                                         : !weights.names_under(std::string(kNestedPrefix) + ".").empty();
  return nested ? kNestedPrefix : "model";
}

Qwen3NextFfn qwen3_5_moe_ffn(const ModelConfig& config, const WeightScope& mlp) {
  return moe_ffn(qwen3_5_moe_options(config), mlp);
}

std::unique_ptr<Model> build_qwen3_5(const ModelConfig& config, const ModelWeights& weights) {
  return build(config, weights, /*moe_layers=*/false);
}

std::unique_ptr<Model> build_qwen3_5_moe(const ModelConfig& config, const ModelWeights& weights) {
  return build(config, weights, /*moe_layers=*/true);
}

std::unique_ptr<Model> build_qwen3_5_mtp(const Model& target, const ModelWeights& weights) {
  return build_qwen3_next_mtp_stack(target, weights, text_stack(target.config(), weights, /*moe_layers=*/false));
}

std::unique_ptr<Model> build_qwen3_5_moe_mtp(const Model& target, const ModelWeights& weights) {
  return build_qwen3_next_mtp_stack(target, weights, text_stack(target.config(), weights, /*moe_layers=*/true));
}

}  // namespace strata
