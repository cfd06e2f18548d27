// resolve_pooler_config: the runner and pooling from flags, sentence-transformers files and
// config.json, by vLLM's rules, and the errors for what cannot be served.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "strata/core/error.h"
#include "strata/model/pooler_config.h"
#include "strata/weights/safetensors_writer.h"
#include "test_support.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

ModelConfig config_with(const std::string& architecture, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json raw = {{"model_type", "qwen3"}, {"vocab_size", 512}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                        {"num_attention_heads", 4}, {"architectures", {architecture}}};
  raw.update(extra);
  return ModelConfig::from_json(raw);
}

// A folder holding sentence-transformers files: modules of these types, a pooling config.
std::string st_folder(const std::string& name, const std::vector<std::string>& modules, const std::string& mode) {
  const fs::path dir = fs::path(test::temp_dir()) / test::per_test_name(name);
  fs::remove_all(dir);  // an earlier run's modules (a Dense folder) must not linger
  fs::create_directories(dir / "1_Pooling");
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string path = modules[i] == "Pooling" ? "1_Pooling" : (modules[i] == "Dense" ? "2_Dense" : "");
    list.push_back({{"idx", i}, {"path", path}, {"type", "sentence_transformers.models." + modules[i]}});
  }
  std::ofstream(dir / "modules.json") << list.dump();
  std::ofstream(dir / "1_Pooling" / "config.json") << nlohmann::json{{mode, true}}.dump();
  return dir.string();
}

// A Dense module of `folder` (2_Dense/): its config.json, and linear.weight / linear.bias [out, in]
// in model.safetensors unless `weights` is false.
void write_dense(const std::string& folder, int64_t in, int64_t out, const std::string& activation, bool weights = true) {
  const fs::path dir = fs::path(folder) / "2_Dense";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << nlohmann::json{{"in_features", in}, {"out_features", out}, {"bias", true},
                                                       {"activation_function", activation}}.dump();
  if (weights)
    write_safetensors((dir / "model.safetensors").string(),
                      {{"linear.weight", test::random_f32({out, in}, 1)}, {"linear.bias", test::random_f32({out}, 2)}});
}

TEST(PoolerConfig, GenerativeCheckpointsGenerate) {
  EXPECT_FALSE(resolve_pooler_config("/nonexistent", config_with("Qwen3ForCausalLM"), {}).has_value());
  EXPECT_FALSE(resolve_pooler_config("/nonexistent", config_with("GPT2LMHeadModel"), {}).has_value());
}

TEST(PoolerConfig, ArchitecturesPickThePoolingRunner) {
  const std::optional<PoolerConfig> embed = resolve_pooler_config("/nonexistent", config_with("Qwen3Model"), {});
  ASSERT_TRUE(embed.has_value());
  EXPECT_EQ(embed->head, ModelHead::kHiddenStates);
  EXPECT_EQ(embed->pooling_type, PoolingType::kLast);
  EXPECT_TRUE(embed->normalize);
  EXPECT_FALSE(embed->matryoshka);
  const std::optional<PoolerConfig> classify = resolve_pooler_config(
      "/nonexistent", config_with("Qwen3ForSequenceClassification", {{"id2label", {{"0", "no"}, {"1", "yes"}}}}), {});
  ASSERT_TRUE(classify.has_value());
  EXPECT_EQ(classify->head, ModelHead::kClassifier);
  EXPECT_EQ(classify->num_labels, 2);
  EXPECT_EQ(classify->labels, (std::vector<std::string>{"no", "yes"}));
  EXPECT_FALSE(classify->normalize);
}

TEST(PoolerConfig, FlagsOverrideTheCheckpoint) {
  const ModelConfig causal = config_with("Qwen3ForCausalLM", {{"matryoshka_dimensions", {32, 64}}});
  const std::optional<PoolerConfig> p = resolve_pooler_config(
      "/nonexistent", causal, {.runner = "pooling", .pooler_config = R"({"pooling_type": "mean", "normalize": false})"});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pooling_type, PoolingType::kMean);
  EXPECT_FALSE(p->normalize);
  EXPECT_TRUE(p->matryoshka);
  EXPECT_EQ(p->matryoshka_dimensions, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(resolve_pooler_config("/nonexistent", causal, {.task = "embed"})->head, ModelHead::kHiddenStates);
  EXPECT_EQ(resolve_pooler_config("/nonexistent", causal, {.task = "score"})->head, ModelHead::kClassifier);
  EXPECT_FALSE(resolve_pooler_config("/nonexistent", config_with("Qwen3Model"), {.runner = "generate"}).has_value());
}

