// The serving engine on a fixture model: batched requests equal requests run alone,
// n > 1, stop strings, cancellation frees every block, and preemption under a tiny KV pool.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/engine/offline_generate.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

struct Collected {
  std::vector<std::vector<int32_t>> tokens;  // per choice
  std::vector<std::string> text;
  std::vector<FinishReason> finish;
};

Collected collect(RequestStream& stream, int32_t n) {
  Collected c{std::vector<std::vector<int32_t>>(n), std::vector<std::string>(n), std::vector<FinishReason>(n)};
  while (true) {
    auto update = stream.pop(std::chrono::milliseconds(60000));
    EXPECT_TRUE(update.has_value());
    if (!update) break;
    for (const ChoiceDelta& d : update->deltas) {
      c.tokens[d.index].insert(c.tokens[d.index].end(), d.token_ids.begin(), d.token_ids.end());
      c.text[d.index] += d.text;
      if (d.finish_reason != FinishReason::kNone) c.finish[d.index] = d.finish_reason;
    }
    if (update->finished) break;
  }
  return c;
}

std::vector<int32_t> prompt(int32_t seed, int32_t len) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < len; ++i) ids.push_back((seed * 131 + i * 17) % 500 + 3);
  return ids;
}

TEST(Engine, BatchedRequestsEqualEachAlone) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 256});
  std::vector<std::vector<int32_t>> alone;
  for (int32_t i = 0; i < 8; ++i)
    alone.push_back(generate_offline(runner, {.prompt_ids = prompt(i, 5 + 7 * i),
                                              .sampling = {.temperature = 0}, .max_tokens = 12}));
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 32, .max_num_seqs = 8});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < 8; ++i)
    streams.push_back(engine.submit({.prompt_ids = prompt(i, 5 + 7 * i), .sampling = {.temperature = 0},
                                     .max_tokens = 12}));
  for (int32_t i = 0; i < 8; ++i) {
    const Collected c = collect(*streams[i], 1);
    EXPECT_EQ(c.tokens[0], alone[i]) << i;
    EXPECT_EQ(c.finish[0], FinishReason::kLength);
  }
  engine.shutdown(std::chrono::seconds(5));
  EXPECT_EQ(runner.block_pool().num_free(), 256);
}

TEST(Engine, SeededSamplingIsReproducibleAndNChoicesShareThePrompt) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const GenerationRequest request{.prompt_ids = prompt(3, 21), .sampling = {.temperature = 1.0f, .seed = 7},
                                  .max_tokens = 10, .n = 3};
  const Collected a = collect(*engine.submit(request), 3);
  const Collected b = collect(*engine.submit(request), 3);
  EXPECT_EQ(a.tokens, b.tokens);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.tokens[i].size(), 10u);
  EXPECT_NE(a.tokens[0], a.tokens[1]);  // choices draw with different seeds
  engine.shutdown(std::chrono::seconds(5));
  EXPECT_EQ(runner.block_pool().num_free(), 128);
}

TEST(Engine, StopStringIsNeverEmitted) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  const auto greedy = generate_offline(runner, {.prompt_ids = prompt(1, 9), .sampling = {.temperature = 0},
                                                .max_tokens = 8});
  const std::string stop = "<" + std::to_string(greedy[3]) + ">";
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const Collected c = collect(*engine.submit({.prompt_ids = prompt(1, 9), .sampling = {.temperature = 0},
                                              .max_tokens = 8, .stop = {stop}}), 1);
  EXPECT_EQ(c.finish[0], FinishReason::kStop);
  EXPECT_EQ(c.text[0].find(stop), std::string::npos);
  std::string expected;
  for (size_t i = 0; i < 3 && greedy[i] != greedy[3]; ++i) expected += "<" + std::to_string(greedy[i]) + ">";
  if (std::find(greedy.begin(), greedy.begin() + 3, greedy[3]) == greedy.begin() + 3) {
    EXPECT_EQ(c.text[0], expected);
  }
}

TEST(Engine, CancelFreesBlocks) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  auto stream = engine.submit({.prompt_ids = prompt(2, 30), .max_tokens = 4000, .ignore_eos = true});
  ASSERT_TRUE(stream->pop(std::chrono::milliseconds(30000)).has_value());
  engine.cancel(stream->request_id());
  const Collected c = collect(*stream, 1);
  EXPECT_EQ(c.finish[0], FinishReason::kCancelled);
  for (int i = 0; i < 100 && engine.stats().kv_cache_usage > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(engine.stats().kv_cache_usage, 0.0);
}

TEST(Engine, PreemptionUnderATinyKvPoolStillFinishesEveryRequestExactly) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 6});  // 96 tokens
  std::vector<std::vector<int32_t>> alone;
  for (int32_t i = 0; i < 4; ++i)
    alone.push_back(generate_offline(runner, {.prompt_ids = prompt(i, 20), .sampling = {.temperature = 0},
                                              .max_tokens = 20}));
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 64});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < 4; ++i)
    streams.push_back(engine.submit({.prompt_ids = prompt(i, 20), .sampling = {.temperature = 0}, .max_tokens = 20}));
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(collect(*streams[i], 1).tokens[0], alone[i]) << i;
  EXPECT_GT(engine.stats().preemptions_total, 0u);
}

TEST(Engine, RejectsPromptsOverTheContext) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 16});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_model_len = 32});
  EXPECT_THROW(engine.submit({.prompt_ids = prompt(0, 40)}), Error);
  EXPECT_THROW(engine.submit({.prompt_ids = {}}), Error);
  EXPECT_THROW(engine.submit({.prompt_ids = {1}, .sampling = {.top_p = 2.0f}}), Error);
}

}  // namespace
}  // namespace strata
