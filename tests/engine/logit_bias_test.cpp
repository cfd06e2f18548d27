// logit_bias through the engine on the CPU: -100 on the greedy first token bans it, +100 on
// another token forces it, for every choice of an n > 1 request (which share the first
// logits row: biased once, not once per choice); out-of-range values are refused at submit.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "engine/engine_test_support.h"

namespace strata {
namespace {

class LogitBiasTest : public ::testing::Test {
 protected:
  std::vector<test::ChoiceResult> run(std::vector<LogitBias> bias, int32_t n = 1) {
    GenerationRequest r{.prompt_ids = test::engine_prompt(3, 9), .sampling = {.temperature = 0}, .max_tokens = 3, .n = n};
    r.sampling.logit_bias = std::move(bias);
    return test::collect_choices(*engine_.submit(std::move(r)), n);
  }

  test::EngineFixture f_;
  ModelRunner runner_{*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64}};
  test::CheckedEngine engine_{runner_, *f_.tokenizer, {}, {.max_num_batched_tokens = 64, .max_num_seqs = 4}};
};

TEST_F(LogitBiasTest, MinusOneHundredBansAndPlusOneHundredForces) {
  const int32_t greedy = run({}).at(0).tokens.at(0);
  const int32_t other = greedy == 7 ? 8 : 7;
  EXPECT_NE(run({{.token_id = greedy, .bias = -100.0f}}).at(0).tokens.at(0), greedy);
  for (const test::ChoiceResult& c : run({{.token_id = other, .bias = 100.0f}}, /*n=*/3)) EXPECT_EQ(c.tokens.at(0), other);
  // +100 on two tokens: the model's own preference decides between them, bias counted once.
  const std::vector<test::ChoiceResult> two = run({{.token_id = other, .bias = 100.0f}, {.token_id = greedy, .bias = 100.0f}}, 2);
  for (const test::ChoiceResult& c : two) EXPECT_EQ(c.tokens.at(0), greedy);
}

TEST_F(LogitBiasTest, OutOfRangeBiasIsRefused) {
  GenerationRequest r{.prompt_ids = test::engine_prompt(1, 4), .max_tokens = 1};
  r.sampling.logit_bias = {{.token_id = 5, .bias = 101.0f}};
  EXPECT_THROW(engine_.submit(r), Error);
  r.sampling.logit_bias = {{.token_id = -1, .bias = 1.0f}};
  EXPECT_THROW(engine_.submit(r), Error);
}

}  // namespace
}  // namespace strata
