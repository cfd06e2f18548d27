#include "engine/speculation_test_support.h"

#include <gtest/gtest.h>

namespace strata::test {

std::vector<GenerationRequest> speculation_greedy_requests(int32_t num_drafts) {
  std::vector<GenerationRequest> requests;
  for (int32_t len : {num_drafts + 1, 5, 13, 100, 30, 21})
    requests.push_back({.prompt_ids = engine_prompt(len, len), .sampling = {.temperature = 0},
                        .max_tokens = 24, .ignore_eos = true});
  requests[4].n = 2;
  requests[5].sampling.logprobs = 2;
  requests[1].sampling.presence_penalty = 1.5f;  // greedy with penalties: verified on the host
  return requests;
}

std::vector<GenerationRequest> preemption_requests() {
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 4; ++i)
    requests.push_back({.prompt_ids = engine_prompt(i, 20), .sampling = {.temperature = 0}, .max_tokens = 20,
                        .ignore_eos = true});
  return requests;
}

std::vector<GenerationRequest> seeded_sampled_requests() {
  return {{.prompt_ids = engine_prompt(3, 9), .sampling = {.temperature = 1, .seed = 5}, .max_tokens = 16,
           .ignore_eos = true},
          {.prompt_ids = engine_prompt(4, 6),
           .sampling = {.temperature = 0.7f, .top_p = 0.9f, .presence_penalty = 0.5f, .seed = 6},
           .max_tokens = 16,
           .ignore_eos = true}};
}

std::vector<SpeculationResults> run_waves(CheckedEngine& engine,
                                          const std::vector<std::vector<GenerationRequest>>& waves) {
  std::vector<SpeculationResults> out;
  for (const auto& requests : waves) {
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (const GenerationRequest& r : requests) streams.push_back(engine.submit(r));
    SpeculationResults results;
    for (size_t i = 0; i < requests.size(); ++i) results.push_back(collect_choices(*streams[i], requests[i].n));
    out.push_back(std::move(results));
  }
  return out;
}

void expect_same_results(const SpeculationResults& got, const SpeculationResults& want, const std::string& what,
                         double logprob_tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t c = 0; c < want[i].size(); ++c) {
      EXPECT_EQ(got[i][c].tokens, want[i][c].tokens) << what << " request " << i << " choice " << c;
      EXPECT_EQ(got[i][c].finish, want[i][c].finish) << what << " request " << i << " choice " << c;
      ASSERT_EQ(got[i][c].logprobs.size(), want[i][c].logprobs.size());
      for (size_t t = 0; t < want[i][c].logprobs.size(); ++t)
        EXPECT_NEAR(got[i][c].logprobs[t].logprob, want[i][c].logprobs[t].logprob, logprob_tolerance) << what << i << " " << t;
    }
}

void expect_failed_step_frees_state(ModelRunner& runner, ModelRunner& draft_runner, const text::Tokenizer& tokenizer,
                                    const SpeculativeOptions& speculative) {
  const GenerationRequest request{.prompt_ids = engine_prompt(2, 7), .sampling = {.temperature = 0},
                                  .max_tokens = 12, .ignore_eos = true};
  std::vector<int32_t> plain;
  {
    CheckedEngine engine(runner, tokenizer, {}, {});
    plain = collect_choices(*engine.submit(request), 1)[0].tokens;
  }
  CheckedEngine engine(runner, tokenizer, {}, {.speculative = speculative, .fault_injection = {.fail_at_step = 3}},
                       &draft_runner);
  EXPECT_EQ(collect_choices(*engine.submit(request), 1)[0].finish, FinishReason::kError);
  EXPECT_EQ(collect_choices(*engine.submit(request), 1)[0].tokens, plain);
}

}  // namespace strata::test
