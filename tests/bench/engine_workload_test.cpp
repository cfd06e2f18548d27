#include "strata/bench/engine_workload.h"

#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/core/error.h"

namespace strata::bench {
namespace {

TEST(EngineWorkload, EveryRequestIsTimedAndCountedExactly) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const std::vector<int64_t> lengths = {2, 5, 3};
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < lengths.size(); ++i)
    requests.push_back({.prompt_ids = test::engine_prompt(static_cast<int32_t>(i), 9),
                        .max_tokens = static_cast<int32_t>(lengths[i]), .ignore_eos = true});
  const EngineRun run = run_engine_workload(engine.engine(), std::move(requests), 120);
  ASSERT_EQ(run.requests.size(), 3u);
  for (size_t i = 0; i < lengths.size(); ++i) {
    const EngineRequestTiming& r = run.requests[i];
    EXPECT_EQ(r.output_tokens, lengths[i]);
    EXPECT_EQ(r.reason, FinishReason::kLength);
    EXPECT_GT(r.first_token_s, 0);
    EXPECT_GE(r.finish_s, r.first_token_s);
    EXPECT_LE(r.finish_s, run.wall_s);
  }
  check_exact_lengths(run, lengths);
  EXPECT_THROW(check_exact_lengths(run, {2, 5, 4}), Error);  // request 2 is one token short
}

}  // namespace
}  // namespace strata::bench
