// EAGLE-3 heads of one and two layers for the llama fixture against make_eagle3_fixture.py's torch
// reference (f32 CPU within 2e-3; bf16 CUDA within 3e-2 relative L2): whole sequences on the target's
// auxiliary states and a chained step on the head's pre-norm state; alone on torch's target states
// (norm_before_residual too, within 2e-4); the default auxiliary layers; speculators' layout; a head
// that does not fit its target or its own config is a strata::Error at start-up naming the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "model/eagle3_test_support.h"
#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "strata/weights/safetensors.h"
#include "strata/weights/safetensors_writer.h"
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

  // The weights of the head in `source` (the one-layer head's when empty) in a folder of this test's
  // own, with `edit` applied to its config.json.
  std::string edited_head(const std::function<void(nlohmann::json&)>& edit, const std::string& name = "head",
                          const std::string& source = "") {
    const std::string from = source.empty() ? head_dir_ : source;
    const std::filesystem::path dir = std::filesystem::path(test::temp_dir()) / test::per_test_name(name);
    std::filesystem::create_directories(dir);
    nlohmann::json config = nlohmann::json::parse(std::ifstream(from + "/config.json"));
    edit(config);
    std::ofstream(dir / "config.json") << config.dump();
    std::filesystem::copy_file(from + "/model.safetensors", dir / "model.safetensors",
                               std::filesystem::copy_options::overwrite_existing);
    return dir.string();
  }

  // The error message of loading the head in `dir`.
  std::string load_error_of(const std::string& dir) {
    try {
      load_eagle3_head(dir, *target_.model, *backend_);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::string load_error(const std::function<void(nlohmann::json&)>& edit) { return load_error_of(edited_head(edit)); }

  // Each reference prompt's logits of the head in `dir` (and of it with norm_before_residual) on the
  // target states torch computed, within `tolerance` of torch's.
  void expect_close_on_reference_states(const std::string& dir, float tolerance) {
    const LoadedModel plain = load_eagle3_head(dir, *target_.model, *backend_);
    const LoadedModel normed = load_eagle3_head(
        edited_head([](nlohmann::json& c) { c["norm_before_residual"] = true; }, "normed", dir), *target_.model,
        *backend_);
    const SafetensorsFile file(dir + "/reference.safetensors");
    for (int i = 0; i < 3; ++i) {
      const std::string n = std::to_string(i);
      const Tensor tokens = reference_tensor(file, "tokens_" + n), aux = reference_tensor(file, "aux_" + n);
      const std::vector<int32_t> ids(tokens.data_as<const int32_t>(), tokens.data_as<const int32_t>() + tokens.numel());
      const Tensor got = test::Eagle3Harness(*target_.model, *plain.model, *backend_).catch_up_on(ids, aux);
      EXPECT_LT(test::max_abs_diff(got, reference_tensor(file, "eagle3_logits_" + n)), tolerance) << "prompt " << i;
      const Tensor with_norm = test::Eagle3Harness(*target_.model, *normed.model, *backend_).catch_up_on(ids, aux);
      EXPECT_LT(test::max_abs_diff(with_norm, reference_tensor(file, "eagle3_norm_before_residual_logits_" + n)),
                tolerance)
          << "prompt " << i << " norm_before_residual";
    }
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  std::string head_dir_ = test::fixture_path("hf/llama_eagle3");
  std::string two_layer_dir_ = test::fixture_path("hf/llama_eagle3_2layer");
  LoadedModel target_, head_;
};

// For each reference prompt: the logits of the head in fixture folder `head` on `backend` over the
// whole sequence and after one chained step, each beside the torch reference's ({got, want}, f32 host).
std::vector<std::pair<Tensor, Tensor>> logits_beside_reference(Backend& backend, const std::string& head_fixture) {
  const std::string dir = test::fixture_path("hf/" + head_fixture);
  const LoadedModel target = load_model({.model_path = test::fixture_path("hf/llama")}, backend);
  const LoadedModel head = load_eagle3_head(dir, *target.model, backend);
  const SafetensorsFile file(dir + "/reference.safetensors");
  std::vector<std::pair<Tensor, Tensor>> out;
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    const Tensor tokens = reference_tensor(file, "tokens_" + n);
    const std::vector<int32_t> ids(tokens.data_as<const int32_t>(), tokens.data_as<const int32_t>() + tokens.numel());
    test::Eagle3Harness harness(*target.model, *head.model, backend);
    out.emplace_back(harness.catch_up(ids), reference_tensor(file, "eagle3_logits_" + n));
    const int32_t token = reference_tensor(file, "eagle3_chain_token_" + n).data_as<const int32_t>()[0];
    out.emplace_back(harness.chain(token), reference_tensor(file, "eagle3_chain_logits_" + n));
  }
  return out;
}

void expect_logits_match_the_torch_reference(Backend& backend, const std::string& head_fixture) {
  const auto pairs = logits_beside_reference(backend, head_fixture);
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_LT(test::max_abs_diff(pairs[i].first, pairs[i].second), 2e-3f)
        << head_fixture << " prompt " << i / 2 << (i % 2 ? " chained" : "");
  }
}

