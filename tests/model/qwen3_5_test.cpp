// Qwen3.5 beyond its fixtures' logits (fixture_test.cpp): dummy weights take the layout the
// config names (multimodal: model.language_model.*), the checkpoint's own tensors give the same
// model, experts stored per expert equal the fused ones, and what transformers' Qwen3.5 never
// builds is refused at build with the key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

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

using Tensors = std::vector<std::pair<std::string, Tensor>>;

// The MoE fixture under `config`, its tensors passed through `rewrite` (name and view in, what
// to write out), in a scratch folder `name`.
std::string rewritten_moe_fixture(const std::string& name, const nlohmann::json& config,
                                  const std::function<Tensors(const WeightInfo&)>& rewrite) {
  const std::string dir = temp_dir() + "/" + name;
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/config.json", config.dump(2));
  const SafetensorsFile file(fixture_path("hf/qwen3_5_moe_text/model.safetensors"));
  Tensors tensors;
  for (const WeightInfo& info : file.tensors())
    for (auto& tensor : rewrite(info)) tensors.push_back(std::move(tensor));
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

nlohmann::json moe_text_config() {
  std::ifstream in(fixture_path("hf/qwen3_5_moe_text/config.json"));
  return nlohmann::json::parse(in);
}

Tensor whole(const WeightInfo& info) {
  return Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape);
}

// Rows [begin, end) of matrix `index` of a [N, rows, cols] tensor in the file, as a view.
Tensor matrix_rows(const WeightInfo& info, int64_t index, int64_t begin, int64_t end) {
  const int64_t rows = info.shape[1], cols = info.shape[2], elem = dtype_bytes(info.dtype, 1);
  const auto* base = static_cast<const char*>(info.data) + ((index * rows + begin) * cols) * elem;
  return Tensor::view(const_cast<char*>(base), info.dtype, {end - begin, cols});
}

// Fused experts as transformers saves them: experts.<e>.{gate,up,down}_proj.weight.
Tensors per_expert(const WeightInfo& info) {
  const std::string experts = info.name.substr(0, info.name.rfind('.'));  // ...mlp.experts
  Tensors out;
  if (info.name.ends_with("experts.gate_up_proj")) {
    const int64_t inter = info.shape[1] / 2;
    for (int64_t e = 0; e < info.shape[0]; ++e) {
      out.emplace_back(fmt::format("{}.{}.gate_proj.weight", experts, e), matrix_rows(info, e, 0, inter));
      out.emplace_back(fmt::format("{}.{}.up_proj.weight", experts, e), matrix_rows(info, e, inter, 2 * inter));
    }
  } else if (info.name.ends_with("experts.down_proj")) {
    for (int64_t e = 0; e < info.shape[0]; ++e)
      out.emplace_back(fmt::format("{}.{}.down_proj.weight", experts, e), matrix_rows(info, e, 0, info.shape[1]));
  } else {
    out.emplace_back(info.name, whole(info));
  }
  return out;
}

// Qwen3_5MoeForConditionalGeneration's layout: model.language_model.*, no vision tensors (a
// checkpoint without them is read as text only).
Tensors multimodal(const WeightInfo& info) {
  Tensors out;
  if (info.name.starts_with("model.")) {
    out.emplace_back("model.language_model." + info.name.substr(6), whole(info));
  } else {
    out.emplace_back(info.name, whole(info));
  }
  return out;
}

// The rewritten checkpoint gives the fixture's model: the same logits as the fixture itself.
void expect_same_model_as_the_fixture(const std::string& dir) {
  Fixture fixture = load_fixture("qwen3_5_moe_text");
  auto cpu = make_cpu_backend(2);
  const LoadedModel rewritten = load_model({.model_path = dir}, *cpu);
  EXPECT_EQ(rewritten.model->layer_plan(), plan_of("moe"));
  ModelRunner a(*fixture.loaded.model, *fixture.backend, {}), b(*rewritten.model, *cpu, {});
  const FixtureSequence& seq = fixture.sequences[2];
  const int64_t rows = static_cast<int64_t>(seq.tokens.size());
  const Tensor got = run_sequence(b, seq.tokens, seq.prompt_len, 0);
  EXPECT_LT(max_abs_diff_rows(got, run_sequence(a, seq.tokens, seq.prompt_len, 0), 0, rows), 1e-4f);
  EXPECT_LT(max_abs_diff_rows(got, seq.logits, 0, rows), 2e-3f);
}

TEST(Qwen35, PerExpertTensorsGiveTheFusedExpertsModel) {
  expect_same_model_as_the_fixture(rewritten_moe_fixture("qwen3_5_moe_per_expert", moe_text_config(), per_expert));
}

// A tower of depth 1, width 32, patch 16, merge 2, into the MoE fixture's width 64.
const nlohmann::json kSmallVisionConfig = {{"depth", 1}, {"hidden_size", 32}, {"intermediate_size", 64},
                                           {"num_heads", 2}, {"patch_size", 16}, {"out_hidden_size", 64},
                                           {"num_position_embeddings", 16}};

// Qwen3_5MoeForConditionalGeneration: the MoE text config nested under text_config, its weights
// under model.language_model; dummy weights take that layout from the config alone.
TEST(Qwen35, MultimodalMoeLayoutGivesTheTextOnlyModel) {
  const nlohmann::json config = {{"model_type", "qwen3_5_moe"},
                                 {"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
                                 {"tie_word_embeddings", false},
                                 {"text_config", moe_text_config()},
                                 {"vision_config", kSmallVisionConfig}};
  const std::string dir = rewritten_moe_fixture("qwen3_5_moe_multimodal", config, multimodal);
  expect_same_model_as_the_fixture(dir);
  auto cpu = make_cpu_backend(1);
  const LoadedModel dummy = load_model({.model_path = dir, .load_format = LoadFormat::kDummy}, *cpu);
  const LoadedModel text_only = load_model({.model_path = fixture_path("hf/qwen3_5_moe_text")}, *cpu);
  EXPECT_EQ(dummy.model->layer_plan(), plan_of("moe"));
  ASSERT_NE(dummy.model->vision_tower(), nullptr);  // dummy weights follow the config
  // patch embedding, positions, one block (norms, qkv, proj, fc1, fc2), the merger (norm, fc1, fc2)
  const int64_t tower = 32 * 1536 + 32 + 16 * 32 + (4 * 32 + 96 * 32 + 96 + 32 * 32 + 32 + 64 * 32 + 64 + 32 * 64 + 32) +
                        (2 * 32 + 128 * 128 + 128 + 64 * 128 + 64);
  EXPECT_EQ(dummy.weights->num_parameters(), text_only.weights->num_parameters() + tower);
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
