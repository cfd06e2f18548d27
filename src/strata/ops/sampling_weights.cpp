#include "strata/ops/sampling_weights.h"

#include <algorithm>
#include <numeric>

#include "strata/ops/sampling_math.h"

namespace strata::sampling {

int32_t argmax_by_key(const float* x, int64_t vocab) {
  int32_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (key_of(x[i]) > key_of(x[best])) best = static_cast<int32_t>(i);
  return best;
}

void sort_prefix(std::vector<int32_t>& order, const float* x, int64_t count) {
  auto before = [&](int32_t a, int32_t b) {
    const uint32_t ka = key_of(x[a]), kb = key_of(x[b]);
    return ka > kb || (ka == kb && a < b);
  };
  if (count < static_cast<int64_t>(order.size())) {
    std::nth_element(order.begin(), order.begin() + count, order.end(), before);
  }
  std::sort(order.begin(), order.begin() + count, before);
}

KeptWeights kept_weights(const float* x, int64_t vocab, const ops::SamplingRow& p) {
  const float max = x[argmax_by_key(x, vocab)];
  const float inv_t = 1.0f / p.temperature;
  std::vector<float> prob(vocab);
  KeptWeights out{.weight = std::vector<uint64_t>(vocab)};
  for (int64_t i = 0; i < vocab; ++i) {
    prob[i] = relative_prob(x[i], max, inv_t);
    out.weight[i] = weight_of(prob[i]);
  }
  std::vector<uint8_t> kept(vocab, 1);
  const bool top_k = p.top_k > 0 && p.top_k < vocab;
  if (top_k || p.top_p < 1.0f) {
    std::vector<int32_t> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    int64_t prefix = top_k ? p.top_k : vocab;
    sort_prefix(order, x, prefix);
    if (p.top_p < 1.0f) {
      uint64_t total = 0;
      for (int64_t i = 0; i < prefix; ++i) total += out.weight[order[i]];
      const uint64_t target = top_p_target(p.top_p, total);
      uint64_t mass = 0;
      int64_t n = 0;
      while (n < prefix && mass < target) mass += out.weight[order[n++]];
      prefix = n;
    }
    std::fill(kept.begin(), kept.end(), 0);
    for (int64_t i = 0; i < prefix; ++i) kept[order[i]] = 1;
  }
  for (int64_t i = 0; i < vocab; ++i) {
    if (p.min_p > 0.0f && !(prob[i] >= p.min_p)) kept[i] = 0;
    if (!kept[i]) out.weight[i] = 0;
    out.total += out.weight[i];
  }
  return out;
}

}  // namespace strata::sampling
