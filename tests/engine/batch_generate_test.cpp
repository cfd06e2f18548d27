// generate_batch (the Python module's LLM.generate): a batch of greedy requests sharing steps
// gives each request the tokens it gets alone, in the order given; a refused request names
// its index and cancels the rest; an interruption cancels everything.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/batch_generate.h"
#include "strata/engine/offline_generate.h"

namespace strata {
namespace {

GenerationRequest greedy(int32_t seed, int32_t prompt_len, int32_t max_tokens) {
  return {.prompt_ids = test::engine_prompt(seed, prompt_len), .sampling = {.temperature = 0}, .max_tokens = max_tokens};
}

TEST(BatchGenerate, GreedyBatchEqualsEachRequestAloneInOrder) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 256});
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 12; ++i) requests.push_back(greedy(i, 5 + 3 * i, 4 + i % 5));
  std::vector<std::vector<int32_t>> want;
  for (const GenerationRequest& r : requests)
    want.push_back(generate_offline(runner, {.prompt_ids = r.prompt_ids, .sampling = r.sampling, .max_tokens = r.max_tokens}));
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_seqs = 8});
  const std::vector<RequestOutput> got = generate_batch(engine.engine(), requests);
  ASSERT_EQ(got.size(), requests.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].choices.size(), 1u);
    EXPECT_EQ(got[i].choices[0].token_ids, want[i]) << "request " << i;
    EXPECT_EQ(got[i].choices[0].finish_reason, FinishReason::kLength);
    EXPECT_EQ(got[i].num_prompt_tokens, static_cast<int32_t>(requests[i].prompt_ids.size()));
  }
}

TEST(BatchGenerate, ChoicesAndLogprobsAreGatheredPerChoice) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  GenerationRequest request = greedy(3, 9, 5);
  request.n = 3;
  request.sampling = {.temperature = 1.0f, .seed = 7, .logprobs = 2};
  const std::vector<RequestOutput> got = generate_batch(engine.engine(), {request});
  ASSERT_EQ(got[0].choices.size(), 3u);
  for (const ChoiceOutput& choice : got[0].choices) {
    EXPECT_EQ(choice.token_ids.size(), 5u);
    ASSERT_EQ(choice.logprobs.size(), 5u);
    EXPECT_EQ(choice.logprobs[0].token_id, choice.token_ids[0]);
    EXPECT_EQ(choice.logprobs[0].top.size(), 2u);
  }
}

TEST(BatchGenerate, RefusedRequestNamesItsIndexAndCancelsTheOthers) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  std::vector<GenerationRequest> requests = {greedy(1, 8, 50), greedy(2, 8, 50), GenerationRequest{}};
  try {
    generate_batch(engine.engine(), requests);
    FAIL() << "an empty prompt was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompt 2 of 3: the prompt is empty"), std::string::npos) << e.what();
  }
}

TEST(BatchGenerate, InterruptionCancelsTheBatch) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  GenerationRequest endless = greedy(4, 8, 100000);
  endless.ignore_eos = true;
  EXPECT_THROW(generate_batch(engine.engine(), {endless, endless}, {.interrupted = [] { return true; }}), Error);
}

}  // namespace
}  // namespace strata
