// Speculative decoding with a module fed the target's hidden states gives exactly the tokens plain
// greedy decoding gives: the checkpoint's multi-token-prediction module on Qwen3-Next (MoE) and
// Qwen3.5 (dense), and EAGLE-3 heads of one and two layers on the llama fixture ("llama_eagle3*", reading
// three target layers and drafting in a vocabulary of its own): prompts of k + 1 tokens, chunked prefill,
// prefix-cache hits, n > 1, penalties, logprobs and preemption. With one draft a step, the drafts
// and acceptances the engine counts are those the module's own logits over the finished sequence
// predict; sampled requests replay under a seed and draw their first token from the prompt's last
// row, wherever the chunks ended; a failed step frees the module's blocks; a config asking for mtp
// on a checkpoint without it is refused. CudaMtpSpeculation runs the greedy and preemption cases on
// the GPU, where verify steps of k + 1 rows a sequence take other kernels than decode's one row.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/speculation_test_support.h"
#include "model/eagle3_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/model/registry.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

using Results = test::SpeculationResults;
constexpr int32_t kDrafts = 3;

class MtpSpeculation : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible: CUDA speculation tests skipped";
    if (eagle3()) {
      target_ = load_model({.model_path = test::fixture_path("hf/llama")}, *backend_);
      head_ = load_eagle3_head(test::fixture_path("hf/" + GetParam()), *target_.model, *backend_);
    } else {
      target_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
      head_.model = build_mtp_module(*target_.model, *target_.weights);
    }
    mtp_ = head_.model.get();
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(target_.config.vocab_size));
  }

  bool eagle3() const { return GetParam().starts_with("llama_eagle3"); }
  SpeculativeMethod method() const { return eagle3() ? SpeculativeMethod::kEagle3 : SpeculativeMethod::kMtp; }

  // Each wave is submitted once the one before has finished (later waves hit the prefix cache).
  std::vector<Results> run(const std::vector<std::vector<GenerationRequest>>& waves, int32_t num_drafts,
                           int64_t num_kv_blocks = 256) {
    ModelRunner runner(*target_.model, *backend_, {.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 48});
    ModelRunner mtp(*mtp_, *backend_, {.num_kv_blocks = num_kv_blocks});
    EngineOptions options{.max_num_batched_tokens = 64};
    if (num_drafts > 0) options.speculative = {.num_speculative_tokens = num_drafts, .method = method()};
    test::CheckedEngine engine(runner, *tokenizer_, {}, options, num_drafts > 0 ? &mtp : nullptr);
    std::vector<Results> out = test::run_waves(engine, waves);
    engine.shutdown(std::chrono::seconds(5));
    stats_ = engine.stats();
    return out;
  }

  // The module's argmax after each position of `tokens` (entry t predicts token t + 2), on the
  // target's hidden states of the whole sequence.
  std::vector<int32_t> module_predictions(const std::vector<int32_t>& tokens) {
    if (eagle3()) return head_predictions(tokens);
    ModelRunner runner(*target_.model, *backend_, {.num_kv_blocks = 32, .keep_hidden_states = true});
    ModelRunner mtp(*mtp_, *backend_, {.num_kv_blocks = 32});
    std::vector<int32_t> blocks, mtp_blocks;
    int32_t slot = *runner.memory().acquire_slot(), no_slot = -1;
    const int32_t n = static_cast<int32_t>(tokens.size()) - 1;
    EXPECT_TRUE(runner.memory().reserve(blocks, n + 1) && mtp.memory().reserve(mtp_blocks, n));
    StepBatch step({{.seq_id = 0, .token_ids = tokens, .block_table = blocks, .ssm_slot = slot,
                     .logits = LogitsMode::kLast}}, runner.block_size());
    runner.execute(step);
    StepBatch mtp_step({{.seq_id = 0, .token_ids = {tokens.begin() + 1, tokens.end()}, .block_table = mtp_blocks,
                         .logits = LogitsMode::kAll}}, mtp.block_size());
    mtp_step.set_input_hidden_states(runner.last_hidden_states().slice_rows(0, n));
    const Tensor logits = mtp.execute(mtp_step);
    std::vector<int32_t> predictions;
    for (int64_t t = 0; t < n; ++t) {
      const float* row = logits.data_as<const float>() + t * logits.dim(1);
      predictions.push_back(static_cast<int32_t>(std::max_element(row, row + logits.dim(1)) - row));
    }
    runner.memory().free(blocks, slot);
    mtp.memory().free(mtp_blocks, no_slot);
    return predictions;
  }

  // The same for an EAGLE-3 head, its drafts mapped into the target's vocabulary.
  std::vector<int32_t> head_predictions(const std::vector<int32_t>& tokens) {
    test::Eagle3Harness harness(*target_.model, *mtp_, *backend_);
    const Tensor logits = harness.catch_up(tokens);
    std::vector<int32_t> predictions;
    for (int64_t t = 0; t < logits.dim(0); ++t)
      predictions.push_back(harness.draft_token(logits.data_as<const float>() + t * logits.dim(1)));
    return predictions;
  }

  void expect_greedy_tokens_equal_plain() {
  std::vector<GenerationRequest> first = test::speculation_greedy_requests(kDrafts);
  const Results plain = run({first}, 0)[0];
  first[2].stop_token_ids = {plain[2][0].tokens.at(9)};  // ends inside a verified run, likely
  const std::vector<GenerationRequest> again = first;   // its prompts hit the prefix cache
  const std::vector<Results> want = run({first, again}, 0);
  const std::vector<Results> got = run({first, again}, kDrafts);
  test::expect_same_results(got[0], want[0], "first wave", logprob_tolerance_);
  test::expect_same_results(got[1], want[1], "prefix hits", logprob_tolerance_);
  EXPECT_GT(stats_.prefix_cache_hits_total, 0u);
  EXPECT_GT(stats_.spec_num_drafts_total, 0u);
  EXPECT_GT(stats_.spec_draft_tokens_total, stats_.spec_num_drafts_total) << "chained drafts: more than one a step";
  if (GetParam() != "llama_eagle3_echo") return;  // random modules: drafts are seldom kept
  ASSERT_GE(stats_.spec_accepted_per_pos_total.size(), 2u);
  EXPECT_GT(stats_.spec_accepted_per_pos_total[1], 0u) << "a chained draft kept";
  }

  void expect_preemption_keeps_tokens_exact() {
    const std::vector<GenerationRequest> requests = test::preemption_requests();
    const Results plain = run({requests}, 0, 8)[0];
    const Results got = run({requests}, kDrafts, 8)[0];
    EXPECT_GT(stats_.preemptions_total, 0u);
    test::expect_same_results(got, plain, "preempted", logprob_tolerance_);
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  double logprob_tolerance_ = 1e-4;
  LoadedModel target_;
  LoadedModel head_;    // the EAGLE-3 head, or (model only) the checkpoint's MTP module
  const Model* mtp_ = nullptr;  // head_'s model
  std::unique_ptr<text::Tokenizer> tokenizer_;
  EngineStatsSnapshot stats_;
};

