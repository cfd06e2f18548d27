#include "strata/engine/sampling_distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "strata/ops/sampling_math.h"
#include "strata/ops/sampling_weights.h"

namespace strata {
namespace {

std::vector<float> biased(const SamplingParams& params, std::span<const float> logits) {
  std::vector<float> row(logits.begin(), logits.end());
  for (const LogitBias& b : params.logit_bias)
    if (b.token_id < static_cast<int32_t>(row.size())) row[b.token_id] += b.bias;
  return row;
}

}  // namespace

std::vector<double> sampling_distribution(const SamplingParams& params, const DistributionInput& input) {
  std::vector<float> x = biased(params, input.logits);
  const int64_t vocab = static_cast<int64_t>(x.size());
  std::vector<ops::PenaltyToken> penalties;
  const ops::SamplingRow row = make_sampling_row(params, 0, input.prompt_ids, input.output_ids, penalties);
  for (const ops::PenaltyToken& p : penalties)
    if (p.token_id >= 0 && p.token_id < vocab)
      x[p.token_id] = sampling::penalized_logit(x[p.token_id], true, p.output_count, row.repetition_penalty,
                                                row.presence_penalty, row.frequency_penalty);
  std::vector<double> probs(vocab, 0.0);
  if (!sampling::is_greedy(row.temperature, row.top_k)) {
    const sampling::KeptWeights kept = sampling::kept_weights(x.data(), vocab, row);
    if (kept.total > 0) {
      for (int64_t i = 0; i < vocab; ++i)
        probs[i] = static_cast<double>(kept.weight[i]) / static_cast<double>(kept.total);
      return probs;
    }
  }
  probs[sampling::argmax_by_key(x.data(), vocab)] = 1.0;  // as the kernels fall back
  return probs;
}

SampleResult host_sample_result(const SamplingParams& params, std::span<const float> logits, int32_t token_id) {
  const std::vector<float> raw = biased(params, logits);
  std::vector<float> logprobs(raw.size());
  log_softmax(raw, logprobs);
  SampleResult result{.token_id = token_id, .logprob = logprobs[token_id]};
  const int64_t n = std::min<int64_t>(std::clamp(params.logprobs, 0, ops::kMaxTopLogprobs),
                                      static_cast<int64_t>(raw.size()));
  if (n == 0) return result;
  std::vector<int32_t> order(raw.size());
  std::iota(order.begin(), order.end(), 0);
  sampling::sort_prefix(order, raw.data(), n);
  for (int64_t j = 0; j < n; ++j) result.top.push_back({order[j], logprobs[order[j]]});
  return result;
}

}  // namespace strata
