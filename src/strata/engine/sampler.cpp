#include "strata/engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

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

void Sampler::apply_penalties(std::span<float> logits, std::span<const int32_t> prompt_ids,
                              std::span<const int32_t> output_ids) const {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  auto in_vocab = [&](int32_t id) { return id >= 0 && id < vocab; };
  if (params_.repetition_penalty != 1.0f) {
    std::vector<bool> seen(vocab, false);
    for (int32_t id : prompt_ids) if (in_vocab(id)) seen[id] = true;
    for (int32_t id : output_ids) if (in_vocab(id)) seen[id] = true;
    for (int64_t i = 0; i < vocab; ++i) {
      if (!seen[i]) continue;
      logits[i] = logits[i] > 0 ? logits[i] / params_.repetition_penalty
                                : logits[i] * params_.repetition_penalty;
    }
  }
  if (params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, int32_t> counts;
    for (int32_t id : output_ids) if (in_vocab(id)) ++counts[id];
    for (const auto& [id, count] : counts)
      logits[id] -= params_.frequency_penalty * static_cast<float>(count) + params_.presence_penalty;
  }
}

int32_t Sampler::draw(std::span<const float> logits) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  int64_t keep = vocab;
  if (params_.top_k > 0) keep = std::min<int64_t>(keep, params_.top_k);
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<double> probs(keep);
  const double max = logits[order[0]];
  double sum = 0;
  for (int64_t i = 0; i < keep; ++i) sum += probs[i] = std::exp((logits[order[i]] - max) / params_.temperature);
  for (double& p : probs) p /= sum;
  if (params_.top_p < 1.0f) {  // smallest prefix whose mass reaches top_p
    double mass = 0;
    int64_t n = 0;
    while (n < keep && mass < params_.top_p) mass += probs[n++];
    keep = std::max<int64_t>(n, 1);
  }
  if (params_.min_p > 0.0f) {
    const double floor = params_.min_p * probs[0];
    int64_t n = 1;
    while (n < keep && probs[n] >= floor) ++n;
    keep = n;
  }
  double total = 0;
  for (int64_t i = 0; i < keep; ++i) total += probs[i];
  const double u = std::uniform_real_distribution<double>(0.0, total)(rng_);
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += probs[i];
    if (u < acc) return order[i];
  }
  return order[keep - 1];
}

SampleResult Sampler::sample(std::span<float> logits, std::span<const int32_t> prompt_ids,
                             std::span<const int32_t> output_ids) {
  SampleResult result;
  std::vector<float> logprobs;
  if (params_.logprobs >= 0) {
    logprobs.resize(logits.size());
    log_softmax(logits, logprobs);
  }
  apply_penalties(logits, prompt_ids, output_ids);
  if (params_.greedy()) {
    result.token_id = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  } else {
    result.token_id = draw(logits);
  }
  if (params_.logprobs >= 0) {
    result.logprob = logprobs[result.token_id];
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    const int64_t n = std::min<int64_t>(params_.logprobs, static_cast<int64_t>(order.size()));
    std::partial_sort(order.begin(), order.begin() + n, order.end(),
                      [&](int32_t a, int32_t b) { return logprobs[a] > logprobs[b]; });
    for (int64_t i = 0; i < n; ++i) result.top.push_back({order[i], logprobs[order[i]]});
  }
  return result;
}

}  // namespace strata
