// Errors never end the process: a step that throws (FaultInjection) fails the requests of
// that step with FinishReason::kError and an error message, frees all they held, and the
// engine serves the requests queued behind them exactly; a sticky device error fails every
// request, refuses new ones and stops the engine. Dense and hybrid models, sync and async.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/engine/offline_generate.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

using test::ChoiceResult;

struct Outcome {
  std::vector<ChoiceResult> choices;
  std::string error;
};

// Reads a stream to its end, keeping the error the engine reported.
Outcome read_all(RequestStream& stream, int32_t n) {
  Outcome out{.choices = std::vector<ChoiceResult>(n)};
  while (auto update = stream.pop(std::chrono::milliseconds(60000))) {
    for (const ChoiceDelta& d : update->deltas) {
      out.choices[d.index].tokens.insert(out.choices[d.index].tokens.end(), d.token_ids.begin(), d.token_ids.end());
      if (d.finish_reason != FinishReason::kNone) out.choices[d.index].finish = d.finish_reason;
    }
    if (!update->error.empty()) out.error = update->error;
    if (update->finished) return out;
  }
  ADD_FAILURE() << "request timed out";
  return out;
}

GenerationRequest greedy(int32_t seed, int32_t max_tokens, int32_t n = 1) {
  return {.prompt_ids = test::engine_prompt(seed, 12 + seed), .sampling = {.temperature = 0},
          .max_tokens = max_tokens, .ignore_eos = true, .n = n};
}

class EngineFaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
    tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
    runner_ = std::make_unique<ModelRunner>(*loaded_.model, *backend_,
                                            RunnerOptions{.num_kv_blocks = 64, .num_ssm_slots = 8});
  }
  std::vector<int32_t> alone(const GenerationRequest& r) {
    return generate_offline(*runner_, {.prompt_ids = r.prompt_ids, .sampling = r.sampling, .max_tokens = r.max_tokens});
  }
  void expect_step_fault_fails_only_its_requests(bool async);

  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::unique_ptr<ModelRunner> runner_;
};

// max_num_seqs 1: request A (n = 2: its second choice forks off the first after the prompt)
// holds the batch from step 1 on, so step 3 holds only A's rows and B waits; A fails, B then
// runs exactly as it would alone.
void EngineFaults::expect_step_fault_fails_only_its_requests(bool async) {
  const std::vector<int32_t> b_alone = alone(greedy(2, 6));
  test::CheckedEngine engine(*runner_, *tokenizer_, {},
                             {.max_num_seqs = 1, .async_scheduling = async,
                              .fault_injection = {.fail_at_step = 3}});
  auto a = engine.submit(greedy(1, 10, /*n=*/2));
  auto b = engine.submit(greedy(2, 6));
  const Outcome failed = read_all(*a, 2);
  EXPECT_NE(failed.error.find("injected fault in step 3"), std::string::npos) << failed.error;
  for (const ChoiceResult& c : failed.choices) {
    EXPECT_EQ(c.finish, FinishReason::kError);
    EXPECT_LT(c.tokens.size(), 10u);
  }
  const Outcome served = read_all(*b, 1);
  EXPECT_TRUE(served.error.empty());
  EXPECT_EQ(served.choices[0].finish, FinishReason::kLength);
  EXPECT_EQ(served.choices[0].tokens, b_alone);
  auto c = engine.submit(greedy(2, 6));  // and later requests too
  EXPECT_EQ(read_all(*c, 1).choices[0].tokens, b_alone);
  EXPECT_TRUE(engine.running());
  const EngineStatsSnapshot stats = engine.stats();
  EXPECT_EQ(stats.requests_failed_total, 1u);
  EXPECT_EQ(stats.requests_finished_total, 2u);
}

TEST_P(EngineFaults, AStepThatThrowsFailsItsRequestsAndTheEngineServesTheRest) {
  expect_step_fault_fails_only_its_requests(/*async=*/false);
}

// With async scheduling the failing step is queued while the previous one is in flight.
TEST_P(EngineFaults, WithAsyncSchedulingTheStepInFlightFailsWithIt) {
  expect_step_fault_fails_only_its_requests(/*async=*/true);
}

TEST_P(EngineFaults, AStickyDeviceErrorFailsEveryRequestAndStopsTheEngine) {
  test::CheckedEngine engine(*runner_, *tokenizer_, {},
                             {.max_num_seqs = 1, .fault_injection = {.fail_at_step = 2, .sticky = true}});
  auto running = engine.submit(greedy(1, 50));
  auto waiting = engine.submit(greedy(2, 50, /*n=*/3));
  for (auto* stream : {running.get(), waiting.get()}) {
    const Outcome out = read_all(*stream, stream == waiting.get() ? 3 : 1);
    EXPECT_NE(out.error.find("injected fault in step 2"), std::string::npos) << out.error;
    for (const ChoiceResult& c : out.choices) EXPECT_EQ(c.finish, FinishReason::kError);
  }
  ASSERT_TRUE(engine.fatal_error().has_value());
  EXPECT_FALSE(engine.running());  // /health answers 503
  EXPECT_THROW(engine.submit(greedy(3, 4)), Error);
  EXPECT_EQ(engine.stats().requests_failed_total, 2u);
}

TEST_P(EngineFaults, AFaultInTheFirstStepOfAForkingRequestFailsEveryChoice) {
  test::CheckedEngine engine(*runner_, *tokenizer_, {}, {.fault_injection = {.fail_at_step = 1}});
  const Outcome out = read_all(*engine.submit(greedy(4, 8, /*n=*/4)), 4);
  for (const ChoiceResult& c : out.choices) {
    EXPECT_EQ(c.finish, FinishReason::kError);
    EXPECT_TRUE(c.tokens.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EngineFaults, ::testing::Values("qwen3", "qwen3_next"));

}  // namespace
}  // namespace strata
