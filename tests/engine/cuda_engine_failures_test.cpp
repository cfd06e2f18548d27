// Errors never end the process, on the GPU: a failed CUDA call throws a DeviceError (sticky
// only when the context is lost) and the backend keeps working after a non-sticky one; an
// injected step fault with async scheduling (a step queued while another is in flight)
// fails only its requests and the rest are served exactly; a sticky one stops the engine.
// Skipped without a GPU.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/backend/device_error.h"
#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#endif

namespace strata {
namespace {

#if defined(STRATA_WITH_CUDA)
TEST(CudaDeviceErrors, LostContextErrorsAreStickyOthersAreNot) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorECCUncorrectable,
                        cudaErrorMisalignedAddress, cudaErrorHardwareStackError})
    EXPECT_TRUE(cuda::is_sticky_error(e)) << cudaGetErrorName(e);
  for (cudaError_t e : {cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorInvalidConfiguration})
    EXPECT_FALSE(cuda::is_sticky_error(e)) << cudaGetErrorName(e);
}
#endif

TEST(CudaDeviceErrors, AFailedAllocationThrowsAndTheBackendKeepsWorking) {
  std::unique_ptr<Backend> backend = make_cuda_backend(0);
  if (!backend) GTEST_SKIP() << "no CUDA GPU visible";
  try {
    backend->empty(DType::kU8, {int64_t{1} << 52});  // 4 PiB
    ADD_FAILURE() << "the allocation succeeded";
  } catch (const DeviceError& e) {
    EXPECT_FALSE(e.sticky()) << e.what();
  }
  const Tensor host = test::random_f32({64}, 1);
  EXPECT_EQ(test::max_abs_diff(backend->to_host(backend->from_host(host)), host), 0.0f);
}

std::vector<int32_t> prompt(int32_t seed, int32_t len) { return test::engine_prompt(seed, len); }

class CudaEngineFaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_cuda_backend(0);
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible";
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
    runner_ = std::make_unique<ModelRunner>(*loaded_.model, *backend_,
                                            RunnerOptions{.num_kv_blocks = 128, .num_ssm_slots = 16});
  }

  // b alone on a fresh engine: what it must give after a's failure.
  std::vector<int32_t> alone(const GenerationRequest& b) {
    test::CheckedEngine engine(*runner_, *tokenizer_, {}, {.async_scheduling = true});
    return test::collect_choices(*engine.submit(b), 1)[0].tokens;
  }

  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::unique_ptr<ModelRunner> runner_;
};

TEST_P(CudaEngineFaults, AStepFaultFailsItsRequestsAndTheRestAreServed) {
  const GenerationRequest a{.prompt_ids = prompt(1, 19), .sampling = {.temperature = 0}, .max_tokens = 12,
                            .ignore_eos = true, .n = 2};
  const GenerationRequest b{.prompt_ids = prompt(2, 33), .sampling = {.temperature = 0}, .max_tokens = 8,
                            .ignore_eos = true};
  const std::vector<int32_t> b_alone = alone(b);
  test::CheckedEngine engine(*runner_, *tokenizer_, {},
                             {.max_num_seqs = 1, .async_scheduling = true, .fault_injection = {.fail_at_step = 4}});
  auto a_stream = engine.submit(a);
  auto b_stream = engine.submit(b);
  for (const test::ChoiceResult& c : test::collect_choices(*a_stream, 2)) EXPECT_EQ(c.finish, FinishReason::kError);
  const test::ChoiceResult served = test::collect_choices(*b_stream, 1)[0];
  EXPECT_EQ(served.finish, FinishReason::kLength);
  EXPECT_EQ(served.tokens, b_alone);
  EXPECT_TRUE(engine.running());
  EXPECT_EQ(engine.stats().requests_failed_total, 1u);
}

TEST_P(CudaEngineFaults, AStickyFaultFailsEveryRequestAndStopsTheEngine) {
  test::CheckedEngine engine(*runner_, *tokenizer_, {},
                             {.max_num_seqs = 1, .async_scheduling = true,
                              .fault_injection = {.fail_at_step = 3, .sticky = true}});
  auto running = engine.submit({.prompt_ids = prompt(1, 19), .max_tokens = 40, .ignore_eos = true});
  auto waiting = engine.submit({.prompt_ids = prompt(2, 19), .max_tokens = 40, .ignore_eos = true, .n = 2});
  EXPECT_EQ(test::collect_choices(*running, 1)[0].finish, FinishReason::kError);
  for (const test::ChoiceResult& c : test::collect_choices(*waiting, 2)) EXPECT_EQ(c.finish, FinishReason::kError);
  EXPECT_TRUE(engine.fatal_error().has_value());
  EXPECT_FALSE(engine.running());
  EXPECT_THROW(engine.submit({.prompt_ids = prompt(3, 5)}), Error);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaEngineFaults, ::testing::Values("qwen3", "qwen3_next"));

}  // namespace
}  // namespace strata
