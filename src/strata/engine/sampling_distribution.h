// The distribution a request's next token is drawn from, on the host, exactly as plain
// sampling draws it: logit bias, penalties, temperature, top-k, top-p, min-p, as the
// kernels' integer weights (ops/sampling_weights.h). Rejection sampling of speculative
// drafts reads it for the target and for a draft model.
#pragma once

#include <span>
#include <vector>

#include "strata/engine/sampler.h"
#include "strata/engine/sampling_params.h"

namespace strata {

struct DistributionInput {
  std::span<const float> logits;         // [vocab] the model's raw logits
  std::span<const int32_t> prompt_ids;   // penalties read these
  std::span<const int32_t> output_ids;   // the output before this token
};

// [vocab] probabilities summing to 1; one-hot at the argmax for a greedy request.
std::vector<double> sampling_distribution(const SamplingParams& params, const DistributionInput& input);

// The SampleResult plain sampling reports for `token_id` from this row: its logprob and the
// top `params.logprobs` under the biased raw distribution.
SampleResult host_sample_result(const SamplingParams& params, std::span<const float> logits, int32_t token_id);

}  // namespace strata
