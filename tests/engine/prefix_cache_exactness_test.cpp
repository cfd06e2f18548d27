// A request whose prefix an earlier request cached gives the same tokens and the same
// log-probabilities as a cold run, for every fixture architecture (hybrid ones restore the
// SSM state from a snapshot): hits at a block boundary, inside a prefill chunk, no hit on a
// prefix shorter than a block, after eviction, and with concurrent requests.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

constexpr float kLogprobTolerance = 1e-4f;

struct Result {
  std::vector<int32_t> tokens;
  std::vector<SampleResult> logprobs;
  int32_t num_cached_tokens = 0;
};

Result wait(RequestStream& stream) {
  Result r;
  while (auto update = stream.pop(std::chrono::milliseconds(60000))) {
    for (const ChoiceDelta& d : update->deltas) {
      r.tokens.insert(r.tokens.end(), d.token_ids.begin(), d.token_ids.end());
      r.logprobs.insert(r.logprobs.end(), d.logprobs.begin(), d.logprobs.end());
    }
    r.num_cached_tokens = update->num_cached_tokens;
    if (update->finished) return r;
  }
  ADD_FAILURE() << "request timed out";
  return r;
}

std::vector<int32_t> prompt(int32_t len, int32_t seed = 0) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < len; ++i) ids.push_back((seed * 97 + i * 31 + 5) % 500 + 3);
  return ids;
}

std::vector<int32_t> extend(std::vector<int32_t> ids, int32_t extra, int32_t seed) {
  const std::vector<int32_t> tail = prompt(extra, seed);
  ids.insert(ids.end(), tail.begin(), tail.end());
  return ids;
}

GenerationRequest request(std::vector<int32_t> ids) {
  return {.prompt_ids = std::move(ids), .sampling = {.temperature = 0, .logprobs = 20}, .max_tokens = 4};
}

class PrefixCacheExactness : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
  }
  // A fresh engine (and KV pool) per call: `cold` has prefix caching off.
  std::unique_ptr<test::CheckedEngine> engine(bool caching, int64_t num_kv_blocks = 128, int32_t budget = 2048) {
    runners_.push_back(std::make_unique<ModelRunner>(*loaded_.model, *backend_,
                                                     RunnerOptions{.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 48}));
    return std::make_unique<test::CheckedEngine>(*runners_.back(), *tokenizer_, std::vector<int32_t>{},
                                    EngineOptions{.max_num_batched_tokens = budget,
                                                  .enable_prefix_caching = caching});
  }
  Result cold(const std::vector<int32_t>& ids) { return wait(*engine(false)->submit(request(ids))); }
  void expect_same(const Result& got, const Result& want) {
    ASSERT_EQ(got.tokens, want.tokens);
    // The k-th largest log-probabilities agree; which of two near-tied tokens ranks first
    // may differ by rounding, so ids are not compared rank by rank.
    for (size_t i = 0; i < got.logprobs.size(); ++i) {
      EXPECT_NEAR(got.logprobs[i].logprob, want.logprobs[i].logprob, kLogprobTolerance);
      for (size_t k = 0; k < got.logprobs[i].top.size(); ++k)
        EXPECT_NEAR(got.logprobs[i].top[k].logprob, want.logprobs[i].top[k].logprob, kLogprobTolerance);
    }
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<ModelRunner>> runners_;
};

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
                                           "deepseek_v3"));

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
