// Helpers of the prefix-cache engine tests: deterministic prompts, a request's tokens,
// log-probabilities and cached-token count gathered from its stream, and a fixture that
// builds engines on one model (cached or cold) and compares a hit with a cold run.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "engine/engine_test_support.h"

namespace strata::test {

// What transformers itself agrees to between implementations on these fixtures (f32 CPU).
inline constexpr float kLogprobTolerance = 1e-4f;

struct CachedRunResult {
  std::vector<int32_t> tokens;
  std::vector<SampleResult> logprobs;
  int32_t num_cached_tokens = 0;
};

CachedRunResult wait_result(RequestStream& stream);

// `len` ids in [3, 503), different for each seed (the same generator as the older tests).
std::vector<int32_t> cache_prompt(int32_t len, int32_t seed = 0);
// ids followed by `extra` ids of cache_prompt(extra, seed).
std::vector<int32_t> extend_prompt(std::vector<int32_t> ids, int32_t extra, int32_t seed);
// Greedy, top-20 log-probabilities, max_tokens new tokens.
GenerationRequest greedy_request(std::vector<int32_t> ids, int32_t max_tokens = 4);

// A fixture model (the test parameter, a folder under hf/) on two CPU threads.
class PrefixCacheEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  // A fresh engine (and KV pool) per call: `cold` ones have prefix caching off.
  std::unique_ptr<CheckedEngine> engine(bool caching, int64_t num_kv_blocks = 128, int32_t budget = 2048);
  std::unique_ptr<CheckedEngine> engine(const EngineOptions& options, int64_t num_kv_blocks = 128);
  CachedRunResult cold(const GenerationRequest& request);
  CachedRunResult cold(const std::vector<int32_t>& ids) { return cold(greedy_request(ids)); }
  // Same tokens; the k-th largest log-probabilities agree (two near-tied tokens may swap ranks).
  static void expect_same(const CachedRunResult& got, const CachedRunResult& want);

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  KvCacheDType kv_cache_dtype_ = KvCacheDType::kAuto;  // of every engine made after it is set
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<ModelRunner>> runners_;
};

}  // namespace strata::test
