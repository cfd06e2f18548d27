// The CPU sampling op on hand-made logits: exact token choices for greedy ties, top-k,
// top-p, min-p (ties lowest id first), penalties and top logprobs, and agreement with the
// per-sequence Sampler that runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "strata/engine/sampler.h"
#include "strata/ops/sampling.h"
#include "test_support.h"

namespace strata {
namespace {

using ops::kMaxTopLogprobs;

struct RowOut {
  int32_t token = -2;
  float logprob = 0;
  std::vector<int32_t> top_ids = std::vector<int32_t>(kMaxTopLogprobs);
  std::vector<float> top_values = std::vector<float>(kMaxTopLogprobs);
};

RowOut run(std::vector<float> logits, ops::SamplingRow row, std::vector<ops::PenaltyToken> penalties = {}) {
  RowOut out;
  row.num_penalty_tokens = static_cast<int32_t>(penalties.size());
  ops::sample_tokens(ops::SamplingArgs{
      .logits = Tensor::view(logits.data(), DType::kF32, {1, static_cast<int64_t>(logits.size())}),
      .rows = Tensor::view(&row, DType::kI32, {1, ops::kSamplingRowWords}),
      .penalty_tokens = penalties.empty() ? Tensor()
                                          : Tensor::view(penalties.data(), DType::kI32,
                                                         {static_cast<int64_t>(penalties.size()), 2}),
      .token_ids = Tensor::view(&out.token, DType::kI32, {1}),
      .logprobs = Tensor::view(&out.logprob, DType::kF32, {1}),
      .top_ids = Tensor::view(out.top_ids.data(), DType::kI32, {1, kMaxTopLogprobs}),
      .top_logprobs = Tensor::view(out.top_values.data(), DType::kF32, {1, kMaxTopLogprobs})});
  return out;
}

// log-probabilities 0.5, 0.25, 0.15, 0.07, 0.03: relative weights 1, .5, .3, .14, .06.
std::vector<float> five() { return {std::log(0.5f), std::log(0.25f), std::log(0.15f), std::log(0.07f), std::log(0.03f)}; }

uint32_t bits(double u) { return static_cast<uint32_t>(u * 4294967296.0); }
constexpr uint32_t kLast = 0xffffffffu;

TEST(SamplingOp, GreedyTakesTheLowestIdOfTiedMaxima) {
  EXPECT_EQ(run({1.0f, 3.0f, 3.0f, 2.0f}, {.temperature = 0}).token, 1);
  EXPECT_EQ(run({1.0f, 3.0f, 3.0f, 2.0f}, {.temperature = 1, .top_k = 1, .random_bits = kLast}).token, 1);
}

TEST(SamplingOp, DrawWalksKeptTokensInIdOrder) {
  // all kept: weights 1, .5, .3, .14, .06 of 2.0; u = .49 -> 0.98 < 1 -> token 0, u = .51 -> 1
  EXPECT_EQ(run(five(), {.random_bits = bits(0.49)}).token, 0);
  EXPECT_EQ(run(five(), {.random_bits = bits(0.51)}).token, 1);
  EXPECT_EQ(run(five(), {.random_bits = kLast}).token, 4);
  EXPECT_EQ(run(five(), {.random_bits = 0}).token, 0);
}

TEST(SamplingOp, TopKTopPMinPKeepExactlyTheExpectedTokens) {
  EXPECT_EQ(run(five(), {.top_k = 2, .random_bits = kLast}).token, 1);
  EXPECT_EQ(run(five(), {.top_k = 2, .random_bits = bits(0.6)}).token, 0);   // 0.9 of 1.5
  EXPECT_EQ(run(five(), {.top_k = 2, .random_bits = bits(0.7)}).token, 1);   // 1.05 of 1.5
  EXPECT_EQ(run(five(), {.top_p = 0.8f, .random_bits = kLast}).token, 2);    // 0.5 + 0.25 < 0.8
  EXPECT_EQ(run(five(), {.top_p = 0.7f, .random_bits = kLast}).token, 1);
  EXPECT_EQ(run(five(), {.min_p = 0.2f, .random_bits = kLast}).token, 2);    // p >= 0.1
  EXPECT_EQ(run(five(), {.top_k = 4, .top_p = 0.9f, .min_p = 0.4f, .random_bits = kLast}).token, 1);
}

TEST(SamplingOp, TiesAreKeptLowestIdFirst) {
  const std::vector<float> tied = {2.0f, 1.0f, 2.0f, 2.0f, 0.0f};
  EXPECT_EQ(run(tied, {.top_k = 2, .random_bits = kLast}).token, 2);
  EXPECT_EQ(run(tied, {.top_k = 2, .random_bits = 0}).token, 0);
  const std::vector<float> flat = {0.0f, 0.0f, 0.0f, 0.0f};
  EXPECT_EQ(run(flat, {.top_p = 0.5f, .random_bits = kLast}).token, 1);  // two of four reach 0.5
  EXPECT_EQ(run(flat, {.top_p = 0.51f, .random_bits = kLast}).token, 2);
}

TEST(SamplingOp, TemperatureSharpensTheDistribution) {
  // T = 0.5 squares the relative weights: 1, .25, .09, ...; u = 0.7 of 1.363 lands on token 0
  EXPECT_EQ(run(five(), {.temperature = 0.5f, .random_bits = bits(0.7)}).token, 0);
  EXPECT_EQ(run(five(), {.temperature = 1.0f, .random_bits = bits(0.7)}).token, 1);
}

TEST(SamplingOp, PenaltiesChangeTheChoiceButNotTheLogprobs) {
  const std::vector<float> l = {1.0f, 0.9f, -1.0f};
  const RowOut rep = run(l, {.temperature = 0, .repetition_penalty = 2.0f}, {{0, 0}, {2, 0}});
  EXPECT_EQ(rep.token, 1);  // token 0: 1.0 / 2 = 0.5 < 0.9
  const double lse = std::log(std::exp(1.0) + std::exp(0.9) + std::exp(-1.0));
  EXPECT_NEAR(rep.logprob, 0.9 - lse, 1e-6);
  const RowOut freq = run({1.0f, 0.5f}, {.temperature = 0, .presence_penalty = 0.5f, .frequency_penalty = 0.25f},
                          {{0, 2}});
  EXPECT_EQ(freq.token, 1);  // 1.0 - 0.5 - 0.5 = 0 < 0.5
  EXPECT_EQ(run({1.0f, 0.5f}, {.temperature = 0, .presence_penalty = 0.4f}, {{0, 1}}).token, 0);
}

TEST(SamplingOp, TopLogprobsAreTheRawDistributionMostLikelyFirst) {
  const RowOut out = run({std::log(0.25f), std::log(0.5f), std::log(0.25f)}, {.temperature = 0, .num_top_logprobs = 3});
  EXPECT_EQ(out.token, 1);
  EXPECT_NEAR(out.logprob, std::log(0.5), 1e-6);
  EXPECT_EQ(out.top_ids[0], 1);
  EXPECT_EQ(out.top_ids[1], 0);  // tie: lowest id first
  EXPECT_EQ(out.top_ids[2], 2);
  EXPECT_EQ(out.top_ids[3], -1);
  EXPECT_NEAR(out.top_values[1], std::log(0.25), 1e-6);
}

TEST(SamplingOp, AgreesWithTheSampler) {
  const Tensor logits = test::random_f32({1000}, 7, -6.0f, 6.0f);
  const std::vector<SamplingParams> cases = {
      {.temperature = 0.7f, .top_k = 40, .top_p = 0.9f, .seed = 1},
      {.temperature = 1.0f, .min_p = 0.05f, .seed = 2},
      {.temperature = 1.3f, .top_p = 0.5f, .repetition_penalty = 1.3f, .frequency_penalty = 0.5f, .seed = 3,
       .logprobs = 5}};
  const std::vector<int32_t> prompt = {1, 5, 9, 500}, output = {5, 5, 77};
  for (const SamplingParams& params : cases) {
    Sampler sampler(params);
    std::mt19937_64 rng(*params.seed);
    for (int step = 0; step < 20; ++step) {
      std::vector<float> row(logits.data_as<float>(), logits.data_as<float>() + 1000);
      const SampleResult got = sampler.sample(row, prompt, output);
      std::vector<ops::PenaltyToken> penalties;
      ops::SamplingRow op_row = make_sampling_row(params, static_cast<uint32_t>(rng() >> 32), prompt, output, penalties);
      const std::vector<float> raw(logits.data_as<float>(), logits.data_as<float>() + 1000);
      const RowOut want = run(raw, op_row, penalties);
      EXPECT_EQ(got.token_id, want.token);
      EXPECT_FLOAT_EQ(got.logprob, want.logprob);
      ASSERT_EQ(got.top.size(), static_cast<size_t>(std::max(params.logprobs, 0)));
      for (size_t j = 0; j < got.top.size(); ++j) EXPECT_EQ(got.top[j].token_id, want.top_ids[j]);
    }
  }
}

TEST(SamplingOp, PenaltyTokensAreDistinctWithOutputCounts) {
  std::vector<ops::PenaltyToken> penalties = {{99, 9}};
  const std::vector<int32_t> prompt = {4, 2, 4}, output = {2, 7, 2};
  const ops::SamplingRow row = make_sampling_row({.repetition_penalty = 1.1f}, 0, prompt, output, penalties);
  EXPECT_EQ(row.penalty_begin, 1);
  ASSERT_EQ(row.num_penalty_tokens, 3);
  EXPECT_EQ(penalties[1].token_id, 2);
  EXPECT_EQ(penalties[1].output_count, 2);
  EXPECT_EQ(penalties[2].token_id, 4);
  EXPECT_EQ(penalties[2].output_count, 0);
  EXPECT_EQ(penalties[3].token_id, 7);
  std::vector<ops::PenaltyToken> output_only;
  EXPECT_EQ(make_sampling_row({.presence_penalty = 0.1f}, 0, prompt, output, output_only).num_penalty_tokens, 2);
  std::vector<ops::PenaltyToken> none;
  EXPECT_EQ(make_sampling_row({}, 0, prompt, output, none).num_penalty_tokens, 0);
}

}  // namespace
}  // namespace strata
