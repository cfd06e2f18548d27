// LocalEngine (the path of `strata generate` and `strata chat`): its greedy tokens equal the
// DirectSession reference turn after turn (the prefix cache serving each later turn), a
// callback that returns false stops the request early, and eos ends it unless ignored.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/engine/local_engine.h"
#include "strata/engine/offline_generate.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(LocalEngine, GreedyTurnsEqualTheDirectSessionReference) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  LocalEngine engine(runner, *f.tokenizer, {});
  std::vector<int32_t> conversation = test::engine_prompt(1, 21);
  for (int turn = 0; turn < 3; ++turn) {
    const std::vector<int32_t> want =
        generate_offline(runner, {.prompt_ids = conversation, .sampling = {.temperature = 0}, .max_tokens = 9});
    std::vector<int32_t> streamed;
    const std::vector<int32_t> got =
        engine.generate({.prompt_ids = conversation, .sampling = {.temperature = 0}, .max_tokens = 9},
                        [&](int32_t token) { return streamed.push_back(token), true; });
    EXPECT_EQ(got, want) << "turn " << turn;
    EXPECT_EQ(streamed, want) << "turn " << turn;
    conversation.insert(conversation.end(), got.begin(), got.end());
    const std::vector<int32_t> next = test::engine_prompt(10 + turn, 5);
    conversation.insert(conversation.end(), next.begin(), next.end());
  }
}

TEST(LocalEngine, CallbackStopsEarlyAndEosEndsUnlessIgnored) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 128});
  const std::vector<int32_t> prompt = test::engine_prompt(2, 13);
  const std::vector<int32_t> free_run =
      generate_offline(runner, {.prompt_ids = prompt, .sampling = {.temperature = 0}, .max_tokens = 8});
  ASSERT_EQ(free_run.size(), 8u);
  {
    LocalEngine engine(runner, *f.tokenizer, {});
    int32_t calls = 0;
    const std::vector<int32_t> got = engine.generate({.prompt_ids = prompt, .sampling = {.temperature = 0},
                                                      .max_tokens = 8},
                                                     [&](int32_t) { return ++calls < 3; });
    EXPECT_EQ(got, std::vector<int32_t>(free_run.begin(), free_run.begin() + 3));
  }
  const int32_t eos = free_run.back();  // ends the output at its first occurrence, included
  LocalEngine engine(runner, *f.tokenizer, {eos});
  const std::vector<int32_t> ended =
      engine.generate({.prompt_ids = prompt, .sampling = {.temperature = 0}, .max_tokens = 8});
  EXPECT_EQ(ended, std::vector<int32_t>(free_run.begin(), std::find(free_run.begin(), free_run.end(), eos) + 1));
  const std::vector<int32_t> ignored =
      engine.generate({.prompt_ids = prompt, .sampling = {.temperature = 0}, .max_tokens = 8, .ignore_eos = true});
  EXPECT_EQ(ignored, free_run);
}

}  // namespace
}  // namespace strata
