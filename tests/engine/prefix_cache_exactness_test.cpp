// A request whose prefix an earlier request cached gives the same tokens and the same
// log-probabilities as a cold run, for every fixture architecture (hybrid ones restore the
// SSM state from a snapshot): hits at a block boundary, inside a prefill chunk, no hit on a
// prefix shorter than a block, after eviction, and with concurrent requests.
#include "engine/prefix_cache_test_support.h"

namespace strata {
namespace {

using test::CachedRunResult;
using Result = CachedRunResult;

std::vector<int32_t> prompt(int32_t len, int32_t seed = 0) { return test::cache_prompt(len, seed); }
std::vector<int32_t> extend(std::vector<int32_t> ids, int32_t extra, int32_t seed) {
  return test::extend_prompt(std::move(ids), extra, seed);
}
GenerationRequest request(std::vector<int32_t> ids) { return test::greedy_request(std::move(ids)); }
Result wait(RequestStream& stream) { return test::wait_result(stream); }

class PrefixCacheExactness : public test::PrefixCacheEngineTest {};

TEST_P(PrefixCacheExactness, HitAtABlockBoundary) {
  const std::vector<int32_t> first = prompt(32), second = extend(first, 9, 1);
  auto warm = engine(true);
  wait(*warm->submit(request(first)));
  const Result hit = wait(*warm->submit(request(second)));
  EXPECT_EQ(hit.num_cached_tokens, 32);
  expect_same(hit, cold(second));
}

TEST_P(PrefixCacheExactness, HitWhoseBoundaryFellInsideAPrefillChunk) {
  const std::vector<int32_t> first = prompt(45, 2), second = extend(first, 10, 3);
  auto warm = engine(true, 128, /*budget=*/20);  // chunks of 20: boundaries 16 and 32 fall inside
  wait(*warm->submit(request(first)));
  const Result hit = wait(*warm->submit(request(second)));
  EXPECT_EQ(hit.num_cached_tokens, 32);
  expect_same(hit, cold(second));
}

TEST_P(PrefixCacheExactness, ConcurrentRequestsSharingAPrefix) {
  const std::vector<int32_t> shared = prompt(40, 4);
  auto warm = engine(true);
  wait(*warm->submit(request(shared)));
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < 4; ++i) streams.push_back(warm->submit(request(extend(shared, 5 + i, 10 + i))));
  for (int32_t i = 0; i < 4; ++i) {
    const Result hit = wait(*streams[i]);
    EXPECT_GT(hit.num_cached_tokens, 0);
    expect_same(hit, cold(extend(shared, 5 + i, 10 + i)));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PrefixCacheExactness,
                         ::testing::Values("llama", "llama3_rope", "qwen2", "qwen3", "gemma3_global", "qwen3_moe", "mixtral",
                                           "qwen3_next", "mamba2", "nemotron_h", "nemotron_h_moe", "gpt_oss",
                                           "deepseek_v3", "deepseek_v4", "qwen3_5", "qwen3_5_moe_text", "qwen4_exp"));

class PrefixCacheEdges : public PrefixCacheExactness {};

TEST_P(PrefixCacheEdges, PrefixShorterThanABlockIsNoHit) {
  const std::vector<int32_t> first = prompt(10, 5), second = extend(first, 4, 6);
  auto warm = engine(true);
  wait(*warm->submit(request(first)));
  const Result miss = wait(*warm->submit(request(second)));
  EXPECT_EQ(miss.num_cached_tokens, 0);
  expect_same(miss, cold(second));
}

TEST_P(PrefixCacheEdges, EvictedPrefixIsRecomputedExactly) {
  const std::vector<int32_t> first = prompt(32, 7), second = extend(first, 8, 8);
  auto warm = engine(true, /*num_kv_blocks=*/6);
  wait(*warm->submit(request(first)));
  wait(*warm->submit(request(prompt(80, 9))));  // needs every block: evicts the cached prefix
  const Result after = wait(*warm->submit(request(second)));
  EXPECT_EQ(after.num_cached_tokens, 0);
  expect_same(after, cold(second));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PrefixCacheEdges, ::testing::Values("qwen3", "qwen3_next"));

}  // namespace
}  // namespace strata
