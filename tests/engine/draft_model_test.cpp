// Speculative decoding with a draft model gives exactly the tokens plain greedy decoding
// gives, on dense and hybrid targets and drafts (rejected guesses roll both models' state
// back): prompts of k + 1 tokens, chunked prefill, prefix-cache hits, n > 1, logprobs, stop
// tokens and preemption; a model as its own draft accepts every draft, another model or dummy
// weights accept few; a seeded sampled request replays; a vocabulary mismatch is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/speculation_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

using Results = test::SpeculationResults;

struct DraftCase {
  std::string target;
  std::string draft;
  bool dummy_draft = false;  // random weights of the draft's shapes: almost nothing accepted
  bool self = false;         // the target is its own draft: every draft accepted
};

std::string case_name(const ::testing::TestParamInfo<DraftCase>& info) {
  return info.param.target + "_" + info.param.draft + (info.param.dummy_draft ? "_dummy" : "");
}

constexpr int32_t kDrafts = 3;

class DraftModelSpeculation : public ::testing::TestWithParam<DraftCase> {
 protected:
  void SetUp() override {
    target_ = load_model({.model_path = test::fixture_path("hf/" + GetParam().target)}, *backend_);
    draft_ = load_model({.model_path = test::fixture_path("hf/" + GetParam().draft),
                         .load_format = GetParam().dummy_draft ? LoadFormat::kDummy : LoadFormat::kAuto},
                        *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(target_.config.vocab_size));
  }

  // Each wave is submitted once the one before has finished (later waves hit the prefix cache).
  std::vector<Results> run(const std::vector<std::vector<GenerationRequest>>& waves, bool speculate,
                           int64_t num_kv_blocks = 256) {
    ModelRunner runner(*target_.model, *backend_, {.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 48});
    ModelRunner draft(*draft_.model, *backend_, {.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 96});
    EngineOptions options{.max_num_batched_tokens = 64};
    if (speculate)
      options.speculative = {.num_speculative_tokens = kDrafts, .method = SpeculativeMethod::kDraftModel,
                             .draft_model = GetParam().draft};
    test::CheckedEngine engine(runner, *tokenizer_, {}, options, speculate ? &draft : nullptr);
    std::vector<Results> out = test::run_waves(engine, waves);
    engine.shutdown(std::chrono::seconds(5));
    stats_ = engine.stats();
    return out;
  }

  void expect_acceptance() const {
    EXPECT_GT(stats_.spec_draft_tokens_total, 0u);
    EXPECT_GT(stats_.spec_num_drafts_total, 0u);
    if (GetParam().self) {
      EXPECT_EQ(stats_.spec_accepted_tokens_total, stats_.spec_draft_tokens_total) << "a model is its own best draft";
    } else {
      EXPECT_LT(stats_.spec_accepted_tokens_total * 2, stats_.spec_draft_tokens_total) << "a stranger draft accepts few";
    }
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel target_, draft_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  EngineStatsSnapshot stats_;
};

TEST_P(DraftModelSpeculation, GreedyTokensEqualPlainDecoding) {
  std::vector<GenerationRequest> first = test::speculation_greedy_requests(kDrafts);
  const Results plain = run({first}, false)[0];
  first[2].stop_token_ids = {plain[2][0].tokens.at(9)};  // ends inside a verified run, likely
  const std::vector<GenerationRequest> again = first;   // its prompts hit the prefix cache
  const std::vector<Results> want = run({first, again}, false);
  const std::vector<Results> got = run({first, again}, true);
  test::expect_same_results(got[0], want[0], "first wave");
  test::expect_same_results(got[1], want[1], "prefix hits");
  EXPECT_GT(stats_.prefix_cache_hits_total, 0u);
  expect_acceptance();
}

TEST_P(DraftModelSpeculation, PreemptionUnderATinyKvPoolKeepsTokensExact) {
  const std::vector<GenerationRequest> requests = test::preemption_requests();
  const Results plain = run({requests}, false, 8)[0];
  const Results got = run({requests}, true, 8)[0];
  EXPECT_GT(stats_.preemptions_total, 0u);
  test::expect_same_results(got, plain, "preempted");
}

TEST_P(DraftModelSpeculation, SeededSampledRequestsReplay) {
  const std::vector<GenerationRequest> requests = test::seeded_sampled_requests();
  const Results once = run({requests}, true)[0];
  EXPECT_GT(stats_.spec_draft_tokens_total, 0u);
  const Results twice = run({requests}, true)[0];
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(once[i][0].tokens, twice[i][0].tokens) << i;
}

INSTANTIATE_TEST_SUITE_P(Pairs, DraftModelSpeculation,
                         ::testing::Values(DraftCase{.target = "qwen3", .draft = "qwen3", .self = true},
                                           DraftCase{.target = "qwen3", .draft = "llama"},
                                           DraftCase{.target = "qwen3_next", .draft = "qwen3_next", .self = true},
                                           DraftCase{.target = "qwen3_next", .draft = "qwen3_next", .dummy_draft = true},
                                           DraftCase{.target = "qwen3", .draft = "mamba2"},
                                           DraftCase{.target = "mamba2", .draft = "mamba2", .self = true}),
                         case_name);

// A step that throws fails its requests and frees their draft state (CheckedEngine checks
// the draft's pools); the engine then serves the next request exactly.
TEST(DraftModel, AFailedStepFreesTheDraftStateAndServingGoesOn) {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  const LoadedModel model = load_model({.model_path = test::fixture_path("hf/qwen3_next")}, *backend);
  const auto tokenizer = text::make_id_tokenizer(static_cast<int32_t>(model.config.vocab_size));
  ModelRunner runner(*model.model, *backend, {.num_kv_blocks = 64, .num_ssm_slots = 16});
  ModelRunner draft(*model.model, *backend, {.num_kv_blocks = 64, .num_ssm_slots = 16});
  test::expect_failed_step_frees_state(
      runner, draft, *tokenizer,
      {.num_speculative_tokens = 3, .method = SpeculativeMethod::kDraftModel, .draft_model = "qwen3_next"});
}

TEST(DraftModel, RefusesADraftWithAnotherVocabulary) {
  test::EngineFixture f;
  // The qwen3 fixture's config with a larger vocabulary, as dummy weights.
  const std::string dir = test::make_dir_once(test::temp_dir() + "/draft_vocab_1000", [](const std::string& tmp) {
    std::ifstream in(test::fixture_path("hf/qwen3/config.json"));
    nlohmann::json config = nlohmann::json::parse(in);
    config["vocab_size"] = 1000;
    std::ofstream(tmp + "/config.json") << config.dump();
  });
  LoadedModel other = load_model({.model_path = dir, .load_format = LoadFormat::kDummy}, *f.backend);
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 16});
  ModelRunner draft(*other.model, *f.backend, {.num_kv_blocks = 16});
  const EngineOptions options{.speculative = {.num_speculative_tokens = 2, .method = SpeculativeMethod::kDraftModel,
                                              .draft_model = "other"}};
  try {
    Engine engine(runner, *f.tokenizer, {}, options, &draft);
    ADD_FAILURE() << "a draft with another vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
