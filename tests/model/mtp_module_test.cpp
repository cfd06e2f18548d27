// The multi-token-prediction module of Qwen3-Next (MoE) and Qwen3.5 (dense) checkpoints against
// scripts/fixtures/make_mtp_fixture.py's torch reference, on the target's hidden states as the
// target runner keeps them (f32 CPU, within 2e-3); fed in two chunks it gives the same logits; rank
// 0 of a split target builds it whole; a checkpoint without mtp.* weights or an architecture
// without MTP layers is refused.
#include <gtest/gtest.h>

#include <cstring>

#include "strata/core/error.h"
#include "strata/engine/model_runner.h"
#include "strata/model/model_loader.h"
#include "strata/model/registry.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata {
namespace {

struct MtpReference {
  std::vector<int32_t> tokens;
  Tensor logits;  // [T - 1, vocab] f32: row t predicts token t + 2
};

MtpReference read_reference(const SafetensorsFile& file, int i) {
  const WeightInfo* tokens = file.find("tokens_" + std::to_string(i));
  const WeightInfo* logits = file.find("mtp_logits_" + std::to_string(i));
  MtpReference ref{.tokens = std::vector<int32_t>(tokens->shape.numel()),
                   .logits = Tensor::host(DType::kF32, logits->shape)};
  std::memcpy(ref.tokens.data(), tokens->data, ref.tokens.size() * sizeof(int32_t));
  std::memcpy(ref.logits.data(), logits->data, ref.logits.nbytes());
  return ref;
}

class MtpModule : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = test::fixture_path("hf/" + GetParam());
    target_ = load_model({.model_path = dir_}, *backend_);
    mtp_ = build_mtp_module(*target_.model, *target_.weights);
  }

  // The target's final-normed hidden states of `tokens` [T, hidden] (a host copy).
  Tensor target_hidden(const std::vector<int32_t>& tokens) {
    ModelRunner runner(*target_.model, *backend_, {.num_kv_blocks = 16, .keep_hidden_states = true});
    std::vector<int32_t> blocks;
    EXPECT_TRUE(runner.memory().reserve(blocks, static_cast<int64_t>(tokens.size())));
    int32_t slot = *runner.memory().acquire_slot();
    StepBatch step({{.seq_id = 0, .token_ids = tokens, .block_table = blocks, .ssm_slot = slot,
                     .logits = LogitsMode::kLast}}, runner.block_size());
    runner.execute(step);
    Tensor hidden = backend_->to_host(runner.last_hidden_states());
    runner.memory().free(blocks, slot);
    return hidden;
  }

  // `module`'s logits over `tokens` [1, T) on `hidden` rows [0, T - 1), fed in chunks at `cuts`.
  Tensor mtp_logits(const Model& module, const std::vector<int32_t>& tokens, const Tensor& hidden,
                    std::vector<int32_t> cuts) {
    ModelRunner runner(module, *backend_, {.num_kv_blocks = 16, .keep_hidden_states = true});
    const int32_t n = static_cast<int32_t>(tokens.size()) - 1;
    std::vector<int32_t> blocks;
    EXPECT_TRUE(runner.memory().reserve(blocks, n));
    Tensor out = Tensor::host(DType::kF32, {n, module.config().vocab_size});
    cuts.push_back(n);
    int32_t first = 0;
    for (int32_t end : cuts) {
      StepBatch step({{.seq_id = 0, .token_ids = {tokens.begin() + first + 1, tokens.begin() + end + 1},
                       .num_computed_tokens = first, .block_table = blocks, .logits = LogitsMode::kAll}},
                     runner.block_size());
      step.set_input_hidden_states(hidden.slice_rows(first, end));
      const Tensor logits = runner.execute(step);
      std::memcpy(out.slice_rows(first, end).data(), logits.data(), logits.nbytes());
      first = end;
    }
    int32_t no_slot = -1;
    runner.memory().free(blocks, no_slot);
    return out;
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  std::string dir_;
  LoadedModel target_;
  std::unique_ptr<Model> mtp_;
};

TEST_P(MtpModule, LogitsMatchTheTorchReference) {
  const SafetensorsFile file(dir_ + "/reference.safetensors");
  for (int i = 0; i < 3; ++i) {
    const MtpReference ref = read_reference(file, i);
    const Tensor hidden = target_hidden(ref.tokens);
    const int32_t n = static_cast<int32_t>(ref.tokens.size()) - 1;
    const Tensor whole = mtp_logits(*mtp_, ref.tokens, hidden.slice_rows(0, n), {});
    EXPECT_LT(test::max_abs_diff(whole, ref.logits), 2e-3f) << GetParam() << " prompt " << i;
    const Tensor chunked = mtp_logits(*mtp_, ref.tokens, hidden.slice_rows(0, n), {n / 3, n / 2});
    EXPECT_LT(test::max_abs_diff(chunked, whole), 1e-5f) << GetParam() << " prompt " << i << " chunked";
  }
}

// Rank 0 of a target split over 2 ranks builds the module whole: its layers, embedding and LM head
// (tied in qwen3_5_mtp) read unsplit, its logits those of the unsplit target's module, no
// communicator needed. A module read from rank 0's shard would hold half the heads and vocabulary.
TEST_P(MtpModule, ASplitTargetsModuleIsWholeOnRankZero) {
  const LoadedModel split = load_model({.model_path = dir_, .shard = {.rank = 0, .size = 2}}, *backend_);
  ASSERT_TRUE(split.model->parts().vocab.split());
  const LoadedModel module = load_mtp_module(split);
  ASSERT_NE(module.weights, nullptr);
  EXPECT_EQ(module.weights->shard().size, 1);
  ASSERT_FALSE(module.model->parts().vocab.split());
  EXPECT_EQ(module.model->parts().lm_head.dim(0), split.config.vocab_size);
  EXPECT_EQ(module.model->kv_cache_heads(), split.config.num_key_value_heads);
  const SafetensorsFile file(dir_ + "/reference.safetensors");
  const MtpReference ref = read_reference(file, 0);
  const int32_t n = static_cast<int32_t>(ref.tokens.size()) - 1;
  const Tensor hidden = target_hidden(ref.tokens).slice_rows(0, n);
  const Tensor whole = mtp_logits(*mtp_, ref.tokens, hidden, {});
  EXPECT_LT(test::max_abs_diff(mtp_logits(*module.model, ref.tokens, hidden, {}), whole), 1e-6f) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, MtpModule, ::testing::Values("qwen3_next_mtp", "qwen3_5_mtp"));

TEST(MtpModuleBuild, RefusesACheckpointWithoutMtpWeights) {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  const LoadedModel target = load_model({.model_path = test::fixture_path("hf/qwen3_next")}, *backend);
  try {
    build_mtp_module(*target.model, *target.weights);
    ADD_FAILURE() << "a checkpoint without mtp.* built an MTP module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mtp.*"), std::string::npos) << e.what();
  }
}

TEST(MtpModuleBuild, RefusesAnArchitectureWithoutMtpLayers) {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  const LoadedModel target = load_model({.model_path = test::fixture_path("hf/qwen3")}, *backend);
  EXPECT_THROW(build_mtp_module(*target.model, *target.weights), Error);
}

}  // namespace
}  // namespace strata
