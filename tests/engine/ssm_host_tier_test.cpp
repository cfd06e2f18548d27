// The SSM snapshots' host tier (--ssm-host-cache-gb) through the engine, on every hybrid
// fixture: with two device snapshot slots, a prompt's two snapshots (at 32 and 48 tokens) are
// pushed to host memory by the next prompt's two, and a later prompt extending it hits there: the same tokens and
// log-probabilities as a cold run, and bit for bit what the same hit restored from a device
// slot gives.
#include "engine/prefix_cache_test_support.h"

namespace strata {
namespace {

using test::CachedRunResult;

class SsmHostTier : public test::PrefixCacheEngineTest {
 protected:
  // A prompt, an unrelated one, then the first extended, one after another on one engine.
  CachedRunResult extend_after_another(const EngineOptions& options) {
    auto warm = engine(options);
    test::wait_result(*warm->submit(test::greedy_request(first_)));
    test::wait_result(*warm->submit(test::greedy_request(test::cache_prompt(64, 2))));
    const CachedRunResult hit = test::wait_result(*warm->submit(test::greedy_request(second_)));
    stats_ = warm->stats();
    return hit;
  }

  const std::vector<int32_t> first_ = test::cache_prompt(48, 1);
  const std::vector<int32_t> second_ = test::extend_prompt(first_, 9, 3);
  EngineStatsSnapshot stats_;
};

TEST_P(SsmHostTier, AHitFromTheHostTierEqualsAColdRunAndADeviceHit) {
  const CachedRunResult from_host = extend_after_another({.ssm_cache_slots = 2, .ssm_host_cache_gib = 1});
  EXPECT_EQ(from_host.num_cached_tokens, 48);
  EXPECT_GT(stats_.ssm_host_stored_total, 0u);
  EXPECT_EQ(stats_.ssm_host_restored_total, 1u);
  EXPECT_GT(stats_.ssm_host_snapshot_bytes, 0);
  expect_same(from_host, cold(second_));

  const CachedRunResult from_device = extend_after_another({.ssm_cache_slots = 16});
  EXPECT_EQ(from_device.num_cached_tokens, 48);
  EXPECT_EQ(stats_.ssm_host_restored_total, 0u);
  ASSERT_EQ(from_host.tokens, from_device.tokens);
  ASSERT_EQ(from_host.logprobs.size(), from_device.logprobs.size());
  for (size_t t = 0; t < from_host.logprobs.size(); ++t) {
    EXPECT_EQ(from_host.logprobs[t].logprob, from_device.logprobs[t].logprob) << "token " << t;
    for (size_t k = 0; k < from_host.logprobs[t].top.size(); ++k)
      EXPECT_EQ(from_host.logprobs[t].top[k].logprob, from_device.logprobs[t].top[k].logprob);
  }
}

// Without the host tier the same requests find nothing: the device slots went to the other prompt.
TEST_P(SsmHostTier, WithoutItTheEvictedPrefixIsRecomputed) {
  const CachedRunResult miss = extend_after_another({.ssm_cache_slots = 2});
  EXPECT_EQ(miss.num_cached_tokens, 0);
  expect_same(miss, cold(second_));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SsmHostTier,
                         ::testing::Values("qwen3_next", "mamba2", "nemotron_h", "nemotron_h_moe", "qwen3_5",
                                           "qwen3_5_moe_text", "qwen4_exp"));

}  // namespace
}  // namespace strata
