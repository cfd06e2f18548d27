// What the draft-model and MTP speculation tests share: the greedy request mix (a prompt of
// k + 1 tokens, a chunked one, n > 1, logprobs, penalties), waves of requests run one after
// another (later waves hit the prefix cache), the preemption and seeded-sampling requests,
// equality of results, and the failed-step check of a second runner.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_test_support.h"

namespace strata::test {

using SpeculationResults = std::vector<std::vector<ChoiceResult>>;

// Six greedy requests of 24 tokens; prompt lengths k + 1, 5, 13, 100 (chunked at 64), 30, 21.
std::vector<GenerationRequest> speculation_greedy_requests(int32_t num_drafts);
// Four greedy requests of 20 tokens on 20-token prompts: a tiny KV pool preempts some.
std::vector<GenerationRequest> preemption_requests();
// Two seeded sampled requests (one with top-p and a presence penalty).
std::vector<GenerationRequest> seeded_sampled_requests();
// Each wave is submitted once the one before has finished.
std::vector<SpeculationResults> run_waves(CheckedEngine& engine,
                                          const std::vector<std::vector<GenerationRequest>>& waves);
// Tokens and finish reasons equal; log-probabilities within logprob_tolerance (exact up to
// f32 summation on the CPU; on the GPU verify rows and decode rows take different kernels).
void expect_same_results(const SpeculationResults& got, const SpeculationResults& want, const std::string& what,
                         double logprob_tolerance = 1e-4);
// A step that throws (the 3rd) fails its request and frees the second runner's state (the
// CheckedEngine checks its pools); the engine then serves the request as plain decoding does.
void expect_failed_step_frees_state(ModelRunner& runner, ModelRunner& draft_runner, const text::Tokenizer& tokenizer,
                                    const SpeculativeOptions& speculative);

}  // namespace strata::test