TEST(PoolerConfig, SentenceTransformersFiles) {
  const std::string mean = st_folder("mean", {"Transformer", "Pooling"}, "pooling_mode_mean_tokens");
  const std::optional<PoolerConfig> p = resolve_pooler_config(mean, config_with("Qwen3ForCausalLM"), {});
  ASSERT_TRUE(p.has_value()) << "modules.json makes it a pooling model";
  EXPECT_EQ(p->pooling_type, PoolingType::kMean);
  EXPECT_FALSE(p->normalize) << "no Normalize module";
  const std::string cls = st_folder("cls", {"Transformer", "Pooling", "Normalize"}, "pooling_mode_cls_token");
  EXPECT_EQ(resolve_pooler_config(cls, config_with("Qwen3ForCausalLM"), {})->pooling_type, PoolingType::kCls);
  EXPECT_TRUE(resolve_pooler_config(cls, config_with("Qwen3ForCausalLM"), {})->normalize);
  // sentence-transformers 5 writes one `pooling_mode` string.
  const fs::path modern = st_folder("modern", {"Transformer", "Pooling"}, "unused");
  std::ofstream(modern / "1_Pooling" / "config.json") << R"({"embedding_dimension": 64, "pooling_mode": "mean"})";
  EXPECT_EQ(resolve_pooler_config(modern.string(), config_with("Qwen3ForCausalLM"), {})->pooling_type, PoolingType::kMean);
}

TEST(PoolerConfig, BertPoolsClsUnlessTold) {
  nlohmann::json bert = {{"model_type", "bert"}};
  EXPECT_EQ(resolve_pooler_config("/nonexistent", config_with("BertModel", bert), {})->pooling_type, PoolingType::kCls);
  EXPECT_EQ(resolve_pooler_config("/nonexistent", config_with("BertForSequenceClassification", bert), {})->pooling_type,
            PoolingType::kCls);
  const std::string mean = st_folder("bert_mean", {"Transformer", "Pooling"}, "pooling_mode_mean_tokens");
  EXPECT_EQ(resolve_pooler_config(mean, config_with("BertModel", bert), {})->pooling_type, PoolingType::kMean);
}

TEST(PoolerConfig, RefusesWhatItCannotServe) {
  const ModelConfig causal = config_with("Qwen3ForCausalLM");
  const std::string dense = st_folder("dense", {"Transformer", "Pooling", "Dense"}, "pooling_mode_lasttoken");
  EXPECT_THROW(resolve_pooler_config(dense, causal, {}), Error) << "no 2_Dense/config.json";
  write_dense(dense, 64, 16, "torch.nn.modules.activation.Tanh", /*weights=*/false);
  EXPECT_THROW(resolve_pooler_config(dense, causal, {}), Error) << "weights only as pytorch_model.bin (or none)";
  write_dense(dense, 32, 16, "torch.nn.modules.activation.Tanh");
  EXPECT_THROW(resolve_pooler_config(dense, causal, {}), Error) << "in_features 32 after hidden states of 64";
  write_dense(dense, 64, 16, "torch.nn.modules.activation.Softplus");
  EXPECT_THROW(resolve_pooler_config(dense, causal, {}), Error) << "an activation sentence-transformers allows, not here";
  write_dense(dense, 64, 16, "torch.nn.modules.linear.Identity");
  const std::optional<PoolerConfig> ok = resolve_pooler_config(dense, causal, {});
  ASSERT_TRUE(ok.has_value());
  ASSERT_EQ(ok->dense.size(), 1u);
  EXPECT_EQ(ok->dense[0]->activation, DenseActivation::kIdentity);
  EXPECT_EQ(ok->embedding_size(64), 16);
  EXPECT_EQ(ok->dense[0]->bias.size(), 16u);
  const std::string max = st_folder("max", {"Transformer", "Pooling"}, "pooling_mode_max_tokens");
  EXPECT_THROW(resolve_pooler_config(max, causal, {}), Error);
  EXPECT_THROW(resolve_pooler_config("/nonexistent", causal, {.runner = "pooling", .pooler_config = "MEAN"}), Error);
  EXPECT_THROW(resolve_pooler_config("/nonexistent", causal, {.runner = "pooling", .pooler_config = R"({"pooling_type": "MAX"})"}),
               Error);
  EXPECT_THROW(resolve_pooler_config("/nonexistent", causal, {.runner = "pooling", .pooler_config = R"({"dimensions": 3})"}),
               Error);
  EXPECT_THROW(resolve_pooler_config("/nonexistent", causal, {.runner = "generate", .task = "embed"}), Error);
  EXPECT_THROW(resolve_pooler_config("/nonexistent", causal, {.task = "reward"}), Error);
}

}  // namespace
}  // namespace strata
