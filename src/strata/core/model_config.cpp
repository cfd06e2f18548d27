#include "strata/core/model_config.h"

#include <cmath>
#include <fstream>
#include <limits>

#include "strata/core/error.h"

namespace strata {

double json_to_double(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_object() && value.contains("__float__")) {
    const std::string s = value["__float__"].get<std::string>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::nan("");
  }
  if (value.is_string()) return std::stod(value.get<std::string>());
  fail("expected a number, got {}", value.dump());
}

namespace {

DType parse_dtype(const std::string& name) {
  if (name == "float32") return DType::kF32;
  if (name == "float16") return DType::kF16;
  if (name == "bfloat16") return DType::kBF16;
  fail("config dtype '{}' is not supported; use float32, float16 or bfloat16", name);
}

RopeConfig parse_rope(const nlohmann::json& raw) {
  RopeConfig rope;
  // transformers 5 puts everything in rope_parameters; older configs use rope_theta +
  // rope_scaling (which may be null).
  nlohmann::json params = nlohmann::json::object();
  if (raw.contains("rope_scaling") && raw["rope_scaling"].is_object()) params = raw["rope_scaling"];
  if (raw.contains("rope_parameters") && raw["rope_parameters"].is_object()) {
    for (auto& [k, v] : raw["rope_parameters"].items()) params[k] = v;
  }
  if (raw.contains("rope_theta")) rope.rope_theta = json_to_double(raw["rope_theta"]);
  if (params.contains("rope_theta")) rope.rope_theta = json_to_double(params["rope_theta"]);
  if (params.contains("rope_type")) rope.rope_type = params["rope_type"].get<std::string>();
  else if (params.contains("type")) rope.rope_type = params["type"].get<std::string>();
  auto num = [&](const char* key, double& out) {
    if (params.contains(key) && !params[key].is_null()) out = json_to_double(params[key]);
  };
  num("factor", rope.factor);
  num("low_freq_factor", rope.low_freq_factor);
  num("high_freq_factor", rope.high_freq_factor);
  num("beta_fast", rope.beta_fast);
  num("beta_slow", rope.beta_slow);
  if (params.contains("original_max_position_embeddings"))
    rope.original_max_position_embeddings = params["original_max_position_embeddings"].get<int64_t>();
  if (params.contains("attention_factor") && !params["attention_factor"].is_null())
    rope.attention_factor = json_to_double(params["attention_factor"]);
  for (auto [key, field] : {std::pair{"mscale", &rope.mscale}, std::pair{"mscale_all_dim", &rope.mscale_all_dim}})
    if (params.contains(key) && !params[key].is_null()) *field = json_to_double(params[key]);
  if (params.contains("truncate") && params["truncate"].is_boolean()) rope.truncate = params["truncate"].get<bool>();
  if (raw.contains("partial_rotary_factor"))
    rope.partial_rotary_factor = json_to_double(raw["partial_rotary_factor"]);
  num("partial_rotary_factor", rope.partial_rotary_factor);
  static const char* kKnown[] = {"default", "linear", "llama3", "yarn"};
  bool known = false;
  for (const char* k : kKnown) known |= rope.rope_type == k;
  if (!known)
    fail("rope_type '{}' is not supported; supported: default, linear, llama3, yarn",
         rope.rope_type);
  return rope;
}

// Multimodal checkpoints (Qwen3.5's ...ForConditionalGeneration) nest the language model's
// settings under text_config, and speculators' EAGLE-3 heads their decoder's under
// transformer_layer_config: read them there, with the top level's keys beside them and winning
// (transformers ties the embeddings by the top level's tie_word_embeddings).
nlohmann::json with_text_config_lifted(const nlohmann::json& json) {
  for (const char* nested : {"text_config", "transformer_layer_config"}) {
    if (!json.contains(nested) || !json[nested].is_object()) continue;
    nlohmann::json lifted = json[nested];
    for (const auto& [key, value] : json.items()) lifted[key] = value;
    return lifted;
  }
  return json;
}

}  // namespace

RopeConfig ModelConfig::rope_for_layer_type(const std::string& layer_type) const {
  const nlohmann::json* params = raw.contains("rope_parameters") ? &raw["rope_parameters"] : nullptr;
  if (params != nullptr && params->is_object() && params->contains(layer_type) && (*params)[layer_type].is_object()) {
    nlohmann::json nested = nlohmann::json::object();
    nested["rope_parameters"] = (*params)[layer_type];
    if (raw.contains("partial_rotary_factor")) nested["partial_rotary_factor"] = raw["partial_rotary_factor"];
    return parse_rope(nested);
  }
  if (layer_type == "sliding_attention" && has("rope_local_base_freq")) {
    RopeConfig local;  // default rotary, no scaling
    local.rope_theta = get_double("rope_local_base_freq", 10000.0);
    local.partial_rotary_factor = rope.partial_rotary_factor;
    return local;
  }
  return rope;
}

