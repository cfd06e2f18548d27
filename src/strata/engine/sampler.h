// Sampler: logits -> token id for one sequence, in vLLM's order: penalties, temperature,
// top-k, top-p, min-p, then a draw with a random number from the sequence's own seeded
// generator (so a seeded request gives the same tokens alone or in any batch, and on the
// GPU, whose batched op ops::sample_tokens this class runs on the CPU for one row).
#pragma once

#include <random>
#include <span>
#include <vector>

#include "strata/engine/sampling_params.h"
#include "strata/ops/sampling.h"

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

  // logits: [vocab] f32 (penalties are applied in place); prompt/output: the sequence's tokens so far.
  SampleResult sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                      std::span<const int32_t> output_ids);

  const SamplingParams& params() const { return params_; }
  // The random number of the next token, as ops::SamplingRow::random_bits.
  uint32_t next_random_bits() { return static_cast<uint32_t>(rng_() >> 32); }
  // A number in [0, 1) from the same generator (rejection sampling of speculative drafts).
  double next_uniform() { return next_random_bits() * (1.0 / 4294967296.0); }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

// The op's row for one sequence; its distinct penalised tokens are appended to `penalties`
// (penalty_begin / num_penalty_tokens point there). penalized_row is left at -1.
ops::SamplingRow make_sampling_row(const SamplingParams& params, uint32_t random_bits,
                                   std::span<const int32_t> prompt_ids, std::span<const int32_t> output_ids,
                                   std::vector<ops::PenaltyToken>& penalties);

// A row of the op's outputs as a SampleResult; top_ids / top_logprobs: [kMaxTopLogprobs].
SampleResult make_sample_result(const SamplingParams& params, int32_t token_id, float logprob,
                                const int32_t* top_ids, const float* top_logprobs);

// log_softmax of logits into out (both [vocab]).
void log_softmax(std::span<const float> logits, std::span<float> out);

}  // namespace strata
