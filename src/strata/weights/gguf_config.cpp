#include "strata/weights/gguf_config.h"

#include <cstdlib>

#include "strata/core/error.h"

namespace strata {

namespace {

// GGUF stores f32: 1e-5 arrives as 9.99999974738e-06. Print the shortest decimal that
// rounds back to the same f32, as config.json would have it.
double shortest_f32(double value) {
  const float f = static_cast<float>(value);
  for (int digits = 1; digits < 10; ++digits) {
    const double candidate = std::strtod(fmt::format("{:.{}g}", f, digits).c_str(), nullptr);
    if (static_cast<float>(candidate) == f) return candidate;
  }
  return f;
}

int64_t positive(const GgufFile& file, const std::string& key, int64_t value) {
  if (value <= 0) fail("{}: metadata key '{}' = {} must be positive", file.path(), key, value);
  return value;
}

std::string hf_architecture(std::string_view arch) {
  if (arch == "llama") return "LlamaForCausalLM";
  if (arch == "qwen2") return "Qwen2ForCausalLM";
  if (arch == "qwen3moe") return "Qwen3MoeForCausalLM";
  return "Qwen3ForCausalLM";
}

int64_t vocab_size(const GgufFile& file, const std::string& arch) {
  if (file.has(arch + ".vocab_size")) return positive(file, arch + ".vocab_size", file.get_int(arch + ".vocab_size"));
  if (file.has("tokenizer.ggml.tokens")) {
    return static_cast<int64_t>(file.get_string_array("tokenizer.ggml.tokens").size());
  }
  const GgufTensorInfo* embd = file.find_tensor("token_embd.weight");
  if (!embd || embd->shape.rank != 2) {
    fail("{}: cannot tell the vocabulary size: no {}.vocab_size, tokenizer.ggml.tokens or token_embd.weight",
         file.path(), arch);
  }
  return embd->shape[0];
}

void add_rope_scaling(const GgufFile& file, const std::string& arch, nlohmann::json& config) {
  const std::string type = file.get_string(arch + ".rope.scaling.type", "none");
  if (type == "none") return;
  nlohmann::json scaling = {{"rope_type", type},
                            {"factor", shortest_f32(file.get_float(arch + ".rope.scaling.factor"))}};
  const std::string original = arch + ".rope.scaling.original_context_length";
  if (file.has(original)) scaling["original_max_position_embeddings"] = file.get_int(original);
  config["rope_scaling"] = scaling;
}

// Qwen3-MoE: every layer sparse, top-k probabilities renormalised (as llama.cpp runs it).
void add_experts(const GgufFile& file, const std::string& arch, nlohmann::json& config) {
  const std::string count = arch + ".expert_count", used = arch + ".expert_used_count",
                    ffn = arch + ".expert_feed_forward_length";
  config["num_experts"] = positive(file, count, file.get_int(count));
  config["num_experts_per_tok"] = positive(file, used, file.get_int(used));
  config["moe_intermediate_size"] = positive(file, ffn, file.get_int(ffn));
  config["norm_topk_prob"] = true;
  config["decoder_sparse_step"] = 1;
  config["mlp_only_layers"] = nlohmann::json::array();
}

}  // namespace

bool gguf_architecture_supported(std::string_view arch) {
  return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "qwen3moe";
}

nlohmann::json gguf_to_hf_config(const GgufFile& file) {
  const std::string arch = file.get_string("general.architecture");
  if (!gguf_architecture_supported(arch)) {
    fail("{}: GGUF architecture '{}' is not supported (llama, qwen2, qwen3, qwen3moe)", file.path(), arch);
  }
  auto key = [&](const char* name) { return arch + "." + name; };
  const int64_t hidden = positive(file, key("embedding_length"), file.get_int(key("embedding_length")));
  const int64_t heads = positive(file, key("attention.head_count"), file.get_int(key("attention.head_count")));
  const int64_t kv_heads = positive(file, key("attention.head_count_kv"), file.get_int(key("attention.head_count_kv"), heads));
  if (heads % kv_heads != 0) {
    fail("{}: {} = {} is not a multiple of {} = {}", file.path(), key("attention.head_count"), heads,
         key("attention.head_count_kv"), kv_heads);
  }
  nlohmann::json config = {
      {"model_type", arch == "qwen3moe" ? "qwen3_moe" : arch},
      {"architectures", {hf_architecture(arch)}},
      {"hidden_size", hidden},
      {"intermediate_size", positive(file, key("feed_forward_length"), file.get_int(key("feed_forward_length")))},
      {"num_hidden_layers", positive(file, key("block_count"), file.get_int(key("block_count")))},
      {"num_attention_heads", heads},
      {"num_key_value_heads", kv_heads},
      {"head_dim", positive(file, key("attention.key_length"), file.get_int(key("attention.key_length"), hidden / heads))},
      {"hidden_act", "silu"},
      {"rms_norm_eps", shortest_f32(file.get_float(key("attention.layer_norm_rms_epsilon")))},
      {"rope_theta", shortest_f32(file.get_float(key("rope.freq_base"), 10000.0))},
      {"max_position_embeddings", positive(file, key("context_length"), file.get_int(key("context_length")))},
      {"tie_word_embeddings", file.find_tensor("output.weight") == nullptr},
      {"attention_bias", file.find_tensor("blk.0.attn_q.bias") != nullptr},
  };
  config["vocab_size"] = vocab_size(file, arch);
  if (file.has("tokenizer.ggml.bos_token_id")) config["bos_token_id"] = file.get_int("tokenizer.ggml.bos_token_id");
  if (file.has("tokenizer.ggml.eos_token_id")) config["eos_token_id"] = file.get_int("tokenizer.ggml.eos_token_id");
  add_rope_scaling(file, arch, config);
  if (arch == "qwen3moe") add_experts(file, arch, config);
  return config;
}

}  // namespace strata
