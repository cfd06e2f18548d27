// Sampled requests under speculation keep plain sampling's distribution: a few thousand
// seeded requests at temperature 1 through the engine with and without speculation (a
// draft model, an EAGLE-3 head, and n-gram drafts), and a two-sample chi-square test on the
// tokens at the positions speculation decides (the second, by rejection or replacement; the
// third, a bonus).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engine/engine_test_support.h"
#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "test_support.h"

namespace strata {
namespace {

constexpr int32_t kSamples = 4000;

// tokens[i][p]: request i's output token at position p.
std::vector<std::vector<int32_t>> sample(test::EngineFixture& f, const EngineOptions& options,
                                         const GenerationRequest& request, ModelRunner* draft,
                                         EngineStatsSnapshot& stats) {
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 512});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, options, draft);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t i = 0; i < kSamples; ++i) {
    GenerationRequest r = request;
    r.sampling.seed = static_cast<uint64_t>(i) + (draft != nullptr || options.speculative.num_speculative_tokens > 0
                                                      ? 1000000 : 0);  // independent samples in each arm
    streams.push_back(engine.submit(std::move(r)));
  }
  std::vector<std::vector<int32_t>> tokens;
  for (auto& stream : streams) tokens.push_back(test::collect_choices(*stream, 1)[0].tokens);
  engine.shutdown(std::chrono::seconds(5));
  stats = engine.stats();
  return tokens;
}

// Two-sample chi-square statistic over the tokens at `position` (bins with fewer than 10
// samples in both arms together merged), and its degrees of freedom.
std::pair<double, int> homogeneity(const std::vector<std::vector<int32_t>>& a,
                                   const std::vector<std::vector<int32_t>>& b, size_t position) {
  std::map<int32_t, std::pair<double, double>> bins;
  for (const auto& t : a) bins[t.at(position)].first += 1;
  for (const auto& t : b) bins[t.at(position)].second += 1;
  std::vector<std::pair<double, double>> merged;
  std::pair<double, double> rest{0, 0};
  for (const auto& [token, counts] : bins) {
    if (counts.first + counts.second < 10) {
      rest.first += counts.first;
      rest.second += counts.second;
    } else {
      merged.push_back(counts);
    }
  }
  if (rest.first + rest.second > 0) merged.push_back(rest);
  double chi = 0;
  for (const auto& [x, y] : merged) chi += (x - y) * (x - y) / (x + y);  // equal sample sizes
  return {chi, static_cast<int>(merged.size()) - 1};
}

// The chi-square quantile at p = 0.001 (Wilson-Hilferty).
double critical_value(int dof) {
  const double d = dof, z = 3.09;
  return d * std::pow(1 - 2 / (9 * d) + z * std::sqrt(2 / (9 * d)), 3);
}

void expect_same_distribution(const std::vector<std::vector<int32_t>>& plain,
                              const std::vector<std::vector<int32_t>>& speculative) {
  for (size_t position : {0, 1, 2}) {
    const auto [chi, dof] = homogeneity(plain, speculative, position);
    EXPECT_GT(dof, 3) << "position " << position << ": too few distinct tokens to tell distributions apart";
    EXPECT_LT(chi, critical_value(dof)) << "position " << position << " (" << dof << " degrees of freedom)";
  }
}

// Plain sampling against speculation with `draft` proposing, on a 4-token prompt and 3 tokens.
void expect_draft_runner_keeps_the_distribution(test::EngineFixture& f, const SpeculativeOptions& speculative,
                                                ModelRunner& draft, const SamplingParams& sampling) {
  const GenerationRequest request{.prompt_ids = test::engine_prompt(1, 4), .sampling = sampling, .max_tokens = 3,
                                  .ignore_eos = true};
  EngineStatsSnapshot stats;
  const auto plain = sample(f, {}, request, nullptr, stats);
  const auto proposed = sample(f, {.speculative = speculative}, request, &draft, stats);
  EXPECT_EQ(stats.spec_num_drafts_total, static_cast<uint64_t>(kSamples));  // one verify each: the second token
  EXPECT_GT(stats.spec_accepted_tokens_total, 0u);
  EXPECT_LT(stats.spec_accepted_tokens_total, stats.spec_draft_tokens_total);
  expect_same_distribution(plain, proposed);
}

TEST(SpeculativeSampling, DraftModelKeepsTheDistributionAtTemperatureOne) {
  test::EngineFixture f;
  const LoadedModel draft_model = load_model({.model_path = test::fixture_path("hf/llama")}, *f.backend);
  ModelRunner draft(*draft_model.model, *f.backend, {.num_kv_blocks = 512});
  // The whole vocabulary, and top-k with a penalty (the processed distribution, fewer bins).
  for (const SamplingParams& sampling : {SamplingParams{.temperature = 1},
                                         SamplingParams{.temperature = 1, .top_k = 12, .presence_penalty = 1}}) {
    SCOPED_TRACE(sampling.top_k);
    expect_draft_runner_keeps_the_distribution(
        f, {.num_speculative_tokens = 2, .method = SpeculativeMethod::kDraftModel, .draft_model = "llama"}, draft,
        sampling);
  }
}

// An EAGLE-3 head drafts from its draft vocabulary (half the target's ids, zero elsewhere); the
// random llama_eagle3 head fits the qwen3 fixture's shapes.
TEST(SpeculativeSampling, Eagle3HeadKeepsTheDistributionAtTemperatureOne) {
  test::EngineFixture f;
  const LoadedModel head = load_eagle3_head(test::fixture_path("hf/llama_eagle3"), *f.loaded.model, *f.backend);
  ModelRunner head_runner(*head.model, *f.backend, {.num_kv_blocks = 512});
  expect_draft_runner_keeps_the_distribution(f, {.num_speculative_tokens = 2, .method = SpeculativeMethod::kEagle3},
                                             head_runner, {.temperature = 1});
}

TEST(SpeculativeSampling, NgramDraftsKeepTheDistributionAtTemperatureOne) {
  test::EngineFixture f;
  // A bias towards three tokens the prompt repeats, so n-gram lookups find drafts often.
  const GenerationRequest request{.prompt_ids = {7, 8, 9, 7, 8, 9, 7, 8},
                                  .sampling = {.temperature = 1, .logit_bias = {{7, 6.0f}, {8, 6.0f}, {9, 6.0f}}},
                                  .max_tokens = 3, .ignore_eos = true};
  EngineStatsSnapshot stats;
  const auto plain = sample(f, {}, request, nullptr, stats);
  const EngineOptions options{.speculative = {.num_speculative_tokens = 2, .prompt_lookup_min = 1,
                                              .prompt_lookup_max = 3}};
  const auto speculative = sample(f, options, request, nullptr, stats);
  EXPECT_GT(stats.spec_num_drafts_total, static_cast<uint64_t>(kSamples / 5));
  EXPECT_GT(stats.spec_accepted_tokens_total, 0u);
  EXPECT_LT(stats.spec_accepted_tokens_total, stats.spec_draft_tokens_total);
  expect_same_distribution(plain, speculative);
}

}  // namespace
}  // namespace strata
