#include "engine/prefix_cache_test_support.h"

#include "strata/text/id_tokenizer.h"

namespace strata::test {

CachedRunResult wait_result(RequestStream& stream) {
  CachedRunResult r;
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

std::vector<int32_t> cache_prompt(int32_t len, int32_t seed) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < len; ++i) ids.push_back((seed * 97 + i * 31 + 5) % 500 + 3);
  return ids;
}

std::vector<int32_t> extend_prompt(std::vector<int32_t> ids, int32_t extra, int32_t seed) {
  const std::vector<int32_t> tail = cache_prompt(extra, seed);
  ids.insert(ids.end(), tail.begin(), tail.end());
  return ids;
}

GenerationRequest greedy_request(std::vector<int32_t> ids, int32_t max_tokens) {
  return {.prompt_ids = std::move(ids), .sampling = {.temperature = 0, .logprobs = 20}, .max_tokens = max_tokens};
}

void PrefixCacheEngineTest::SetUp() {
  loaded_ = load_model({.model_path = fixture_path("hf/" + GetParam())}, *backend_);
  tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
}

std::unique_ptr<CheckedEngine> PrefixCacheEngineTest::engine(bool caching, int64_t num_kv_blocks, int32_t budget) {
  return engine(EngineOptions{.max_num_batched_tokens = budget, .enable_prefix_caching = caching}, num_kv_blocks);
}

std::unique_ptr<CheckedEngine> PrefixCacheEngineTest::engine(const EngineOptions& options, int64_t num_kv_blocks) {
  runners_.push_back(std::make_unique<ModelRunner>(*loaded_.model, *backend_,
                                                   RunnerOptions{.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 48,
                                                                 .kv_cache_dtype = kv_cache_dtype_}));
  return std::make_unique<CheckedEngine>(*runners_.back(), *tokenizer_, std::vector<int32_t>{}, options);
}

CachedRunResult PrefixCacheEngineTest::cold(const GenerationRequest& request) {
  return wait_result(*engine(false)->submit(request));
}

void PrefixCacheEngineTest::expect_same(const CachedRunResult& got, const CachedRunResult& want) {
  ASSERT_EQ(got.tokens, want.tokens);
  ASSERT_EQ(got.logprobs.size(), want.logprobs.size());
  for (size_t i = 0; i < got.logprobs.size(); ++i) {
    EXPECT_NEAR(got.logprobs[i].logprob, want.logprobs[i].logprob, kLogprobTolerance);
    ASSERT_EQ(got.logprobs[i].top.size(), want.logprobs[i].top.size());
    for (size_t k = 0; k < got.logprobs[i].top.size(); ++k)
      EXPECT_NEAR(got.logprobs[i].top[k].logprob, want.logprobs[i].top[k].logprob, kLogprobTolerance);
  }
}

}  // namespace strata::test
