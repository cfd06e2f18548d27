// Prompt logprobs: the log-softmax of one row (rank, top-k, ties), and through the engine on
// the qwen3 fixture: they equal the logprobs of the same tokens generated one by one, a
// chunked prefill gives the same as a whole one, and a prefix-cache hit is never used.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/engine/prompt_logprobs.h"
#include "engine/engine_test_support.h"

namespace strata {
namespace {

struct Scored {
  std::vector<PromptLogprob> prompt;
  std::vector<int32_t> output;
  FinishReason finish = FinishReason::kNone;
  int32_t num_cached_tokens = -1;
};

Scored score(test::CheckedEngine& engine, GenerationRequest request) {
  Scored s;
  auto stream = engine.submit(std::move(request));
  while (auto update = stream->pop(std::chrono::milliseconds(120000))) {
    for (PromptLogprob& p : update->prompt_logprobs) s.prompt.push_back(std::move(p));
    for (const ChoiceDelta& d : update->deltas) {
      s.output.insert(s.output.end(), d.token_ids.begin(), d.token_ids.end());
      if (d.finish_reason != FinishReason::kNone) s.finish = d.finish_reason;
    }
    s.num_cached_tokens = update->num_cached_tokens;
    if (update->finished) return s;
  }
  ADD_FAILURE() << "request timed out";
  return s;
}

TEST(PromptLogprob, RankTopKAndTiesOfOneRow) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  const float lse = std::log(std::exp(1.0f) + 2 * std::exp(3.0f) + std::exp(2.0f));
  const PromptLogprob p = prompt_logprob(logits, 2, 3);
  EXPECT_EQ(p.token_id, 2);
  EXPECT_NEAR(p.logprob, 2.0f - lse, 1e-6f);
  EXPECT_EQ(p.rank, 3);  // two tokens are more likely
  ASSERT_EQ(p.top.size(), 3u);
  EXPECT_EQ(p.top[0].token_id, 1);  // a tie goes to the lower id
  EXPECT_EQ(p.top[1].token_id, 3);
  EXPECT_EQ(p.top[2].token_id, 2);
  EXPECT_NEAR(p.top[0].logprob, 3.0f - lse, 1e-6f);
  EXPECT_TRUE(prompt_logprob(logits, 1, 0).top.empty());
  EXPECT_EQ(prompt_logprob(logits, 1, 0).rank, 1);
}

TEST(PromptLogprobs, EqualTheLogprobsOfTheSameTokensGenerated) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const std::vector<int32_t> prompt = test::engine_prompt(1, 13);
  std::vector<test::ChoiceResult> generated;
  {
    auto stream = engine.submit({.prompt_ids = prompt, .sampling = {.temperature = 0, .logprobs = 0},
                                 .max_tokens = 6, .ignore_eos = true});
    generated = test::collect_choices(*stream, 1);
  }
  ASSERT_EQ(generated[0].tokens.size(), 6u);
  std::vector<int32_t> full = prompt;
  full.insert(full.end(), generated[0].tokens.begin(), generated[0].tokens.end());
  const Scored s = score(engine, {.prompt_ids = full, .max_tokens = 0, .prompt_logprobs = 0});
  EXPECT_TRUE(s.output.empty());
  EXPECT_EQ(s.finish, FinishReason::kLength);
  EXPECT_EQ(s.num_cached_tokens, 0);  // the first request's blocks are cached, but skipped
  ASSERT_EQ(s.prompt.size(), full.size() - 1);
  for (size_t p = 1; p < full.size(); ++p) EXPECT_EQ(s.prompt[p - 1].token_id, full[p]) << p;
  for (size_t t = 0; t < 6; ++t) {
    const PromptLogprob& got = s.prompt[prompt.size() - 1 + t];
    EXPECT_NEAR(got.logprob, generated[0].logprobs[t].logprob, 1e-4f) << t;
    EXPECT_EQ(got.rank, 1) << t;  // greedy picked it
    EXPECT_TRUE(got.top.empty());
  }
}

TEST(PromptLogprobs, ChunkedPrefillEqualsWhole) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  const GenerationRequest request{.prompt_ids = test::engine_prompt(4, 37), .sampling = {.temperature = 0},
                                  .max_tokens = 2, .ignore_eos = true, .prompt_logprobs = 5};
  Scored whole, chunked;
  {
    test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
    whole = score(engine, request);
  }
  {
    test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 8});
    chunked = score(engine, request);
  }
  ASSERT_EQ(whole.prompt.size(), 36u);
  ASSERT_EQ(chunked.prompt.size(), 36u);
  EXPECT_EQ(chunked.output, whole.output);
  EXPECT_EQ(whole.output.size(), 2u);
  for (size_t p = 0; p < 36; ++p) {
    EXPECT_EQ(chunked.prompt[p].token_id, request.prompt_ids[p + 1]);
    EXPECT_NEAR(chunked.prompt[p].logprob, whole.prompt[p].logprob, 1e-4f) << p;
    EXPECT_EQ(chunked.prompt[p].rank, whole.prompt[p].rank) << p;
    ASSERT_EQ(whole.prompt[p].top.size(), 5u);
    ASSERT_EQ(chunked.prompt[p].top.size(), 5u);
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(chunked.prompt[p].top[k].token_id, whole.prompt[p].top[k].token_id) << p << " " << k;
      EXPECT_NEAR(chunked.prompt[p].top[k].logprob, whole.prompt[p].top[k].logprob, 1e-4f) << p << " " << k;
    }
    EXPECT_GE(whole.prompt[p].top[0].logprob, whole.prompt[p].logprob);
  }
}

TEST(PromptLogprobs, OutOfRangeCountsAreRefused) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 16});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  EXPECT_THROW(engine.submit({.prompt_ids = {5, 6}, .prompt_logprobs = 21}), Error);
  EXPECT_THROW(engine.submit({.prompt_ids = {5, 6}, .prompt_logprobs = -2}), Error);
  EXPECT_THROW(engine.submit({.prompt_ids = {5, 6}, .max_tokens = -1}), Error);
}

}  // namespace
}  // namespace strata
