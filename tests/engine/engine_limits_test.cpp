// No request waits forever: what the engine could never serve is refused at submission
// (naming the limit and the flag; token ids outside the vocabulary too) or at start-up
// (contradictory flags), and the queue behind a refusal is served; the context is capped to
// what the KV pool holds; preempted sequences come back even without chunked prefill; a
// request with n > 1 cancelled before its first token finishes; shutdown cuts requests off
// with "abort"; /metrics counts only successes.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/engine/offline_generate.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

using test::ChoiceResult;

GenerationRequest greedy(int32_t seed, int32_t prompt_len, int32_t max_tokens, int32_t n = 1) {
  return {.prompt_ids = test::engine_prompt(seed, prompt_len), .sampling = {.temperature = 0},
          .max_tokens = max_tokens, .ignore_eos = true, .n = n};
}

// The message of the Error `fn` throws (a test failure when it throws none).
template <typename F> std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

class EngineLimits : public ::testing::Test {
 protected:
  std::unique_ptr<ModelRunner> runner(int64_t num_kv_blocks) {
    return std::make_unique<ModelRunner>(*loaded_.model, *backend_, RunnerOptions{.num_kv_blocks = num_kv_blocks});
  }
  std::vector<int32_t> alone(ModelRunner& r, const GenerationRequest& request) {
    return generate_offline(r, {.prompt_ids = request.prompt_ids, .sampling = request.sampling,
                                .max_tokens = request.max_tokens});
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_ = load_model({.model_path = test::fixture_path("hf/qwen3")}, *backend_);
  std::unique_ptr<text::Tokenizer> tokenizer_ = text::make_id_tokenizer(512);
};

TEST_F(EngineLimits, APromptOverTheStepBudgetWithoutChunkedPrefillIsRefusedAndTheQueueIsServed) {
  auto r = runner(64);
  const std::vector<int32_t> first_alone = alone(*r, greedy(1, 20, 5)), behind_alone = alone(*r, greedy(3, 30, 5));
  test::CheckedEngine engine(*r, *tokenizer_, {}, {.max_num_batched_tokens = 32, .enable_chunked_prefill = false});
  auto first = engine.submit(greedy(1, 20, 5));
  const std::string message = error_of([&] { engine.submit(greedy(2, 40, 5)); });
  EXPECT_NE(message.find("40 tokens"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-num-batched-tokens 32"), std::string::npos) << message;
  auto behind = engine.submit(greedy(3, 30, 5));
  EXPECT_EQ(test::collect_choices(*first, 1)[0].tokens, first_alone);
  EXPECT_EQ(test::collect_choices(*behind, 1)[0].tokens, behind_alone);
}

// Six blocks of 16 tokens: the context is 96 tokens, whatever the model's.
TEST_F(EngineLimits, TheContextIsCappedToWhatTheKvPoolHolds) {
  auto r = runner(6);
  const std::vector<int32_t> behind_alone = alone(*r, greedy(3, 20, 8));
  test::CheckedEngine engine(*r, *tokenizer_, {}, {});
  EXPECT_EQ(engine.max_model_len(), 96);
  const std::string message = error_of([&] { engine.submit(greedy(1, 96, 4)); });
  EXPECT_NE(message.find("--num-kv-blocks"), std::string::npos) << message;
  // Its generation would outgrow the pool: it ends at the context ("length"), never preempting itself.
  auto long_one = engine.submit(greedy(2, 20, 500));
  auto behind = engine.submit(greedy(3, 20, 8));
  const ChoiceResult capped = test::collect_choices(*long_one, 1)[0];
  EXPECT_EQ(capped.finish, FinishReason::kLength);
  EXPECT_EQ(capped.tokens.size(), 76u);
  EXPECT_EQ(test::collect_choices(*behind, 1)[0].tokens, behind_alone);
}

TEST_F(EngineLimits, TokenIdsOutsideTheVocabularyAreRefused) {
  auto r = runner(16);
  test::CheckedEngine engine(*r, *tokenizer_, {}, {});
  GenerationRequest outside = greedy(1, 5, 2);
  outside.prompt_ids[2] = 512;  // the fixture's vocabulary is 512
  EXPECT_NE(error_of([&] { engine.submit(outside); }).find("prompt token id 512 is outside"), std::string::npos);
  GenerationRequest biased = greedy(1, 5, 2);
  biased.sampling.logit_bias = {{.token_id = 9000, .bias = 1.0f}};
  EXPECT_NE(error_of([&] { engine.submit(biased); }).find("logit_bias names token 9000"), std::string::npos);
  EXPECT_EQ(test::collect_choices(*engine.submit(greedy(1, 5, 2)), 1)[0].tokens.size(), 2u);
}
TEST_F(EngineLimits, ContradictoryFlagsAreRefusedAtStartUp) {
  auto r = runner(6);
  const std::string over_pool = error_of([&] { test::CheckedEngine e(*r, *tokenizer_, {}, {.max_model_len = 200}); });
  EXPECT_NE(over_pool.find("--max-model-len 200"), std::string::npos) << over_pool;
  EXPECT_NE(over_pool.find("--num-kv-blocks"), std::string::npos) << over_pool;
  EXPECT_THROW(validate_engine_options({.max_num_seqs = 0}), Error);
  EXPECT_THROW(validate_engine_options({.max_num_seqs = kMaxNumSeqs + 1}), Error);
  EXPECT_THROW(validate_engine_options({.max_num_batched_tokens = 0}), Error);
  EXPECT_THROW(validate_engine_options({.max_num_batched_tokens = 3, .speculative = {.num_speculative_tokens = 3}}),
               Error);
  EXPECT_NO_THROW(validate_engine_options({}));
}

// Without chunked prefill a preempted sequence's prompt and output (up to 50 tokens) may
// exceed the 32-token budget: it recomputes in chunks instead of waiting forever.
TEST_F(EngineLimits, PreemptedSequencesComeBackWithoutChunkedPrefill) {
  auto r = runner(6);
  std::vector<std::vector<int32_t>> expected;
  for (int32_t i = 0; i < 4; ++i) expected.push_back(alone(*r, greedy(i, 20, 30)));
  test::CheckedEngine engine(*r, *tokenizer_, {}, {.max_num_batched_tokens = 32, .enable_chunked_prefill = false});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < 4; ++i) streams.push_back(engine.submit(greedy(i, 20, 30)));
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(test::collect_choices(*streams[i], 1)[0].tokens, expected[i]) << i;
  EXPECT_GT(engine.stats().preemptions_total, 0u);
}

// One running sequence holds the only seat; the n = 3 request waits, is cancelled before
// its prompt ran, and finishes with all three choices.
TEST_F(EngineLimits, ARequestWithChoicesCancelledBeforeItsFirstTokenFinishes) {
  auto r = runner(64);
  test::CheckedEngine engine(*r, *tokenizer_, {}, {.max_num_batched_tokens = 16, .max_num_seqs = 1});
  auto running = engine.submit(greedy(1, 10, 800));
  ASSERT_TRUE(running->pop(std::chrono::milliseconds(30000)).has_value());
  auto waiting = engine.submit(greedy(2, 10, 8, /*n=*/3));
  engine.cancel(waiting->request_id());
  for (const ChoiceResult& c : test::collect_choices(*waiting, 3, 10000)) EXPECT_EQ(c.finish, FinishReason::kCancelled);
  // The same while its prompt is being prefilled in chunks.
  engine.cancel(running->request_id());
  auto prefilling = engine.submit({.prompt_ids = test::engine_prompt(3, 300), .max_tokens = 4, .n = 2});
  engine.cancel(prefilling->request_id());
  for (const ChoiceResult& c : test::collect_choices(*prefilling, 2, 10000))
    EXPECT_EQ(c.finish, FinishReason::kCancelled);
  const auto start = std::chrono::steady_clock::now();
  engine.shutdown(std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  const EngineStatsSnapshot stats = engine.stats();
  EXPECT_EQ(stats.requests_cancelled_total, 3u);
  EXPECT_EQ(stats.requests_finished_total, 0u);  // cancelled requests are no successes
}

TEST_F(EngineLimits, ShutdownCutsRunningRequestsOffWithAbort) {
  auto r = runner(64);
  test::CheckedEngine engine(*r, *tokenizer_, {}, {});
  auto done = engine.submit(greedy(1, 10, 3));
  test::collect_choices(*done, 1);
  auto cut = engine.submit(greedy(2, 10, 900, /*n=*/2));
  ASSERT_TRUE(cut->pop(std::chrono::milliseconds(30000)).has_value());
  engine.shutdown(std::chrono::milliseconds(0));
  for (const ChoiceResult& c : test::collect_choices(*cut, 2, 10000)) EXPECT_EQ(c.finish, FinishReason::kCancelled);
  EXPECT_STREQ(finish_reason_name(FinishReason::kCancelled), "abort");
  EXPECT_EQ(engine.stats().requests_finished_total, 1u);
  EXPECT_EQ(engine.stats().requests_cancelled_total, 1u);
  EXPECT_THROW(engine.submit(greedy(3, 10, 3)), Error);
}

}  // namespace
}  // namespace strata