TEST_P(MtpSpeculation, GreedyTokensEqualPlainDecoding) { expect_greedy_tokens_equal_plain(); }

// One draft a step: the engine verifies, before each step's token, the module's prediction from
// the target's hidden states, so its counts follow from the module's logits over the output.
TEST_P(MtpSpeculation, DraftsAreTheModulesPredictions) {
  const GenerationRequest request{.prompt_ids = test::engine_prompt(7, 19), .sampling = {.temperature = 0},
                                  .max_tokens = 40, .ignore_eos = true};
  const std::vector<int32_t> output = run({{request}}, 1)[0][0][0].tokens;
  std::vector<int32_t> tokens = request.prompt_ids;
  tokens.insert(tokens.end(), output.begin(), output.end());
  const std::vector<int32_t> predicted = module_predictions(tokens);
  uint64_t drafts = 0, accepted = 0;
  // After each step the sequence knows `known` tokens; a draft goes with the next step unless
  // it would pass max_tokens.
  for (int32_t known = static_cast<int32_t>(request.prompt_ids.size()) + 1;
       known - static_cast<int32_t>(request.prompt_ids.size()) < request.max_tokens;) {
    const bool drafting = known - static_cast<int32_t>(request.prompt_ids.size()) + 1 < request.max_tokens;
    const bool kept = drafting && predicted[known - 2] == tokens[known];
    drafts += drafting ? 1 : 0;
    accepted += kept ? 1 : 0;
    known += kept ? 2 : 1;
  }
  EXPECT_EQ(stats_.spec_draft_tokens_total, drafts);
  EXPECT_EQ(stats_.spec_accepted_tokens_total, accepted);
  if (GetParam() == "llama_eagle3_echo") {
    EXPECT_GT(accepted, 0u) << "the echo head's drafts are kept";
  }
}

TEST_P(MtpSpeculation, PreemptionUnderATinyKvPoolKeepsTokensExact) { expect_preemption_keeps_tokens_exact(); }

TEST_P(MtpSpeculation, SeededSampledRequestsGoThroughRejectionSamplingAndReplay) {
  const std::vector<GenerationRequest> requests = test::seeded_sampled_requests();
  const Results once = run({requests}, kDrafts)[0];
  EXPECT_GT(stats_.spec_draft_tokens_total, 0u);
  const Results twice = run({requests}, kDrafts)[0];
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(once[i][0].tokens, twice[i][0].tokens) << i;
}

// A prompt of 65 tokens leaves its last token for a step of its own (64 a step), where the
// module could draft; a sampled request draws its first token there as plain decoding does.
TEST_P(MtpSpeculation, SampledFirstTokenComesFromThePromptsLastRow) {
  const GenerationRequest request{.prompt_ids = test::engine_prompt(8, 65), .sampling = {.temperature = 1, .seed = 9},
                                  .max_tokens = 8, .ignore_eos = true};
  const Results plain = run({{request}}, 0)[0];
  const Results speculative = run({{request}}, kDrafts)[0];
  EXPECT_GT(stats_.spec_draft_tokens_total, 0u);
  EXPECT_EQ(speculative[0][0].tokens.at(0), plain[0][0].tokens.at(0));
}

