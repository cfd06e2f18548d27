// `strata info --model DIR`: architecture, parameter count, layer plan, memory needed.
#include <fmt/format.h>

#include <map>

#include "strata/cli/model_flags.h"

namespace strata::cli {
namespace {

void print_info(ModelFlags flags) {
  resolve_model_name(flags);
  auto backend = make_cpu_backend(1);
  LoadedModel loaded = load_model({.model_path = flags.model,
                                   .load_format = parse_load_format(flags.load_format),
                                   .shapes_only = true,
                                   .pooling = flags.pooling},
                                  *backend);
  const ModelConfig& c = loaded.config;
  const Model& model = *loaded.model;
  fmt::print("model_type:      {}\n", c.model_type);
  fmt::print("weights:         {}\n", loaded.weights->description());
  if (c.pooler)
    fmt::print("runner:          pooling ({}: {} pooling{}{})\n", model_task_name(c), pooling_type_name(c.pooler->pooling_type),
               c.pooler->normalize ? ", normalized" : "",
               c.pooler->head == ModelHead::kClassifier ? fmt::format(", {} labels", c.pooler->num_labels) : "");
  const double params = static_cast<double>(loaded.weights->num_parameters());
  fmt::print("parameters:      {} ({})\n", loaded.weights->num_parameters(),
             params >= 1e9 ? fmt::format("{:.3f} B", params / 1e9) : fmt::format("{:.2f} M", params / 1e6));
  fmt::print("weight memory:   {:.1f} MiB as stored\n", loaded.weights->num_bytes() / 1048576.0);
  fmt::print("hidden_size:     {}, vocab_size: {}, max_position_embeddings: {}\n", c.hidden_size,
             c.vocab_size, c.max_position_embeddings);
  fmt::print("attention:       {} heads, {} kv heads, head_dim {}, rope {} (theta {})\n",
             c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.rope.rope_type, c.rope.rope_theta);
  const int64_t kv_bytes_per_token_bf16 = 2 * model.num_kv_layers() * model.kv_cache_heads() * model.kv_cache_head_dim() * 2;
  fmt::print("kv cache:        {} attention layers, {} KiB per token in bf16 ({} KiB in f32)\n",
             model.num_kv_layers(), kv_bytes_per_token_bf16 / 1024.0, kv_bytes_per_token_bf16 / 512.0);
  int64_t ssm_bytes = 0;
  for (const SsmLayerShape& shape : model.ssm_layer_shapes())
    ssm_bytes += 4 * (shape.h_state_elems + shape.conv_state_elems);
  if (model.num_ssm_layers() > 0)
    fmt::print("ssm state:       {} recurrent states, {:.1f} KiB per sequence in f32\n",
               model.num_ssm_layers(), ssm_bytes / 1024.0);
  fmt::print("layer plan:\n");
  const auto& plan = model.layer_plan();
  for (size_t i = 0; i < plan.size();) {  // runs of identical layers on one line
    size_t j = i;
    while (j < plan.size() && plan[j] == plan[i]) ++j;
    fmt::print("  layers {:>3}-{:<3} {}\n", i, j - 1, plan[i]);
    i = j;
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto flags = std::make_shared<ModelFlags>();
  CLI::App* cmd = app.add_subcommand("info", "show a model's architecture, size and layer plan");
  add_model_flags(*cmd, *flags);
  cmd->callback([flags] { print_info(*flags); });
}

}  // namespace strata::cli
