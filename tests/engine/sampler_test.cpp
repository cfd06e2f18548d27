// The sampler on known distributions: greedy, top-k, top-p and min-p keep exactly the
// tokens they should, penalties change the right logits, seeds reproduce.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "strata/engine/sampler.h"

namespace strata {
namespace {

// log-probabilities 0.5, 0.25, 0.15, 0.07, 0.03 for tokens 0..4.
std::vector<float> logits() { return {std::log(0.5f), std::log(0.25f), std::log(0.15f), std::log(0.07f), std::log(0.03f)}; }

std::set<int32_t> support(SamplingParams params, int draws = 2000) {
  std::set<int32_t> seen;
  params.seed = 1;
  Sampler sampler(params);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> l = logits();
    seen.insert(sampler.sample(l, {}, {}).token_id);
  }
  return seen;
}

TEST(Sampler, GreedyTakesTheArgmax) {
  Sampler sampler({.temperature = 0});
  std::vector<float> l = {0.1f, 2.0f, 1.9f};
  EXPECT_EQ(sampler.sample(l, {}, {}).token_id, 1);
}

TEST(Sampler, TopKTopPMinPKeepExactlyTheExpectedTokens) {
  EXPECT_EQ(support({.temperature = 1}), (std::set<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(support({.temperature = 1, .top_k = 2}), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(support({.temperature = 1, .top_p = 0.8f}), (std::set<int32_t>{0, 1, 2}));   // 0.5+0.25 < 0.8
  EXPECT_EQ(support({.temperature = 1, .top_p = 0.75f}), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(support({.temperature = 1, .min_p = 0.2f}), (std::set<int32_t>{0, 1, 2}));   // p >= 0.1
}

TEST(Sampler, FrequenciesFollowTheDistribution) {
  Sampler sampler({.temperature = 1, .seed = 3});
  std::vector<int> counts(5, 0);
  for (int i = 0; i < 20000; ++i) {
    std::vector<float> l = logits();
    ++counts[sampler.sample(l, {}, {}).token_id];
  }
  EXPECT_NEAR(counts[0] / 20000.0, 0.5, 0.02);
  EXPECT_NEAR(counts[2] / 20000.0, 0.15, 0.02);
}

TEST(Sampler, SeedsReproduce) {
  auto draw = [](uint64_t seed) {
    Sampler sampler({.temperature = 1, .seed = seed});
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) {
      std::vector<float> l = logits();
      out.push_back(sampler.sample(l, {}, {}).token_id);
    }
    return out;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
}

TEST(Sampler, PenaltiesAdjustSeenTokens) {
  Sampler rep({.temperature = 0, .repetition_penalty = 2.0f});
  std::vector<float> l = {1.0f, 0.9f, -1.0f};
  const std::vector<int32_t> prompt = {0, 2};
  EXPECT_EQ(rep.sample(l, prompt, {}).token_id, 1);  // token 0: 1.0 / 2 = 0.5 < 0.9
  EXPECT_FLOAT_EQ(l[2], -2.0f);                       // negative logits are multiplied
  Sampler freq({.temperature = 0, .presence_penalty = 0.5f, .frequency_penalty = 0.25f});
  std::vector<float> m = {1.0f, 0.5f};
  const std::vector<int32_t> output = {0, 0};
  freq.sample(m, {}, output);
  EXPECT_FLOAT_EQ(m[0], 1.0f - 0.5f - 0.5f);
}

TEST(Sampler, LogprobsAreOfTheRawDistribution) {
  Sampler sampler({.temperature = 0, .logprobs = 2});
  std::vector<float> l = logits();
  const SampleResult r = sampler.sample(l, {}, {});
  EXPECT_NEAR(r.logprob, std::log(0.5f), 1e-5);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[1].token_id, 1);
  EXPECT_NEAR(r.top[1].logprob, std::log(0.25f), 1e-5);
}

}  // namespace
}  // namespace strata