// llama_eagle3: a random EAGLE-3 head for the llama fixture; llama_eagle3_echo: one whose drafts
// the target's repeating runs keep (scripts/fixtures/make_eagle3_fixture.py --echo);
// llama_eagle3_2layer: a random head of two decoder layers (--layers 2).
INSTANTIATE_TEST_SUITE_P(Checkpoints, MtpSpeculation,
                         ::testing::Values("qwen3_next_mtp", "qwen3_5_mtp", "llama_eagle3", "llama_eagle3_echo",
                                           "llama_eagle3_2layer"),
                         [](const auto& info) { return info.param; });

class CudaMtpSpeculation : public MtpSpeculation {
 protected:
  void SetUp() override {
    backend_ = make_cuda_backend(0);
    // Verify rows (GEMM, prefill attention) and decode rows (GEMV, decode attention) round bf16
    // sums differently: tokens must match, log-probabilities within bf16 noise (seen: 6e-3).
    logprob_tolerance_ = 2e-2;
    MtpSpeculation::SetUp();
  }
};

TEST_P(CudaMtpSpeculation, GreedyTokensEqualPlainDecoding) { expect_greedy_tokens_equal_plain(); }
TEST_P(CudaMtpSpeculation, PreemptionUnderATinyKvPoolKeepsTokensExact) { expect_preemption_keeps_tokens_exact(); }

INSTANTIATE_TEST_SUITE_P(Cuda, CudaMtpSpeculation,
                         ::testing::Values("qwen3_next_mtp", "qwen3_5_mtp", "llama_eagle3", "llama_eagle3_echo",
                                           "llama_eagle3_2layer"),
                         [](const auto& info) { return info.param; });

// A step that throws fails its requests and frees the module's blocks (CheckedEngine checks its
// pool); the engine then serves the next request exactly.
TEST(MtpProposer, AFailedStepFreesTheModuleStateAndServingGoesOn) {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  const LoadedModel model = load_model({.model_path = test::fixture_path("hf/qwen3_next_mtp")}, *backend);
  const std::unique_ptr<Model> module = build_mtp_module(*model.model, *model.weights);
  const auto tokenizer = text::make_id_tokenizer(static_cast<int32_t>(model.config.vocab_size));
  ModelRunner runner(*model.model, *backend, {.num_kv_blocks = 64, .num_ssm_slots = 16});
  ModelRunner mtp(*module, *backend, {.num_kv_blocks = 64});
  test::expect_failed_step_frees_state(runner, mtp, *tokenizer,
                                       {.num_speculative_tokens = 2, .method = SpeculativeMethod::kMtp});
}

// The llama fixture with its EAGLE-3 head, on the CPU.
struct Eagle3Pair {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  LoadedModel model = load_model({.model_path = test::fixture_path("hf/llama")}, *backend);
  LoadedModel head = load_eagle3_head(test::fixture_path("hf/llama_eagle3"), *model.model, *backend);
  std::unique_ptr<text::Tokenizer> tokenizer = text::make_id_tokenizer(static_cast<int32_t>(model.config.vocab_size));
};

TEST(MtpProposer, AFailedStepFreesTheEagle3HeadStateAndServingGoesOn) {
  Eagle3Pair f;
  ModelRunner runner(*f.model.model, *f.backend, {.num_kv_blocks = 64});
  ModelRunner head_runner(*f.head.model, *f.backend, {.num_kv_blocks = 64});
  test::expect_failed_step_frees_state(runner, head_runner, *f.tokenizer,
                                       {.num_speculative_tokens = 2, .method = SpeculativeMethod::kEagle3});
}

// An EAGLE-3 head serves method eagle3 only, and method eagle3 needs one.
TEST(MtpProposer, AnEagle3HeadGoesWithMethodEagle3Only) {
  Eagle3Pair f;
  ModelRunner runner(*f.model.model, *f.backend, {.num_kv_blocks = 16});
  ModelRunner head_runner(*f.head.model, *f.backend, {.num_kv_blocks = 16});
  ModelRunner draft_runner(*f.model.model, *f.backend, {.num_kv_blocks = 16});
  const EngineOptions mtp{.speculative = {.num_speculative_tokens = 2, .method = SpeculativeMethod::kMtp}};
  EXPECT_THROW({ Engine engine(runner, *f.tokenizer, {}, mtp, &head_runner); }, Error);
  const EngineOptions eagle3{.speculative = {.num_speculative_tokens = 2, .method = SpeculativeMethod::kEagle3}};
  EXPECT_THROW({ Engine engine(runner, *f.tokenizer, {}, eagle3, &draft_runner); }, Error);
}

TEST(MtpProposer, MtpWithoutItsRunnerIsRefused) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 16});
  const EngineOptions options{.speculative = {.num_speculative_tokens = 2, .method = SpeculativeMethod::kMtp}};
  EXPECT_THROW({ Engine engine(runner, *f.tokenizer, {}, options); }, Error);
}

}  // namespace
}  // namespace strata
