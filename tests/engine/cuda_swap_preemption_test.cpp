// Swap on the GPU: KV blocks and SSM state go to pinned host memory through copy_rows'
// stream-ordered copies and come back; a sequence stepped alone resumes with logits
// bit-equal to a run never preempted (decode steps replay CUDA graphs in both runs), and an
// async engine under a tiny KV pool swaps, resumes and finishes every request. Skipped
// without a GPU.
#include <gtest/gtest.h>

#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "engine/engine_test_support.h"
#include "engine/swap_test_support.h"
#include "test_support.h"

namespace strata {
namespace {

class CudaSwapPreemption : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_cuda_backend(0);
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible";
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
  }

  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
};

TEST_P(CudaSwapPreemption, ASwappedSequenceResumesBitForBit) {
  test::expect_swap_resumes_bit_for_bit(*loaded_.model, *backend_);
}

TEST_P(CudaSwapPreemption, AnAsyncEngineSwapsAndFinishesEveryRequest) {
  const auto tokenizer = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
  ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = 12, .num_ssm_slots = 32});
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 8; ++i)
    requests.push_back({.prompt_ids = test::engine_prompt(i, 9 + 7 * i), .sampling = {.temperature = 0},
                        .max_tokens = 24, .ignore_eos = true});
  EngineStatsSnapshot stats;
  {
    test::CheckedEngine engine(runner, *tokenizer, {}, {.max_num_batched_tokens = 32, .swap_space_gib = 1});
    EXPECT_TRUE(engine.async_scheduling());
    for (const auto& result : test::run_concurrently(engine, requests)) EXPECT_EQ(result[0].tokens.size(), 24u);
    engine.shutdown(std::chrono::seconds(10));
    stats = engine.stats();
  }
  EXPECT_GT(stats.swapped_out_total, 0u);
  EXPECT_EQ(stats.swapped_in_total, stats.swapped_out_total);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSwapPreemption, ::testing::Values("qwen3", "qwen3_moe", "qwen3_next", "mamba2", "nemotron_h"));

}  // namespace
}  // namespace strata
