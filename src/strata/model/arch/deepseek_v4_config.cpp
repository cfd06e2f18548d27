#include "strata/model/arch/deepseek_v4_config.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {
namespace {

int64_t positive(const ModelConfig& config, const char* key) {
  const int64_t value = config.require_int(key);
  if (value < 1) fail("config.json: {} is {}; it must be at least 1", key, value);
  return value;
}

int64_t compress_rate(const ModelConfig& config, const std::string& layer_type) {
  const nlohmann::json& rates = config.raw.contains("compress_rates") ? config.raw["compress_rates"] : nlohmann::json();
  if (!rates.is_object() || !rates.contains(layer_type) || !rates[layer_type].is_number_integer() ||
      rates[layer_type].get<int64_t>() < 1)
    fail("config.json: compress_rates must give {} a rate of at least 1", layer_type);
  return rates[layer_type].get<int64_t>();
}

std::vector<DeepseekV4LayerPlan> read_layers(const ModelConfig& config) {
  const std::vector<std::string> types = config.get_string_list("layer_types");
  const std::vector<std::string> mlp_types = config.get_string_list("mlp_layer_types");
  const auto n = static_cast<size_t>(config.num_hidden_layers);
  if (types.size() != n || mlp_types.size() != n)
    fail("config.json: layer_types ({}) and mlp_layer_types ({}) must list all {} layers", types.size(),
         mlp_types.size(), n);
  std::vector<DeepseekV4LayerPlan> layers;
  for (size_t i = 0; i < n; ++i) {
    DeepseekV4LayerPlan layer;
    if (types[i] == "compressed_sparse_attention") {
      layer = {.attention = DeepseekV4AttentionKind::kCompressedSparse, .compress_rate = compress_rate(config, types[i])};
    } else if (types[i] == "heavily_compressed_attention") {
      layer = {.attention = DeepseekV4AttentionKind::kHeavilyCompressed, .compress_rate = compress_rate(config, types[i])};
    } else if (types[i] != "sliding_attention") {
      fail("config.json: layer_types[{}] is '{}'; DeepSeek-V4 takes sliding_attention, "
           "compressed_sparse_attention or heavily_compressed_attention", i, types[i]);
    }
    if (mlp_types[i] != "hash_moe" && mlp_types[i] != "moe")
      fail("config.json: mlp_layer_types[{}] is '{}'; DeepSeek-V4 takes hash_moe or moe", i, mlp_types[i]);
    layer.hash_moe = mlp_types[i] == "hash_moe";
    layers.push_back(layer);
  }
  return layers;
}

ops::RopeTable rope_table(const ModelConfig& config, const char* label, int64_t rope_dim) {
  const RopeConfig rope = config.rope_for_layer_type(label);
  if (static_cast<int64_t>(rope.partial_rotary_factor * static_cast<double>(config.head_dim)) != rope_dim)
    fail("config.json: rope_parameters.{} rotates {} of head_dim {}; expected qk_rope_head_dim {}", label,
         rope.partial_rotary_factor, config.head_dim, rope_dim);
  return ops::rope_frequencies(rope, config.head_dim, config.max_position_embeddings, config.dtype);
}

}  // namespace

DeepseekV4Config DeepseekV4Config::read(const ModelConfig& config) {
  DeepseekV4Config c;
  c.layers = read_layers(config);
  c.head_dim = positive(config, "head_dim");
  c.rope_dim = static_cast<int64_t>(config.rope.partial_rotary_factor * static_cast<double>(c.head_dim));
  if (c.rope_dim < 2 || c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim)
    fail("config.json: partial_rotary_factor {} gives {} rotary dims of head_dim {}; they must be even and fit",
         config.rope.partial_rotary_factor, c.rope_dim, c.head_dim);
  if (config.num_key_value_heads != 1)
    fail("config.json: num_key_value_heads is {}; DeepSeek-V4 has one shared key-value head", config.num_key_value_heads);
  c.q_lora_rank = positive(config, "q_lora_rank");
  c.sliding_window = positive(config, "sliding_window");
  c.o_groups = positive(config, "o_groups");
  c.o_lora_rank = positive(config, "o_lora_rank");
  if (config.num_attention_heads % c.o_groups != 0)
    fail("config.json: o_groups {} must divide num_attention_heads {}", c.o_groups, config.num_attention_heads);
  c.index_n_heads = positive(config, "index_n_heads");
  c.index_head_dim = positive(config, "index_head_dim");
  c.index_topk = positive(config, "index_topk");
  c.hc_mult = positive(config, "hc_mult");
  c.hc_sinkhorn_iters = positive(config, "hc_sinkhorn_iters");
  c.hc_eps = static_cast<float>(config.get_double("hc_eps", 1e-6));
  c.swiglu_limit = static_cast<float>(config.get_double("swiglu_limit", 0.0));
  c.main_rope = rope_table(config, "main", c.rope_dim);
  c.compress_rope = rope_table(config, "compress", c.rope_dim);
  return c;
}

DeepseekV4RowLayout DeepseekV4Config::row_layout(const DeepseekV4LayerPlan& layer) const {
  DeepseekV4RowLayout row{.width = head_dim};
  if (layer.attention == DeepseekV4AttentionKind::kSliding) return row;
  // CSA projects two series (A and B) per token, for its compressor and for its indexer's.
  const int64_t series = layer.attention == DeepseekV4AttentionKind::kCompressedSparse ? 2 : 1;
  row.compressor_kv = head_dim;
  row.compressor_gate = row.compressor_kv + series * head_dim;
  row.entry = row.compressor_gate + series * head_dim;
  row.width = row.entry + head_dim;
  if (layer.attention == DeepseekV4AttentionKind::kHeavilyCompressed) return row;
  row.indexer_kv = row.width;
  row.indexer_gate = row.indexer_kv + 2 * index_head_dim;
  row.indexer_entry = row.indexer_gate + 2 * index_head_dim;
  row.width = row.indexer_entry + index_head_dim;
  return row;
}

int64_t DeepseekV4Config::max_row_width() const {
  int64_t width = 0;
  for (const DeepseekV4LayerPlan& layer : layers) width = std::max(width, row_layout(layer).width);
  return width;
}

}  // namespace strata
