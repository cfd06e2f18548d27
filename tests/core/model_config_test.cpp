// config.json parsing: both rope layouts, head_dim absent or present, tied embeddings,
// eos lists, HF's {"__float__": "Infinity"}, a multimodal text_config, and clear errors.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/core/model_config.h"

namespace strata {
namespace {

nlohmann::json base() {
  return {{"model_type", "llama"}, {"vocab_size", 100}, {"hidden_size", 64}, {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"intermediate_size", 128}};
}

TEST(ModelConfig, OldLayoutRopeThetaAndRopeScaling) {
  nlohmann::json j = base();
  j["rope_theta"] = 500000.0;
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  j["torch_dtype"] = "float16";
  const ModelConfig c = ModelConfig::from_json(j);
  EXPECT_EQ(c.rope.rope_type, "llama3");
  EXPECT_EQ(c.rope.rope_theta, 500000.0);
  EXPECT_EQ(c.rope.factor, 8.0);
  EXPECT_EQ(c.rope.original_max_position_embeddings, 8192);
  EXPECT_EQ(c.dtype, DType::kF16);
  EXPECT_EQ(c.head_dim, 16);             // hidden_size / num_attention_heads
  EXPECT_EQ(c.num_key_value_heads, 4);   // defaults to num_attention_heads
}

TEST(ModelConfig, NewLayoutRopeParameters) {
  nlohmann::json j = base();
  j["head_dim"] = 32;
  j["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 4.0},
                          {"partial_rotary_factor", 0.5}};
  j["dtype"] = "bfloat16";
  j["tie_word_embeddings"] = true;
  j["eos_token_id"] = nlohmann::json::array({5, 6});
  const ModelConfig c = ModelConfig::from_json(j);
  EXPECT_EQ(c.rope.rope_type, "yarn");
  EXPECT_EQ(c.rope.rope_theta, 1e6);
  EXPECT_EQ(c.rope.partial_rotary_factor, 0.5);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{5, 6}));
}

// Qwen3.5's ...ForConditionalGeneration: the text model's keys nest under text_config; the top
// level's keys sit beside them and win (transformers ties embeddings by the top level's flag).
TEST(ModelConfig, MultimodalTextConfigIsReadLifted) {
  nlohmann::json text = base();
  text["model_type"] = "qwen3_5_text";
  text["tie_word_embeddings"] = false;
  text["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1e7}, {"partial_rotary_factor", 0.25},
                             {"mrope_section", {11, 11, 10}}, {"mrope_interleaved", true}};
  const nlohmann::json j = {{"model_type", "qwen3_5"}, {"tie_word_embeddings", true}, {"dtype", "float32"},
                            {"text_config", text}, {"vision_config", {{"depth", 1}}}};
  const ModelConfig c = ModelConfig::from_json(j);
  EXPECT_EQ(c.model_type, "qwen3_5");
  EXPECT_EQ(c.vocab_size, 100);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.dtype, DType::kF32);
  EXPECT_EQ(c.rope.rope_theta, 1e7);
  EXPECT_EQ(c.rope.partial_rotary_factor, 0.25);
  EXPECT_TRUE(c.has("vision_config"));
  EXPECT_TRUE(c.has("text_config"));
}

TEST(ModelConfig, HfInfinityFloats) {
  nlohmann::json j = base();
  j["time_step_limit"] = nlohmann::json::array({0.0, {{"__float__", "Infinity"}}});
  const ModelConfig c = ModelConfig::from_json(j);
  EXPECT_TRUE(std::isinf(json_to_double(c.raw["time_step_limit"][1])));
}

TEST(ModelConfig, ErrorsNameTheKey) {
  nlohmann::json j = base();
  j.erase("model_type");
  EXPECT_THROW(ModelConfig::from_json(j), Error);
  j = base();
  j["hidden_size"] = "big";
  try {
    ModelConfig::from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hidden_size"), std::string::npos);
  }
  j = base();
  j["rope_scaling"] = {{"rope_type", "longrope"}};
  try {
    ModelConfig::from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("longrope"), std::string::npos);
  }
}

}  // namespace
}  // namespace strata
