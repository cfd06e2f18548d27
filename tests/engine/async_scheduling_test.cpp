// Async scheduling (step N+1 queued before step N's tokens are read back; they reach it on
// the device) gives exactly what the synchronous loop gives: the same tokens, texts, finish
// reasons and log-probabilities for greedy, seeded, n > 1, stop-token, stop-string and
// penalised requests, under preemption, with the prefix cache, on dense and hybrid models;
// and every KV block and SSM slot comes back.
#include <gtest/gtest.h>

#include <algorithm>

#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

using test::ChoiceResult;
using RequestResult = std::vector<ChoiceResult>;  // per choice

std::vector<int32_t> prompt(int32_t seed, int32_t len) { return test::engine_prompt(seed, len); }

// Greedy, seeded, n = 3, logprobs and penalties side by side; requests 0-3 share a prefix.
std::vector<GenerationRequest> workload() {
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 8; ++i) {
    GenerationRequest r{.prompt_ids = i < 4 ? prompt(1, 20) : prompt(i, 5 + 9 * i), .max_tokens = 6 + 2 * i};
    if (i < 4) r.prompt_ids.push_back(100 + i);
    r.sampling.temperature = i % 2 == 0 ? 0.0f : 0.9f;
    r.sampling.seed = 11 + i;
    if (i == 3) r.n = 3;
    if (i == 5) r.sampling.logprobs = 3;
    if (i == 6) r.sampling = {.temperature = 0.7f, .repetition_penalty = 1.3f, .frequency_penalty = 0.5f, .seed = 5};
    requests.push_back(std::move(r));
  }
  return requests;
}

class AsyncScheduling : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
  }

  // Runs the requests concurrently on a fresh runner; checks every block and slot is back.
  std::vector<RequestResult> run(const std::vector<GenerationRequest>& requests, bool async, int64_t num_kv_blocks,
                                 int32_t budget) {
    ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = num_kv_blocks, .num_ssm_slots = 48});
    test::CheckedEngine engine(runner, *tokenizer_, {}, {.max_num_batched_tokens = budget, .async_scheduling = async});
    std::vector<RequestResult> results = test::run_concurrently(engine, requests);
    engine.shutdown(std::chrono::seconds(5));
    stats_ = engine.stats();
    const int32_t cached = runner.block_pool().num_free();  // cached blocks count as free
    EXPECT_EQ(cached, num_kv_blocks);
    // Free slots, less those the prefix cache keeps snapshots in: the same in both modes.
    ssm_free_ = runner.ssm_pool() != nullptr ? runner.ssm_pool()->num_free() : 0;
    return results;
  }

  void expect_same(const std::vector<RequestResult>& got, const std::vector<RequestResult>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].size(), want[i].size());
      for (size_t c = 0; c < got[i].size(); ++c) {
        EXPECT_EQ(got[i][c].tokens, want[i][c].tokens) << "request " << i << " choice " << c;
        EXPECT_EQ(got[i][c].text, want[i][c].text) << "request " << i << " choice " << c;
        EXPECT_EQ(got[i][c].finish, want[i][c].finish) << "request " << i << " choice " << c;
        ASSERT_EQ(got[i][c].logprobs.size(), want[i][c].logprobs.size());
        for (size_t t = 0; t < got[i][c].logprobs.size(); ++t)
          EXPECT_NEAR(got[i][c].logprobs[t].logprob, want[i][c].logprobs[t].logprob, 1e-4f);
      }
    }
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  EngineStatsSnapshot stats_;
  int ssm_free_ = 0;
};

TEST_P(AsyncScheduling, MixedRequestsMatchTheSynchronousLoop) {
  const std::vector<GenerationRequest> requests = workload();
  const std::vector<RequestResult> sync = run(requests, false, 256, 64);
  const int sync_ssm_free = ssm_free_;
  expect_same(run(requests, true, 256, 64), sync);
  EXPECT_EQ(ssm_free_, sync_ssm_free);
}

// A stop token or stop string ends a request after its next step was already queued: that
// row runs for nothing, and nothing of it reaches the client.
TEST_P(AsyncScheduling, StopsDecidedOnTheHostMatchTheSynchronousLoop) {
  std::vector<GenerationRequest> requests = workload();
  const std::vector<RequestResult> free_running = run(requests, false, 256, 64);
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::vector<int32_t>& tokens = free_running[i][0].tokens;
    if (tokens.size() < 5) continue;
    if (i % 2 == 0) requests[i].stop_token_ids = {tokens[3]};
    if (i % 2 == 1) requests[i].stop = {"<" + std::to_string(tokens[2]) + ">"};
  }
  const std::vector<RequestResult> sync = run(requests, false, 256, 64);
  expect_same(run(requests, true, 256, 64), sync);
  EXPECT_EQ(sync[0][0].finish, FinishReason::kStop);
  EXPECT_EQ(sync[1][0].finish, FinishReason::kStop);
}

// 12 blocks of 16 tokens for eight requests: sequences are preempted and recomputed, some
// while their newest token is still on its way back.
TEST_P(AsyncScheduling, PreemptionUnderATinyKvPoolMatchesTheSynchronousLoop) {
  const std::vector<GenerationRequest> requests = workload();
  const std::vector<RequestResult> sync = run(requests, false, 12, 64);
  EXPECT_GT(stats_.preemptions_total, 0u);
  expect_same(run(requests, true, 12, 64), sync);
  EXPECT_GT(stats_.preemptions_total, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AsyncScheduling, ::testing::Values("qwen3", "qwen3_moe", "qwen3_next", "mamba2",
                                                                      "nemotron_h_moe", "qwen3_5"));

}  // namespace
}  // namespace strata
