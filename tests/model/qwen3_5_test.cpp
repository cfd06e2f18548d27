// Qwen3.5 beyond its fixtures' logits (fixture_test.cpp): dummy weights take the layout the
// config names (multimodal: model.language_model.*), the checkpoint's own tensors give the same
// model, and what transformers' Qwen3.5 never builds is refused at build with the key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "test_support.h"

namespace strata::test {
namespace {

// The fixtures' layer_types: DeltaNet, attention, DeltaNet, attention.
std::vector<std::string> plan_of(const std::string& ffn) {
  return {"gated_deltanet + " + ffn, "gated attention + " + ffn, "gated_deltanet + " + ffn,
          "gated attention + " + ffn};
}

TEST(Qwen35, DummyWeightsBuildTheCheckpointsModel) {
  auto cpu = make_cpu_backend(1);
  for (const auto& [name, ffn] : {std::pair{"qwen3_5", "mlp"}, std::pair{"qwen3_5_moe_text", "moe"}}) {
    const std::string dir = fixture_path(std::string("hf/") + name);
    const LoadedModel real = load_model({.model_path = dir}, *cpu);
    const LoadedModel dummy = load_model({.model_path = dir, .load_format = LoadFormat::kDummy}, *cpu);
    EXPECT_EQ(real.model->layer_plan(), plan_of(ffn)) << name;
    EXPECT_EQ(dummy.model->layer_plan(), plan_of(ffn)) << name;
    EXPECT_EQ(dummy.weights->num_parameters(), real.weights->num_parameters()) << name;
  }
}

// Qwen3_5MoeForConditionalGeneration's config: the MoE text config nested under text_config.
TEST(Qwen35, MultimodalMoeConfigBuildsUnderTheLanguageModel) {
  std::ifstream in(fixture_path("hf/qwen3_5_moe_text/config.json"));
  const nlohmann::json text = nlohmann::json::parse(in);
  const nlohmann::json config = {{"model_type", "qwen3_5_moe"}, {"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
                                 {"tie_word_embeddings", false}, {"text_config", text},
                                 {"vision_config", {{"depth", 1}}}};
  const std::string dir = temp_dir() + "/qwen3_5_moe_multimodal";
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/config.json", config.dump(2));
  auto cpu = make_cpu_backend(1);
  const LoadedModel dummy = load_model({.model_path = dir, .load_format = LoadFormat::kDummy}, *cpu);
  const LoadedModel text_only = load_model({.model_path = fixture_path("hf/qwen3_5_moe_text")}, *cpu);
  EXPECT_EQ(dummy.model->layer_plan(), plan_of("moe"));
  EXPECT_EQ(dummy.weights->num_parameters(), text_only.weights->num_parameters());
}

// transformers' Qwen3.5 attention always gates its output; a config that says otherwise is not
// a model this architecture runs.
TEST(Qwen35, AttentionWithoutOutputGateIsRefused) {
  std::ifstream in(fixture_path("hf/qwen3_5/config.json"));
  nlohmann::json config = nlohmann::json::parse(in);
  config["text_config"]["attn_output_gate"] = false;
  const std::string dir = temp_dir() + "/qwen3_5_no_output_gate";
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/config.json", config.dump(2));
  auto cpu = make_cpu_backend(1);
  try {
    load_model({.model_path = dir, .load_format = LoadFormat::kDummy}, *cpu);
    FAIL() << "built a Qwen3.5 model without the attention output gate";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attn_output_gate"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::test
