// Async scheduling on the GPU: the previous step's tokens reach the next step through
// fill_pending_tokens on the device (eager steps and CUDA-graph replays), the sampler's
// results come back through alternating pinned halves, and stop rules run a step late. Each
// request runs alone, so both modes run the same kernels on the same rows, and the tokens
// and log-probabilities must be identical. Skipped without a GPU.
#include <gtest/gtest.h>

#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

using Choice = test::ChoiceResult;

std::vector<int32_t> prompt(int32_t seed, int32_t len) { return test::engine_prompt(seed, len); }

class CudaAsyncScheduling : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_cuda_backend(0);
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible";
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
  }

  // The requests one after another on a fresh runner and engine.
  std::vector<std::vector<Choice>> run(const std::vector<GenerationRequest>& requests, bool async) {
    ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = 128, .num_ssm_slots = 16});
    test::CheckedEngine engine(runner, *tokenizer_, {}, {.async_scheduling = async});
    std::vector<std::vector<Choice>> results;
    for (const GenerationRequest& r : requests) results.push_back(test::collect_choices(*engine.submit(r), r.n));
    engine.shutdown(std::chrono::seconds(10));
    EXPECT_EQ(runner.block_pool().num_free(), 128);
    return results;
  }

  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
};

TEST_P(CudaAsyncScheduling, RequestsRunAloneMatchTheSynchronousLoopExactly) {
  std::vector<GenerationRequest> requests = {
      {.prompt_ids = prompt(1, 19), .sampling = {.temperature = 0}, .max_tokens = 24, .ignore_eos = true},
      {.prompt_ids = prompt(2, 40), .sampling = {.temperature = 0.8f, .seed = 3}, .max_tokens = 20, .ignore_eos = true},
      {.prompt_ids = prompt(3, 7), .sampling = {.temperature = 0, .logprobs = 5}, .max_tokens = 12, .ignore_eos = true},
      {.prompt_ids = prompt(4, 25), .sampling = {.temperature = 0.9f, .seed = 8}, .max_tokens = 10, .ignore_eos = true,
       .n = 2},
      {.prompt_ids = prompt(5, 30), .sampling = {.temperature = 0.7f, .repetition_penalty = 1.2f, .seed = 4},
       .max_tokens = 16, .ignore_eos = true}};
  const std::vector<std::vector<Choice>> free_running = run(requests, false);
  // A stop token decided a step late: that request's next row runs for nothing, and the
  // request after it must not notice.
  GenerationRequest stopped = requests[0];
  stopped.stop_token_ids = {free_running[0][0].tokens.at(5)};
  requests.insert(requests.begin() + 1, stopped);
  const std::vector<std::vector<Choice>> sync = run(requests, false), async = run(requests, true);
  EXPECT_EQ(sync[1][0].finish, FinishReason::kStop);
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t c = 0; c < sync[i].size(); ++c) {
      EXPECT_EQ(async[i][c].tokens, sync[i][c].tokens) << "request " << i << " choice " << c;
      EXPECT_EQ(async[i][c].finish, sync[i][c].finish) << "request " << i << " choice " << c;
      ASSERT_EQ(async[i][c].logprobs.size(), sync[i][c].logprobs.size());
      for (size_t t = 0; t < sync[i][c].logprobs.size(); ++t)
        EXPECT_EQ(async[i][c].logprobs[t].logprob, sync[i][c].logprobs[t].logprob) << i << " " << t;
    }
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaAsyncScheduling,
                         ::testing::Values("qwen3", "qwen3_next", "mamba2", "gpt_oss", "deepseek_v3", "gemma3_global",
                                           "qwen3_5"));

}  // namespace
}  // namespace strata
