#include "strata/engine/sampler.h"

#include <algorithm>
#include <cmath>

#include "strata/ops/sampling_math.h"

namespace strata {

void log_softmax(std::span<const float> logits, std::span<float> out) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v - max));
  const float log_sum = static_cast<float>(std::log(sum)) + max;
  for (size_t i = 0; i < logits.size(); ++i) out[i] = logits[i] - log_sum;
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed ? *params.seed : std::random_device{}()) {}

ops::SamplingRow make_sampling_row(const SamplingParams& params, uint32_t random_bits,
                                   std::span<const int32_t> prompt_ids, std::span<const int32_t> output_ids,
                                   std::vector<ops::PenaltyToken>& penalties) {
  ops::SamplingRow row{.temperature = params.temperature,
                       .top_k = params.top_k,
                       .top_p = params.top_p,
                       .min_p = params.min_p,
                       .repetition_penalty = params.repetition_penalty,
                       .presence_penalty = params.presence_penalty,
                       .frequency_penalty = params.frequency_penalty,
                       .random_bits = random_bits,
                       .num_top_logprobs = std::clamp(params.logprobs, 0, ops::kMaxTopLogprobs),
                       .penalty_begin = static_cast<int32_t>(penalties.size())};
  const bool repetition = params.repetition_penalty != 1.0f;
  if (!repetition && params.presence_penalty == 0.0f && params.frequency_penalty == 0.0f) return row;
  // (token, 1 for an output occurrence), sorted, then merged into distinct tokens with counts.
  std::vector<std::pair<int32_t, int32_t>> seen;
  seen.reserve((repetition ? prompt_ids.size() : 0) + output_ids.size());
  if (repetition)
    for (int32_t id : prompt_ids) seen.push_back({id, 0});
  for (int32_t id : output_ids) seen.push_back({id, 1});
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size();) {
    ops::PenaltyToken entry{.token_id = seen[i].first, .output_count = 0};
    for (; i < seen.size() && seen[i].first == entry.token_id; ++i) entry.output_count += seen[i].second;
    penalties.push_back(entry);
  }
  row.num_penalty_tokens = static_cast<int32_t>(penalties.size()) - row.penalty_begin;
  return row;
}

SampleResult make_sample_result(const SamplingParams& params, int32_t token_id, float logprob,
                                const int32_t* top_ids, const float* top_logprobs) {
  SampleResult result{.token_id = token_id, .logprob = logprob};
  const int32_t n = std::clamp(params.logprobs, 0, ops::kMaxTopLogprobs);
  for (int32_t j = 0; j < n && top_ids[j] >= 0; ++j) result.top.push_back({top_ids[j], top_logprobs[j]});
  return result;
}

SampleResult Sampler::sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                             std::span<const int32_t> output_ids) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  std::vector<ops::PenaltyToken> penalties;
  ops::SamplingRow row = make_sampling_row(params_, next_random_bits(), prompt_ids, output_ids, penalties);
  int32_t token_id = 0;
  float logprob = 0.0f;
  int32_t top_ids[ops::kMaxTopLogprobs];
  float top_logprobs[ops::kMaxTopLogprobs];
  ops::sample_tokens(ops::SamplingArgs{
      .logits = Tensor::view(logits.data(), DType::kF32, {1, vocab}),
      .rows = Tensor::view(&row, DType::kI32, {1, ops::kSamplingRowWords}),
      .penalty_tokens = penalties.empty() ? Tensor()
                                          : Tensor::view(penalties.data(), DType::kI32,
                                                         {static_cast<int64_t>(penalties.size()), 2}),
      .token_ids = Tensor::view(&token_id, DType::kI32, {1}),
      .logprobs = Tensor::view(&logprob, DType::kF32, {1}),
      .top_ids = Tensor::view(top_ids, DType::kI32, {1, ops::kMaxTopLogprobs}),
      .top_logprobs = Tensor::view(top_logprobs, DType::kF32, {1, ops::kMaxTopLogprobs})});
  for (const ops::PenaltyToken& p : penalties) {  // callers see the penalised logits, as before
    if (p.token_id < 0 || p.token_id >= vocab) continue;
    logits[p.token_id] = sampling::penalized_logit(logits[p.token_id], true, p.output_count, row.repetition_penalty,
                                                   row.presence_penalty, row.frequency_penalty);
  }
  return make_sample_result(params_, token_id, logprob, top_ids, top_logprobs);
}

}  // namespace strata
