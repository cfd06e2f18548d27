// logit_bias through the engine, on the CPU and (when one is visible) the GPU: -100 on the
// greedy first token bans it, +100 on another token forces it, for every choice of an n > 1
// request (which share the first logits row: biased once, not once per choice); out-of-range
// values are refused at submit. The model is a fixture kept in the repo, so the GPU run
// needs nothing beside it.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "engine/engine_test_support.h"

namespace strata {
namespace {

using Choice = test::ChoiceResult;

class LogitBiasTest : public ::testing::TestWithParam<bool> {  // on the GPU
 protected:
  void SetUp() override {
    backend_ = GetParam() ? make_cuda_backend(0) : make_cpu_backend(2);
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible";
    loaded_ = load_model({.model_path = test::fixture_path("hf/gemma3_global")}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
    runner_ = std::make_unique<ModelRunner>(*loaded_.model, *backend_, RunnerOptions{.num_kv_blocks = 64});
    engine_ = std::make_unique<test::CheckedEngine>(*runner_, *tokenizer_, std::vector<int32_t>{},
                                                    EngineOptions{.max_num_batched_tokens = 64, .max_num_seqs = 4});
  }
  void TearDown() override { engine_.reset(); }

  std::vector<Choice> run(std::vector<LogitBias> bias, int32_t n = 1) {
    GenerationRequest r{.prompt_ids = test::engine_prompt(3, 9), .sampling = {.temperature = 0}, .max_tokens = 3, .n = n};
    r.sampling.logit_bias = std::move(bias);
    return test::collect_choices(*engine_->submit(std::move(r)), n);
  }

  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<test::CheckedEngine> engine_;
};

TEST_P(LogitBiasTest, MinusOneHundredBansAndPlusOneHundredForces) {
  const int32_t greedy = run({}).at(0).tokens.at(0);
  const int32_t other = greedy == 7 ? 8 : 7;
  EXPECT_NE(run({{.token_id = greedy, .bias = -100.0f}}).at(0).tokens.at(0), greedy);
  for (const Choice& c : run({{.token_id = other, .bias = 100.0f}}, /*n=*/3)) EXPECT_EQ(c.tokens.at(0), other);
  // +100 on both: the model's own preference decides, whatever the number of choices.
  for (const Choice& c : run({{.token_id = other, .bias = 100.0f}, {.token_id = greedy, .bias = 100.0f}}, 2))
    EXPECT_EQ(c.tokens.at(0), greedy);
}

TEST_P(LogitBiasTest, OutOfRangeBiasIsRefused) {
  GenerationRequest r{.prompt_ids = test::engine_prompt(1, 4), .max_tokens = 1};
  r.sampling.logit_bias = {{.token_id = 5, .bias = 101.0f}};
  EXPECT_THROW(engine_->submit(r), Error);
  r.sampling.logit_bias = {{.token_id = -1, .bias = 1.0f}};
  EXPECT_THROW(engine_->submit(r), Error);
}

INSTANTIATE_TEST_SUITE_P(Backends, LogitBiasTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Cuda" : "Cpu"; });

}  // namespace
}  // namespace strata
