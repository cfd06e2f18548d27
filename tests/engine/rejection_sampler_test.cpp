// Rejection sampling keeps the target distribution exactly: over many draws at a fixed seed
// the first token (and the bonus after a kept draft) pass a chi-square test against p, for
// draft-model proposals (q a distribution) and n-gram ones (q one-hot, whose tokens are plain
// sampling's draws whatever the drafts); greedy targets keep only argmax matches; and the
// distribution the sampler draws from is the processed one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "strata/engine/rejection_sampler.h"
#include "strata/engine/sampling_distribution.h"

namespace strata {
namespace {

const std::vector<double> kTarget = {0.40, 0.25, 0.15, 0.10, 0.06, 0.04};
const std::vector<double> kTargetAfter = {0.05, 0.05, 0.10, 0.20, 0.30, 0.30};  // at position 1
const std::vector<double> kDraft = {0.10, 0.10, 0.20, 0.30, 0.20, 0.10};

double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs) {
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  double chi = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    const double expected = probs[i] * static_cast<double>(n);
    chi += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi;
}

constexpr double kChiSquare5DofP999 = 20.52;  // 5 degrees of freedom, p = 0.001

struct Counts {
  std::vector<int64_t> first = std::vector<int64_t>(6), bonus = std::vector<int64_t>(6);
};

// k = 1 drafts: each from the draft distribution (draft_probs set) or the fixed n-gram token.
Counts sample_many(bool draft_model, int32_t ngram_token, int num_draws) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::discrete_distribution<int32_t> draft(kDraft.begin(), kDraft.end());
  const std::vector<std::vector<double>> q = {kDraft};
  Counts counts;
  for (int i = 0; i < num_draws; ++i) {
    const int32_t x = draft_model ? draft(rng) : ngram_token;
    const DraftVerification v = verify_drafts(
        {.drafts = std::span<const int32_t>(&x, 1),
         .draft_probs = draft_model ? std::span<const std::vector<double>>(q) : std::span<const std::vector<double>>(),
         .target_probs = [](int32_t j) { return j == 0 ? kTarget : kTargetAfter; },
         .uniform = [&] { return uniform(rng); }});
    ++counts.first[v.tokens[0]];
    if (v.num_accepted == 1) ++counts.bonus[v.tokens.at(1)];
  }
  return counts;
}

TEST(RejectionSampler, DraftModelProposalsKeepTheTargetDistribution) {
  const Counts counts = sample_many(true, 0, 200000);
  EXPECT_LT(chi_square(counts.first, kTarget), kChiSquare5DofP999);
  EXPECT_LT(chi_square(counts.bonus, kTargetAfter), kChiSquare5DofP999);
}

TEST(RejectionSampler, NgramProposalsKeepTheTargetDistribution) {
  for (int32_t token : {0, 3, 5}) {
    const Counts counts = sample_many(false, token, 100000);
    EXPECT_LT(chi_square(counts.first, kTarget), kChiSquare5DofP999) << token;
    // The draft is kept with probability p(x) exactly.
    const int64_t kept = std::accumulate(counts.bonus.begin(), counts.bonus.end(), int64_t{0});
    EXPECT_NEAR(static_cast<double>(kept) / 100000, kTarget[token], 0.005) << token;
  }
}

TEST(RejectionSampler, GreedyTargetKeepsArgmaxMatchesOnly) {
  const std::vector<int32_t> drafts = {2, 1, 4};
  auto one_hot = [](int32_t t) { std::vector<double> p(6); p[t] = 1; return p; };
  const std::vector<int32_t> argmax = {2, 1, 3, 0};
  const DraftVerification v = verify_drafts({.drafts = drafts,
                                             .target_probs = [&](int32_t j) { return one_hot(argmax[j]); },
                                             .uniform = [] { return 0.999; }});
  EXPECT_EQ(v.num_accepted, 2);
  EXPECT_EQ(v.tokens, (std::vector<int32_t>{2, 1, 3}));
  const std::vector<int32_t> good = {2, 1, 3};
  const DraftVerification all = verify_drafts({.drafts = good,
                                               .target_probs = [&](int32_t j) { return one_hot(argmax[j]); },
                                               .uniform = [] { return 0.5; }});
  EXPECT_EQ(all.num_accepted, 3);
  EXPECT_EQ(all.tokens, (std::vector<int32_t>{2, 1, 3, 0}));
}

// One-hot drafts: each position takes one number of the generator and draws from p with it, as
// plain sampling does, so whatever drafts are offered the tokens are the plain draws.
TEST(RejectionSampler, NgramProposalsGivePlainSamplingsTokens) {
  const std::vector<std::vector<double>> p = {kTarget, kTargetAfter, kDraft, kTarget};
  const std::vector<double> uniforms = {0.55, 0.12, 0.93, 0.31};
  std::vector<int32_t> plain;
  for (size_t j = 0; j < p.size(); ++j) plain.push_back(draw_from(p[j], uniforms[j]));
  ASSERT_EQ(plain, (std::vector<int32_t>{1, 2, 5, 0}));
  for (const std::vector<int32_t>& drafts : std::vector<std::vector<int32_t>>{{1, 2, 5}, {1, 2, 0}, {1}, {0, 2}}) {
    size_t drawn = 0;
    const DraftVerification v = verify_drafts({.drafts = drafts,
                                               .target_probs = [&](int32_t j) { return p[j]; },
                                               .uniform = [&] { return uniforms.at(drawn++); }});
    EXPECT_EQ(v.tokens, std::vector<int32_t>(plain.begin(), plain.begin() + static_cast<int64_t>(v.tokens.size())));
    EXPECT_EQ(drawn, v.tokens.size()) << "one number a token";
    EXPECT_EQ(v.tokens.size(), static_cast<size_t>(v.num_accepted) + 1);
  }
}

TEST(SamplingDistribution, IsTheProcessedDistribution) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.25f), std::log(0.15f), std::log(0.07f),
                                     std::log(0.03f)};
  const std::vector<double> top_k = sampling_distribution({.temperature = 1, .top_k = 2}, {.logits = logits});
  EXPECT_NEAR(top_k[0], 2.0 / 3, 1e-6);
  EXPECT_NEAR(top_k[1], 1.0 / 3, 1e-6);
  EXPECT_EQ(top_k[2], 0.0);
  const std::vector<double> greedy = sampling_distribution({.temperature = 0}, {.logits = logits});
  EXPECT_EQ(greedy, (std::vector<double>{1, 0, 0, 0, 0}));
  // A presence penalty of ln 2 halves token 0's weight once it is in the output.
  const std::vector<int32_t> output = {0};
  const std::vector<double> penalised = sampling_distribution(
      {.temperature = 1, .presence_penalty = std::log(2.0f)}, {.logits = logits, .output_ids = output});
  EXPECT_NEAR(penalised[0] / penalised[1], 1.0, 1e-5);
  // The Sampler draws from exactly these weights: its frequencies match at a fixed seed.
  Sampler sampler({.temperature = 0.7f, .top_p = 0.9f, .seed = 11});
  const std::vector<double> p = sampling_distribution({.temperature = 0.7f, .top_p = 0.9f}, {.logits = logits});
  std::vector<int64_t> counts(5);
  for (int i = 0; i < 20000; ++i) {
    std::vector<float> row = logits;
    ++counts[sampler.sample(row, {}, {}).token_id];
  }
  for (size_t t = 0; t < p.size(); ++t) EXPECT_NEAR(counts[t] / 20000.0, p[t], 0.012) << t;
}

}  // namespace
}  // namespace strata
