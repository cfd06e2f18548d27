// ModelConfig: the common fields of a Hugging Face config.json (HF names kept), parsed
// once; architecture files read their own extra keys through the typed getters.
// Accepts both rope layouts: `rope_theta` + `rope_scaling`, and `rope_parameters`; a nested
// `text_config` (multimodal checkpoints) is read as the top level (`raw` holds it lifted).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/dtype.h"

namespace strata {

struct RopeConfig {
  std::string rope_type = "default";  // default, linear, llama3, yarn
  double rope_theta = 10000.0;
  double factor = 1.0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
  int64_t original_max_position_embeddings = 0;
  double beta_fast = 32.0;  // yarn
  double beta_slow = 1.0;   // yarn
  std::optional<double> attention_factor;  // yarn; default from factor (and mscale)
  std::optional<double> mscale, mscale_all_dim;  // yarn (DeepSeek)
  bool truncate = true;     // yarn: round the correction range to whole dimensions (gpt-oss: false)
  double partial_rotary_factor = 1.0;
};

// What a forward computes at the positions a step asks for: next-token logits, the final
// hidden states (embedding models) or a classifier's scores (`score.weight`, sequence
// classification and cross-encoders).
enum class ModelHead : uint8_t { kLanguageModel, kHiddenStates, kClassifier };
enum class PoolingType : uint8_t { kLast, kMean, kCls };

// A sentence-transformers Dense module, applied to a pooled embedding: activation(weight x + bias).
enum class DenseActivation : uint8_t { kIdentity, kTanh, kRelu, kSigmoid, kGelu };
struct PoolerDense {
  int64_t in_features = 0, out_features = 0;
  std::vector<float> weight;  // [out_features, in_features]
  std::vector<float> bias;    // [out_features], or empty
  DenseActivation activation = DenseActivation::kTanh;  // sentence-transformers' default
};

// How a pooling model (runner "pooling", vLLM's word) turns a prompt's per-token outputs into
// one vector; model/pooler_config.h fills it from flags, sentence-transformers files and
// config.json.
struct PoolerConfig {
  ModelHead head = ModelHead::kHiddenStates;
  PoolingType pooling_type = PoolingType::kLast;
  bool normalize = true;             // L2 normalisation of embeddings
  bool activation = true;            // classifiers: sigmoid (one label) or softmax over the scores
  int64_t num_labels = 0;            // classifiers: rows of score.weight
  std::vector<std::string> labels;   // classifiers: id2label by index
  bool matryoshka = false;           // requests may ask for fewer `dimensions`
  std::vector<int64_t> matryoshka_dimensions;  // the ones allowed; empty: any in [1, embedding size]
  std::vector<std::shared_ptr<const PoolerDense>> dense;  // embeddings: applied in order after pooling
  int64_t max_seq_length = 0;        // sentence_bert_config.json's limit on input tokens; 0: none

  // The width of an embedding: the last Dense module's, else the model's hidden size.
  int64_t embedding_size(int64_t hidden_size) const { return dense.empty() ? hidden_size : dense.back()->out_features; }
};

struct ModelConfig {
  nlohmann::json raw;
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // hidden_size / num_attention_heads when absent
  std::string hidden_act = "silu";
  double rms_norm_eps = 1e-6;
  int64_t max_position_embeddings = 4096;
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  DType dtype = DType::kBF16;  // `dtype` or `torch_dtype`
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
  RopeConfig rope;
  std::optional<PoolerConfig> pooler;  // set (by the loader): a pooling model, nothing sampled

  ModelHead head() const { return pooler ? pooler->head : ModelHead::kLanguageModel; }

  static ModelConfig from_json(const nlohmann::json& json);
  static ModelConfig from_file(const std::string& path);

  bool has(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> get_int_list(const std::string& key) const;
  std::vector<std::string> get_string_list(const std::string& key) const;
  // Required keys: missing or mistyped keys throw an Error naming the key.
  int64_t require_int(const std::string& key) const;
  // The rotary parameters of layers of one `layer_types` kind (Gemma 3: sliding_attention,
  // full_attention): rope_parameters[layer_type] when transformers 5 nests them, else
  // rope_local_base_freq for sliding layers (older Gemma 3 configs), else `rope`.
  RopeConfig rope_for_layer_type(const std::string& layer_type) const;
};

// Parses the json value HF writes for floats (numbers, or {"__float__": "Infinity"}).
double json_to_double(const nlohmann::json& value);

}  // namespace strata
