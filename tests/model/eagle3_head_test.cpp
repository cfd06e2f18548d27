// An EAGLE-3 head for the llama fixture against scripts/fixtures/make_eagle3_fixture.py's torch
// reference (f32 CPU, within 2e-3): its logits over whole sequences on the target's auxiliary
// layers' states, and a chained step on its own pre-norm state; the default auxiliary layers; a
// head that does not fit its target (a missing folder, another hidden size, layers past the
// target's) is a strata::Error at start-up naming what to fix.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "model/eagle3_test_support.h"
#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata {
namespace {

Tensor reference_tensor(const SafetensorsFile& file, const std::string& name) {
  const WeightInfo* info = file.find(name);
  STRATA_CHECK(info != nullptr);
  Tensor out = Tensor::host(info->dtype, info->shape);
  std::memcpy(out.data(), info->data, out.nbytes());
  return out;
}

class Eagle3HeadModel : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = load_model({.model_path = test::fixture_path("hf/llama")}, *backend_);
    head_ = load_eagle3_head(head_dir_, *target_.model, *backend_);
  }

  // The error message of loading the head with `edit` applied to its config.json.
  std::string load_error(const std::function<void(nlohmann::json&)>& edit) {
    const std::filesystem::path dir = std::filesystem::path(test::temp_dir()) / "eagle3_head_edited";
    std::filesystem::create_directories(dir);
    nlohmann::json config = nlohmann::json::parse(std::ifstream(head_dir_ + "/config.json"));
    edit(config);
    std::ofstream(dir / "config.json") << config.dump();
    std::filesystem::copy_file(head_dir_ + "/model.safetensors", dir / "model.safetensors",
                               std::filesystem::copy_options::overwrite_existing);
    try {
      load_eagle3_head(dir.string(), *target_.model, *backend_);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  std::string head_dir_ = test::fixture_path("hf/llama_eagle3");
  LoadedModel target_, head_;
};

TEST_F(Eagle3HeadModel, LogitsMatchTheTorchReference) {
  const SafetensorsFile file(head_dir_ + "/reference.safetensors");
  for (int i = 0; i < 3; ++i) {
    const Tensor tokens = reference_tensor(file, "tokens_" + std::to_string(i));
    const std::vector<int32_t> ids(tokens.data_as<const int32_t>(), tokens.data_as<const int32_t>() + tokens.numel());
    test::Eagle3Harness harness(*target_.model, *head_.model, *backend_);
    const Tensor logits = harness.catch_up(ids);
    EXPECT_LT(test::max_abs_diff(logits, reference_tensor(file, "eagle3_logits_" + std::to_string(i))), 2e-3f) << i;
    const int32_t token = reference_tensor(file, "eagle3_chain_token_" + std::to_string(i)).data_as<const int32_t>()[0];
    const Tensor chained = harness.chain(token);
    EXPECT_LT(test::max_abs_diff(chained, reference_tensor(file, "eagle3_chain_logits_" + std::to_string(i))), 2e-3f)
        << i << " chained";
  }
}

TEST_F(Eagle3HeadModel, ReadsTheDefaultLayersAndMapsItsDraftVocabulary) {
  const Eagle3Head& parts = head_.model->parts().eagle3;
  EXPECT_EQ(parts.target_layers, (std::vector<int64_t>{0, 1, 2}));  // 2, L / 2, L - 3 for L = 3, ascending
  EXPECT_EQ(head_.model->output_width(), 256);
  ASSERT_EQ(parts.draft_to_target.size(), 256u);
  for (size_t i = 1; i < parts.draft_to_target.size(); ++i)
    EXPECT_LT(static_cast<int32_t>(i - 1) + parts.draft_to_target[i - 1], static_cast<int32_t>(i) + parts.draft_to_target[i]);
}

TEST_F(Eagle3HeadModel, ExplicitAuxiliaryLayersAreRead) {
  const std::filesystem::path dir = std::filesystem::path(test::temp_dir()) / "eagle3_head_layers";
  std::filesystem::create_directories(dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(head_dir_ + "/config.json"));
  config["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {2, 0, 1}}};
  std::ofstream(dir / "config.json") << config.dump();
  std::filesystem::copy_file(head_dir_ + "/model.safetensors", dir / "model.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  const LoadedModel head = load_eagle3_head(dir.string(), *target_.model, *backend_);
  EXPECT_EQ(head.model->parts().eagle3.target_layers, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(Eagle3HeadModel, AHeadThatDoesNotFitIsAClearError) {
  try {
    load_eagle3_head(test::temp_dir() + "/no_such_head", *target_.model, *backend_);
    ADD_FAILURE() << "a missing head loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a folder"), std::string::npos) << e.what();
  }
  std::string message = load_error([](nlohmann::json& c) { c["target_hidden_size"] = 64; });
  EXPECT_NE(message.find("hidden size 64"), std::string::npos) << message;
  message = load_error([](nlohmann::json& c) { c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {1, 2, 7}}}; });
  EXPECT_NE(message.find("must lie in [0, 3)"), std::string::npos) << message;
  message = load_error([](nlohmann::json& c) { c["vocab_size"] = 1024; });
  EXPECT_NE(message.find("vocab_size 1024"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