ModelConfig ModelConfig::from_json(const nlohmann::json& top_level) {
  if (!top_level.is_object()) fail("config.json must hold a JSON object");
  const nlohmann::json json = with_text_config_lifted(top_level);
  ModelConfig c;
  c.raw = json;
  c.model_type = c.get_string("model_type", "");
  if (c.model_type.empty()) fail("config.json has no 'model_type'");
  c.vocab_size = c.get_int("vocab_size", 0);
  c.hidden_size = c.get_int("hidden_size", 0);
  c.intermediate_size = c.get_int("intermediate_size", 0);
  c.num_hidden_layers = c.get_int("num_hidden_layers", 0);
  // Nemotron-H derives its layer count from the block pattern.
  if (c.num_hidden_layers == 0 && c.has("layers_block_type"))
    c.num_hidden_layers = static_cast<int64_t>(c.get_string_list("layers_block_type").size());
  if (c.num_hidden_layers == 0 && c.has("hybrid_override_pattern"))
    c.num_hidden_layers = static_cast<int64_t>(c.get_string("hybrid_override_pattern", "").size());
  c.num_attention_heads = c.get_int("num_attention_heads", 0);
  c.num_key_value_heads = c.get_int("num_key_value_heads", c.num_attention_heads);
  c.head_dim = c.get_int("head_dim", 0);
  if (c.head_dim == 0 && c.num_attention_heads > 0) c.head_dim = c.hidden_size / c.num_attention_heads;
  c.hidden_act = c.get_string("hidden_act", "silu");
  c.rms_norm_eps = c.get_double("rms_norm_eps", c.get_double("layer_norm_epsilon", 1e-6));
  c.max_position_embeddings = c.get_int("max_position_embeddings", 4096);
  c.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
  c.attention_bias = c.get_bool("attention_bias", false);
  const std::string dtype = c.get_string("dtype", c.get_string("torch_dtype", "bfloat16"));
  c.dtype = parse_dtype(dtype);
  if (c.has("bos_token_id")) c.bos_token_id = c.get_int("bos_token_id", 0);
  c.eos_token_ids = c.get_int_list("eos_token_id");
  c.rope = parse_rope(json);
  if (c.vocab_size <= 0 || c.hidden_size <= 0 || c.num_hidden_layers <= 0)
    fail("config.json needs positive vocab_size, hidden_size and num_hidden_layers (got {}, {}, {})",
         c.vocab_size, c.hidden_size, c.num_hidden_layers);
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open config file '{}'", path);
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) fail("'{}' is not valid JSON", path);
  try {
    return from_json(json);
  } catch (const nlohmann::json::exception& e) {
    fail("'{}': a key has the wrong type: {}", path, e.what());
  }
}

bool ModelConfig::has(const std::string& key) const {
  return raw.contains(key) && !raw[key].is_null();
}

int64_t ModelConfig::get_int(const std::string& key, int64_t fallback) const {
  if (!has(key)) return fallback;
  if (!raw[key].is_number()) fail("config key '{}' must be a number, got {}", key, raw[key].dump());
  return raw[key].get<int64_t>();
}

double ModelConfig::get_double(const std::string& key, double fallback) const {
  return has(key) ? json_to_double(raw[key]) : fallback;
}

bool ModelConfig::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!raw[key].is_boolean()) fail("config key '{}' must be true or false", key);
  return raw[key].get<bool>();
}

std::string ModelConfig::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!raw[key].is_string()) fail("config key '{}' must be a string", key);
  return raw[key].get<std::string>();
}

std::vector<int64_t> ModelConfig::get_int_list(const std::string& key) const {
  if (!has(key)) return {};
  if (raw[key].is_number()) return {raw[key].get<int64_t>()};
  if (!raw[key].is_array()) fail("config key '{}' must be a number or a list", key);
  return raw[key].get<std::vector<int64_t>>();
}

std::vector<std::string> ModelConfig::get_string_list(const std::string& key) const {
  if (!has(key)) return {};
  if (!raw[key].is_array()) fail("config key '{}' must be a list of strings", key);
  return raw[key].get<std::vector<std::string>>();
}

int64_t ModelConfig::require_int(const std::string& key) const {
  if (!has(key)) fail("config.json of model_type '{}' needs key '{}'", model_type, key);
  return get_int(key, 0);
}

}  // namespace strata
