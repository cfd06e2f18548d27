// The latency histograms /metrics exports (strata: and vllm: names alike): time to first token
// once a request, inter-token latency per later token, time per output token once per finished
// choice (0 for a one-token choice), end-to-end once per request.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"

namespace strata {
namespace {

TEST(EngineLatencyStats, EachHistogramCountsWhatVllmCounts) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const GenerationRequest two_choices{.prompt_ids = test::engine_prompt(1, 20), .sampling = {.temperature = 1.0f},
                                      .max_tokens = 5, .ignore_eos = true, .n = 2};
  test::collect_choices(*engine.submit(two_choices), 2);
  const EngineStatsSnapshot s = engine.stats();
  EXPECT_EQ(s.time_to_first_token.count, 1u);
  EXPECT_EQ(s.inter_token_latency.count, 8u);  // 4 after the first, per choice
  EXPECT_EQ(s.request_time_per_output_token.count, 2u);
  EXPECT_GT(s.request_time_per_output_token.sum, 0.0);
  EXPECT_EQ(s.e2e_latency.count, 1u);

  test::collect_choices(*engine.submit({.prompt_ids = test::engine_prompt(2, 9), .sampling = {.temperature = 0},
                                        .max_tokens = 1, .ignore_eos = true}),
                        1);
  const EngineStatsSnapshot after = engine.stats();
  EXPECT_EQ(after.request_time_per_output_token.count, 3u);
  EXPECT_EQ(after.request_time_per_output_token.sum, s.request_time_per_output_token.sum);  // the one-token choice: 0 s
  EXPECT_EQ(after.inter_token_latency.count, 8u);
}

}  // namespace
}  // namespace strata
