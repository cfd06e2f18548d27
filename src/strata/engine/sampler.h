// Sampler: logits -> token id for one sequence, in vLLM's order: penalties, temperature,
// top-k, top-p, min-p, then a draw from the sequence's own seeded generator (so a seeded
// request gives the same tokens alone or in any batch).
#pragma once

#include <random>
#include <span>
#include <vector>

#include "strata/engine/sampling_params.h"

namespace strata {

struct TokenLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;
};

struct SampleResult {
  int32_t token_id = 0;
  float logprob = 0.0f;                 // of the sampled token under the raw model distribution
  std::vector<TokenLogprob> top;        // top `logprobs` tokens, most likely first
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // logits: [vocab] f32 (modified in place); prompt/output: the sequence's tokens so far.
  SampleResult sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                      std::span<const int32_t> output_ids);

 private:
  void apply_penalties(std::span<float> logits, std::span<const int32_t> prompt_ids,
                       std::span<const int32_t> output_ids) const;
  int32_t draw(std::span<const float> logits);

  SamplingParams params_;
  std::mt19937_64 rng_;
};

// log_softmax of logits into out (both [vocab]).
void log_softmax(std::span<const float> logits, std::span<float> out);

}  // namespace strata