TEST_F(Eagle3HeadModel, LogitsMatchTheTorchReference) {
  expect_logits_match_the_torch_reference(*backend_, "llama_eagle3");
}

// vLLM's multi-layer layout: layer 0 as in a one-layer head, layer 1 a plain pre-norm Llama layer
// over the stream; the chained state is the last layer's pre-norm output.
TEST_F(Eagle3HeadModel, ATwoLayerHeadMatchesTheTorchReference) {
  EXPECT_EQ(load_eagle3_head(two_layer_dir_, *target_.model, *backend_).model->num_layers(), 2);
  expect_logits_match_the_torch_reference(*backend_, "llama_eagle3_2layer");
}

// The head alone, on the target states torch computed: only its own arithmetic differs, so the
// logits agree far inside 2e-3 (the target's f32 forward accounts for most of the error above).
TEST_F(Eagle3HeadModel, OnTheReferenceStatesTheHeadMatchesClosely) {
  expect_close_on_reference_states(head_dir_, 2e-4f);
  expect_close_on_reference_states(two_layer_dir_, 2e-4f);
}

// bf16 weights and activations on the GPU: an error relative to the logits' size, as transformers'
// own bf16 forward makes it (about 1e-2).
TEST(CudaEagle3Head, LogitsMatchTheTorchReference) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible: CUDA EAGLE-3 tests skipped";
  for (const std::string head : {"llama_eagle3", "llama_eagle3_2layer"}) {
    const auto pairs = logits_beside_reference(*gpu, head);
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Tensor& got = pairs[i].first;
      const Tensor& want = pairs[i].second;
      double error = 0, norm = 0;
      for (int64_t j = 0; j < want.numel(); ++j) {
        const double d = got.data_as<const float>()[j] - want.data_as<const float>()[j];
        error += d * d;
        norm += static_cast<double>(want.data_as<const float>()[j]) * want.data_as<const float>()[j];
      }
      EXPECT_LT(std::sqrt(error / norm), 3e-2) << head << " prompt " << i / 2 << (i % 2 ? " chained" : "");
    }
  }
}

TEST_F(Eagle3HeadModel, ReadsTheDefaultLayersAndMapsItsDraftVocabulary) {
  const Eagle3Head& parts = head_.model->parts().eagle3;
  EXPECT_EQ(parts.target_layers, (std::vector<int64_t>{0, 1, 2}));  // 2, L / 2, L - 3 for L = 3, ascending
  EXPECT_EQ(head_.model->output_width(), 256);
  ASSERT_EQ(parts.draft_to_target.size(), 256u);
  const std::vector<int32_t>& d2t = parts.draft_to_target;
  for (int32_t i = 1; i < static_cast<int32_t>(d2t.size()); ++i) EXPECT_LT(i - 1 + d2t[i - 1], i + d2t[i]);
}

