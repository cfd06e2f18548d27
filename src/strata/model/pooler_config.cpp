#include "strata/model/pooler_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "strata/core/error.h"
#include "strata/model/registry.h"
#include "strata/model/sentence_dense.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::optional<Json> read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  Json json = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) fail("'{}' is not valid JSON", path.string());
  return json;
}

std::string first_architecture(const ModelConfig& config) {
  const std::vector<std::string> names = config.get_string_list("architectures");
  return names.empty() ? std::string() : names.front();
}

// What sentence-transformers' files say: the pooling mode, Dense modules and whether a Normalize module follows.
struct SentenceTransformers {
  std::optional<PoolingType> pooling_type;
  std::vector<std::shared_ptr<const PoolerDense>> dense;
  bool normalize = false;
  int64_t max_seq_length = 0;  // sentence_bert_config.json's; 0: none
};

// The Pooling module's config.json: `pooling_mode` (sentence-transformers 5 and later) or the older
// pooling_mode_* flags.
PoolingType read_pooling_mode(const Json& pooling, const std::string& file) {
  const std::string mode = pooling.value("pooling_mode", "");
  if (mode == "lasttoken" || pooling.value("pooling_mode_lasttoken", false)) return PoolingType::kLast;
  if (mode == "mean" || pooling.value("pooling_mode_mean_tokens", false)) return PoolingType::kMean;
  if (mode == "cls" || pooling.value("pooling_mode_cls_token", false)) return PoolingType::kCls;
  fail("{}: only last-token, mean and CLS pooling are supported", file);
}

std::optional<SentenceTransformers> read_sentence_transformers(const std::string& model_path) {
  if (!fs::is_directory(model_path)) return std::nullopt;
  const std::optional<Json> modules = read_json_file(fs::path(model_path) / "modules.json");
  if (!modules) return std::nullopt;
  if (!modules->is_array()) fail("{}/modules.json must be a list of modules", model_path);
  SentenceTransformers st;
  const fs::path st_config = fs::path(model_path) / "sentence_bert_config.json";
  if (const std::optional<Json> config = read_json_file(st_config); config && config->contains("max_seq_length")) {
    const Json& limit = (*config)["max_seq_length"];
    if (!limit.is_null() && (!limit.is_number_integer() || limit.get<int64_t>() < 1))
      fail("{}: max_seq_length must be a positive integer, got {}", st_config.string(), limit.dump());
    if (!limit.is_null()) st.max_seq_length = limit.get<int64_t>();
  }
  for (const Json& module : *modules) {
    const std::string type = module.value("type", ""), path = module.value("path", "");
    if (type.ends_with(".Normalize")) {
      st.normalize = true;
    } else if (type.ends_with(".Pooling")) {
      const fs::path file = fs::path(model_path) / path / "config.json";
      const std::optional<Json> pooling = read_json_file(file);
      if (!pooling) fail("modules.json names a Pooling module, but {} is missing", file.string());
      st.pooling_type = read_pooling_mode(*pooling, file.string());
    } else if (type.ends_with(".Dense")) {
      const std::string dir = (fs::path(model_path) / path).string();
      st.dense.push_back(std::make_shared<const PoolerDense>(load_sentence_dense(dir)));
    } else if (!type.ends_with(".Transformer") && !type.empty()) {
      fail("{}/modules.json: the sentence-transformers module '{}' is not supported (only Transformer, Pooling, "
           "Dense and Normalize)", model_path, type);
    }
  }
  return st;
}

// The classifier's labels: id2label (HF keeps num_labels implicit in it), else num_labels, else 2 as HF does.
std::vector<std::string> classifier_labels(const ModelConfig& config) {
  std::vector<std::string> labels;
  if (config.raw.contains("id2label") && config.raw["id2label"].is_object()) {
    const Json& id2label = config.raw["id2label"];
    labels.resize(id2label.size());
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string key = std::to_string(i);
      if (!id2label.contains(key) || !id2label[key].is_string())
        fail("config.json: id2label must map \"0\"..\"{}\" to label names", labels.size() - 1);
      labels[i] = id2label[key].get<std::string>();
    }
  }
  if (labels.empty())
    for (int64_t i = 0; i < config.get_int("num_labels", 2); ++i) labels.push_back("LABEL_" + std::to_string(i));
  return labels;
}

void apply_pooler_flag(const std::string& text, PoolerConfig& pooler) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    fail("--pooler-config takes a JSON object such as '{{\"pooling_type\": \"MEAN\", \"normalize\": true}}', got '{}'",
         text);
  for (const auto& [key, value] : json.items()) {
    if (key == "pooling_type" && value.is_string()) {
      const std::optional<PoolingType> type = parse_pooling_type(value.get<std::string>());
      if (!type) fail("--pooler-config: pooling_type '{}' is not supported; use LAST, MEAN or CLS", value.get<std::string>());
      pooler.pooling_type = *type;
    } else if ((key == "normalize" || key == "activation") && value.is_boolean()) {
      (key == "normalize" ? pooler.normalize : pooler.activation) = value.get<bool>();
    } else {
      fail("--pooler-config: '{}' is not supported here (takes pooling_type LAST|MEAN|CLS, normalize and activation "
           "as booleans)", key);
    }
  }
}

