// Qwen3.5 beyond its fixtures' logits (fixture_test.cpp): dummy weights take the layout the
// config names (multimodal: model.language_model.*), the checkpoint's own tensors give the same
// model, experts stored per expert equal the fused ones, and what transformers' Qwen3.5 never
// builds is refused at build with the key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/fixture_support.h"
#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "strata/weights/safetensors.h"
#include "strata/weights/safetensors_writer.h"
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
  const nlohmann::json config = {{"model_type", "qwen3_5_moe"},
                                 {"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
                                 {"tie_word_embeddings", false},
                                 {"text_config", text},
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

// Rows [begin, end) of matrix `index` of a [N, rows, cols] tensor in the file, as a view.
Tensor matrix_rows(const WeightInfo& info, int64_t index, int64_t begin, int64_t end) {
  const int64_t rows = info.shape[1], cols = info.shape[2], elem = dtype_bytes(info.dtype, 1);
  const auto* base = static_cast<const char*>(info.data) + ((index * rows + begin) * cols) * elem;
  return Tensor::view(const_cast<char*>(base), info.dtype, {end - begin, cols});
}

// The MoE fixture rewritten with experts.<e>.{gate,up,down}_proj.weight, as transformers saves them.
std::string per_expert_copy(const std::string& fixture) {
  const std::string dir = temp_dir() + "/qwen3_5_moe_per_expert";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(fixture + "/config.json", dir + "/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const SafetensorsFile file(fixture + "/model.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const WeightInfo& info : file.tensors()) {
    const std::string layer = info.name.substr(0, info.name.rfind('.'));  // ...mlp.experts
    if (info.name.ends_with("experts.gate_up_proj")) {
      const int64_t inter = info.shape[1] / 2;
      for (int64_t e = 0; e < info.shape[0]; ++e) {
        tensors.emplace_back(fmt::format("{}.{}.gate_proj.weight", layer, e), matrix_rows(info, e, 0, inter));
        tensors.emplace_back(fmt::format("{}.{}.up_proj.weight", layer, e), matrix_rows(info, e, inter, 2 * inter));
      }
    } else if (info.name.ends_with("experts.down_proj")) {
      for (int64_t e = 0; e < info.shape[0]; ++e)
        tensors.emplace_back(fmt::format("{}.{}.down_proj.weight", layer, e), matrix_rows(info, e, 0, info.shape[1]));
    } else {
      tensors.emplace_back(info.name, Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape));
    }
  }
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

TEST(Qwen35, PerExpertTensorsGiveTheFusedExpertsModel) {
  Fixture fused = load_fixture("qwen3_5_moe_text");
  auto cpu = make_cpu_backend(2);
  const LoadedModel per_expert = load_model({.model_path = per_expert_copy(fixture_path("hf/qwen3_5_moe_text"))}, *cpu);
  ModelRunner a(*fused.loaded.model, *fused.backend, {}), b(*per_expert.model, *cpu, {});
  const FixtureSequence& seq = fused.sequences[2];
  const Tensor want = run_sequence(a, seq.tokens, seq.prompt_len, 0);
  const Tensor got = run_sequence(b, seq.tokens, seq.prompt_len, 0);
  EXPECT_LT(max_abs_diff_rows(got, want, 0, static_cast<int64_t>(seq.tokens.size())), 1e-4f);
  EXPECT_LT(max_abs_diff_rows(got, seq.logits, 0, static_cast<int64_t>(seq.tokens.size())), 2e-3f);
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