TEST_F(Eagle3HeadModel, ExplicitAuxiliaryLayersAreRead) {
  const std::string dir = edited_head([](nlohmann::json& c) {
    c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {2, 0, 1}}};
  });
  const LoadedModel head = load_eagle3_head(dir, *target_.model, *backend_);
  EXPECT_EQ(head.model->parts().eagle3.target_layers, (std::vector<int64_t>{0, 1, 2}));
}

// vLLM's converted heads nest the decoder's config under transformer_layer_config, and read
// norm_before_residual as true unless it says false: with false the head is the same one.
TEST_F(Eagle3HeadModel, ReadsTheSpeculatorsLayout) {
  auto speculators = [](std::optional<bool> norm_before_residual) {
    return [norm_before_residual](nlohmann::json& c) {
      nlohmann::json top = {{"architectures", {"Eagle3Speculator"}}, {"speculators_model_type", "eagle3"},
                            {"draft_vocab_size", c["draft_vocab_size"]}, {"target_hidden_size", 128},
                            {"speculators_config", {{"algorithm", "eagle3"}}}};
      c.erase("draft_vocab_size");
      c["architectures"] = {"LlamaForCausalLM"};
      top["transformer_layer_config"] = c;
      if (norm_before_residual) top["norm_before_residual"] = *norm_before_residual;
      c = top;
    };
  };
  const std::vector<int32_t> tokens{5, 9, 14, 3, 77, 5, 9, 200, 31, 8, 414, 62};
  const Tensor want = test::Eagle3Harness(*target_.model, *head_.model, *backend_).catch_up(tokens);
  const LoadedModel same = load_eagle3_head(edited_head(speculators(false), "false"), *target_.model, *backend_);
  EXPECT_EQ(test::max_abs_diff(test::Eagle3Harness(*target_.model, *same.model, *backend_).catch_up(tokens), want), 0.f);
  const LoadedModel flipped = load_eagle3_head(edited_head(speculators(std::nullopt), "default"), *target_.model, *backend_);
  EXPECT_GT(test::max_abs_diff(test::Eagle3Harness(*target_.model, *flipped.model, *backend_).catch_up(tokens), want),
            1e-3f);
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
  message = load_error([](nlohmann::json& c) {
    c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {1, 2, 7}}};
  });
  EXPECT_NE(message.find("must lie in [0, 3)"), std::string::npos) << message;
  message = load_error([](nlohmann::json& c) { c["vocab_size"] = 1024; });
  EXPECT_NE(message.find("vocab_size 1024"), std::string::npos) << message;
}

// A head's file and its num_hidden_layers must agree: a layer's weights missing, or more layers
// in the file than the config names, is an error naming the layer and the fix.
TEST_F(Eagle3HeadModel, AHeadMissingALayersWeightsIsAClearError) {
  const std::string dir = edited_head([](nlohmann::json&) {}, "no_layer_1", two_layer_dir_);
  const SafetensorsFile file(two_layer_dir_ + "/model.safetensors");
  std::vector<std::pair<std::string, Tensor>> kept;
  for (const WeightInfo& info : file.tensors())
    if (!info.name.starts_with("layers.1."))
      kept.emplace_back(info.name, Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape));
  write_safetensors(dir + "/model.safetensors", kept);
  std::string message = load_error_of(dir);
  EXPECT_NE(message.find("num_hidden_layers is 2"), std::string::npos) << message;
  EXPECT_NE(message.find("no weights under layers.1.*"), std::string::npos) << message;
  message = load_error_of(edited_head([](nlohmann::json& c) { c["num_hidden_layers"] = 1; }, "one", two_layer_dir_));
  EXPECT_NE(message.find("holds layers.1.*, past config.json's num_hidden_layers 1"), std::string::npos) << message;
  message = load_error([](nlohmann::json& c) { c["num_hidden_layers"] = 2; });  // midlayer.* names one layer only
  EXPECT_NE(message.find("no decoder layer (layers.0.*)"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