// The runner and head the flags and the checkpoint ask for; nullopt: generate.
std::optional<ModelHead> resolve_head(const std::string& model_path, const ModelConfig& config,
                                      const PoolingFlags& flags) {
  const std::string arch = first_architecture(config);
  const bool classifier_arch = arch.ends_with("ForSequenceClassification");
  std::optional<ModelHead> by_task;
  if (flags.task == "embed") by_task = ModelHead::kHiddenStates;
  else if (flags.task == "classify" || flags.task == "score") by_task = ModelHead::kClassifier;
  else if (!flags.task.empty() && flags.task != "generate")
    fail("--task '{}' is not supported; use embed, classify, score or generate", flags.task);
  if (flags.runner != "auto" && flags.runner != "generate" && flags.runner != "pooling")
    fail("--runner '{}' is not supported; use auto, generate or pooling", flags.runner);
  const bool wants_generate = flags.runner == "generate" || flags.task == "generate";
  if (wants_generate && (by_task || flags.runner == "pooling" || !flags.pooler_config.empty()))
    fail("--runner generate / --task generate contradicts --runner pooling, --task {} or --pooler-config; give one",
         flags.task.empty() ? "pooling" : flags.task);
  if (wants_generate) return std::nullopt;
  const bool pooling = flags.runner == "pooling" || by_task || !flags.pooler_config.empty() || classifier_arch ||
                       (arch.ends_with("Model") && !arch.ends_with("LMHeadModel")) ||
                       (fs::is_directory(model_path) && fs::exists(fs::path(model_path) / "modules.json"));
  if (!pooling) return std::nullopt;
  if (by_task) return by_task;
  return classifier_arch ? ModelHead::kClassifier : ModelHead::kHiddenStates;
}

// Each Dense module must take what the one before it gives (the first: the hidden states).
void check_dense_chain(const std::vector<std::shared_ptr<const PoolerDense>>& dense, int64_t hidden_size,
                       const std::string& model_path) {
  int64_t width = hidden_size;
  for (const auto& module : dense) {
    if (module->in_features != width)
      fail("{}: a Dense module takes in_features {}, but its input has {} values (hidden_size or the previous "
           "Dense module's out_features)", model_path, module->in_features, width);
    width = module->out_features;
  }
}

}  // namespace

std::optional<PoolingType> parse_pooling_type(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper == "LAST") return PoolingType::kLast;
  if (upper == "MEAN") return PoolingType::kMean;
  if (upper == "CLS") return PoolingType::kCls;
  return std::nullopt;
}

const char* pooling_type_name(PoolingType type) {
  switch (type) {
    case PoolingType::kLast: return "LAST";
    case PoolingType::kMean: return "MEAN";
    case PoolingType::kCls: return "CLS";
  }
  return "";
}

const char* model_task_name(const ModelConfig& config) {
  switch (config.head()) {
    case ModelHead::kHiddenStates: return "embed";
    case ModelHead::kClassifier: return "classify";
    case ModelHead::kLanguageModel: break;
  }
  return "generate";
}

std::optional<PoolerConfig> resolve_pooler_config(const std::string& model_path, const ModelConfig& config,
                                                  const PoolingFlags& flags) {
  const std::optional<ModelHead> head = resolve_head(model_path, config, flags);
  if (!head) return std::nullopt;
  PoolerConfig pooler{.head = *head, .pooling_type = default_pooling_type(config.model_type)};
  if (*head == ModelHead::kClassifier) {
    pooler.normalize = false;
    pooler.labels = classifier_labels(config);
    pooler.num_labels = static_cast<int64_t>(pooler.labels.size());
  } else if (const std::optional<SentenceTransformers> st = read_sentence_transformers(model_path)) {
    pooler.pooling_type = st->pooling_type.value_or(pooler.pooling_type);
    pooler.normalize = st->normalize;
    pooler.dense = st->dense;
    pooler.max_seq_length = st->max_seq_length;
    check_dense_chain(pooler.dense, config.hidden_size, model_path);
  }
  pooler.matryoshka_dimensions = config.get_int_list("matryoshka_dimensions");
  pooler.matryoshka = config.get_bool("is_matryoshka", false) || !pooler.matryoshka_dimensions.empty();
  if (!flags.pooler_config.empty()) apply_pooler_flag(flags.pooler_config, pooler);
  return pooler;
}

}  // namespace strata
