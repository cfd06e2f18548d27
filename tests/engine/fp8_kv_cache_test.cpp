// --kv-cache-dtype fp8 through the engine on the CPU: e4m3 keys and values keep every
// exactness property (a prefix hit inside a prefill chunk equals a cold run, requests in one
// batch equal each alone) and stay close to the full-precision cache.
#include <cmath>

#include "engine/prefix_cache_test_support.h"

namespace strata {
namespace {

using test::CachedRunResult;

class Fp8KvCache : public test::PrefixCacheEngineTest {
 protected:
  void SetUp() override {
    PrefixCacheEngineTest::SetUp();
    kv_cache_dtype_ = KvCacheDType::kFp8;
  }
};

TEST_P(Fp8KvCache, PrefixHitInsideAChunkEqualsAColdRun) {
  const std::vector<int32_t> first = test::cache_prompt(45, 2), second = test::extend_prompt(first, 10, 3);
  auto warm = engine(true, 128, /*budget=*/20);  // chunks of 20: boundaries 16 and 32 fall inside
  test::wait_result(*warm->submit(test::greedy_request(first)));
  const CachedRunResult hit = test::wait_result(*warm->submit(test::greedy_request(second)));
  EXPECT_EQ(hit.num_cached_tokens, 32);
  expect_same(hit, cold(second));
}

TEST_P(Fp8KvCache, RequestsInOneBatchEqualEachAlone) {
  auto together = engine(false);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < 4; ++i) streams.push_back(together->submit(test::greedy_request(test::cache_prompt(20 + 9 * i, i), 6)));
  for (int32_t i = 0; i < 4; ++i)
    expect_same(test::wait_result(*streams[i]), cold(test::greedy_request(test::cache_prompt(20 + 9 * i, i), 6)));
}

// The first answer token's log-probabilities against an f32 cache: e4m3 rounds each key and
// value by up to 1/16, which moves these fixtures' log-probabilities by 0.01-0.1, and gpt_oss's
// (sharpest logits) by 0.38; a misread code or a lost scale moves them by whole units.
TEST_P(Fp8KvCache, StaysCloseToTheFullPrecisionCache) {
  const GenerationRequest request = test::greedy_request(test::cache_prompt(70, 11), 1);
  const CachedRunResult fp8 = cold(request);
  kv_cache_dtype_ = KvCacheDType::kAuto;
  const CachedRunResult full = cold(request);
  ASSERT_EQ(fp8.logprobs.size(), 1u);
  ASSERT_EQ(full.logprobs.size(), 1u);
  // Near-equal tokens may swap ranks, so each token is compared with itself where both lists hold it.
  const auto& quantized = fp8.logprobs[0].top;
  const auto& reference = full.logprobs[0].top;
  EXPECT_EQ(quantized[0].token_id, reference[0].token_id) << GetParam();
  double worst = 0;
  int32_t compared = 0;
  for (const TokenLogprob& q : quantized)
    for (const TokenLogprob& r : reference)
      if (q.token_id == r.token_id) {
        worst = std::max(worst, std::abs(double(q.logprob) - r.logprob));
        ++compared;
      }
  EXPECT_GE(compared, 3) << GetParam();
  EXPECT_LT(worst, 0.5) << GetParam();
  RecordProperty("max_top5_logprob_delta", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Fp8KvCache,
                         ::testing::Values("llama", "qwen3", "gemma3_global", "gpt_oss", "deepseek_v3", "qwen3_next"));

}  // namespace
}  // namespace strata
