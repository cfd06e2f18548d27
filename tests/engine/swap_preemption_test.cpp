// Preemption by swap (--swap-space): a preempted sequence's KV blocks and SSM state go to host
// memory and come back, so it resumes exactly where it stopped: through the engine the same
// tokens as a run never preempted (chunked prefill, n > 1, prefix hits, seeded sampling and
// penalties, synchronous and async), and stepped alone bit-equal logits, on dense, MoE and
// every hybrid fixture. Without host space preemption falls back to recomputing.
#include <gtest/gtest.h>


#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "engine/swap_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

using test::ChoiceResult;
using RequestResult = std::vector<ChoiceResult>;  // per choice

// Requests 0-3 share a 40-token prefix (prefix hits); 3 asks for n = 3; odd ones are seeded
// samples, 6 has penalties; every one reports its top-5 log-probabilities.
std::vector<GenerationRequest> workload() {
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 8; ++i) {
    GenerationRequest r{.prompt_ids = test::engine_prompt(i < 4 ? 1 : i, i < 4 ? 40 : 7 + 11 * i),
                        .max_tokens = 10 + 3 * i};
    if (i < 4) r.prompt_ids.push_back(100 + i);
    r.sampling = {.temperature = i % 2 == 0 ? 0.0f : 0.9f, .seed = 11u + static_cast<uint64_t>(i), .logprobs = 5};
    if (i == 3) r.n = 3;
    if (i == 6) r.sampling = {.temperature = 0.7f, .repetition_penalty = 1.3f, .frequency_penalty = 0.5f, .seed = 5, .logprobs = 5};
    requests.push_back(std::move(r));
  }
  return requests;
}

struct RunConfig {
  int64_t num_kv_blocks = 256;
  double swap_space_gib = 0;
  bool async = false;
};

class SwapPreemption : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
  }

  // The requests concurrently on a fresh runner, 32-token steps (prompts prefill in chunks).
  std::vector<RequestResult> run(const std::vector<GenerationRequest>& requests, const RunConfig& config) {
    ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = config.num_kv_blocks, .num_ssm_slots = 48});
    test::CheckedEngine engine(runner, *tokenizer_, {},
                               {.max_num_batched_tokens = 32, .swap_space_gib = config.swap_space_gib,
                                .async_scheduling = config.async});
    std::vector<RequestResult> results = test::run_concurrently(engine, requests);
    engine.shutdown(std::chrono::seconds(5));
    stats_ = engine.stats();
    return results;
  }

  // The same tokens; log-probabilities within 1e-4, as batches of other sizes differ by an ulp
  // on the CPU (the bit-for-bit test below runs the same shapes).
  static void expect_same(const std::vector<RequestResult>& got, const std::vector<RequestResult>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].size(), want[i].size());
      for (size_t c = 0; c < got[i].size(); ++c) {
        const ChoiceResult &g = got[i][c], &w = want[i][c];
        EXPECT_EQ(g.tokens, w.tokens) << "request " << i << " choice " << c;
        EXPECT_EQ(g.finish, w.finish) << "request " << i << " choice " << c;
        ASSERT_EQ(g.logprobs.size(), w.logprobs.size());
        for (size_t t = 0; t < g.logprobs.size(); ++t) {
          EXPECT_NEAR(g.logprobs[t].logprob, w.logprobs[t].logprob, 1e-4f) << "request " << i << " token " << t;
          ASSERT_EQ(g.logprobs[t].top.size(), w.logprobs[t].top.size());
          for (size_t k = 0; k < g.logprobs[t].top.size(); ++k) {
            EXPECT_EQ(g.logprobs[t].top[k].token_id, w.logprobs[t].top[k].token_id);
            EXPECT_NEAR(g.logprobs[t].top[k].logprob, w.logprobs[t].top[k].logprob, 1e-4f);
          }
        }
      }
    }
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  EngineStatsSnapshot stats_;
};

TEST_P(SwapPreemption, SwappedAndResumedEqualsNeverPreempted) {
  const std::vector<GenerationRequest> requests = workload();
  const std::vector<RequestResult> never = run(requests, {});
  EXPECT_EQ(stats_.preemptions_total, 0u);
  for (bool async : {false, true}) {
    expect_same(run(requests, {.num_kv_blocks = 12, .swap_space_gib = 1, .async = async}), never);
    EXPECT_GT(stats_.swapped_out_total, 0u) << "async " << async;
    EXPECT_EQ(stats_.swapped_in_total, stats_.swapped_out_total);
    EXPECT_EQ(stats_.preemptions_total, stats_.swapped_out_total);  // room for every one: none recomputed
    EXPECT_EQ(stats_.swap_in_bytes_total, stats_.swap_out_bytes_total);
    EXPECT_GT(stats_.swap_out_bytes_total, 0u);
    EXPECT_EQ(stats_.swap_space_used_bytes, 0);
  }
}

// Host space for no block at all: every preemption recomputes, with the same tokens.
TEST_P(SwapPreemption, FullHostSpaceFallsBackToRecompute) {
  const std::vector<GenerationRequest> requests = workload();
  const std::vector<RequestResult> never = run(requests, {});
  expect_same(run(requests, {.num_kv_blocks = 12, .swap_space_gib = 1e-9}), never);
  EXPECT_GT(stats_.preemptions_total, 0u);
  EXPECT_EQ(stats_.swapped_out_total, 0u);
}

// Stepped alone by hand, mid-prefill and mid-decode swaps resume with bit-equal logits.
TEST_P(SwapPreemption, ASwappedSequenceResumesBitForBit) { test::expect_swap_resumes_bit_for_bit(*loaded_.model, *backend_); }

INSTANTIATE_TEST_SUITE_P(Fixtures, SwapPreemption,
                         ::testing::Values("llama", "qwen3", "qwen3_moe", "qwen3_next", "mamba2", "nemotron_h",
                                           "nemotron_h_moe", "qwen3_5", "qwen3_5_moe_text", "qwen4_exp"));

}  // namespace
}  // namespace strata
