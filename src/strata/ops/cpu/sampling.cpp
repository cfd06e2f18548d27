// CPU token sampling: the reference for the CUDA kernel. Sorts only as far as a criterion
// needs (top-k: the first k; top-p: the first k or the whole row), then draws in id order.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/sampling.h"
#include "strata/ops/sampling_math.h"
#include "strata/ops/sampling_weights.h"

namespace strata::cpu {
namespace {

using ops::SamplingRow;

struct RowView {
  const float* raw;   // [vocab] the model's logits
  const float* x;     // [vocab] after penalties (== raw without them)
  int64_t vocab;
};

double log_sum_exp(const float* raw, int64_t vocab) {
  const float max = *std::max_element(raw, raw + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(raw[i] - max));
  return std::log(sum) + max;
}

int32_t draw(const RowView& v, const SamplingRow& p) {
  const sampling::KeptWeights kept = sampling::kept_weights(v.x, v.vocab, p);
  if (kept.total == 0) return sampling::argmax_by_key(v.x, v.vocab);
  const uint64_t target = sampling::draw_target(p.random_bits, kept.total);
  uint64_t acc = 0;
  for (int64_t i = 0; i < v.vocab; ++i) {
    acc += kept.weight[i];
    if (acc > target) return static_cast<int32_t>(i);
  }
  return sampling::argmax_by_key(v.x, v.vocab);
}

// The penalised copy of a row, or the raw row when the row has no penalty tokens.
const float* apply_penalties(const ops::SamplingArgs& args, const SamplingRow& p, const float* raw,
                             int64_t vocab, std::vector<float>& buffer) {
  if (p.num_penalty_tokens <= 0) return raw;
  buffer.assign(raw, raw + vocab);
  const auto* tokens = args.penalty_tokens.data_as<const ops::PenaltyToken>() + p.penalty_begin;
  for (int32_t e = 0; e < p.num_penalty_tokens; ++e) {
    const int32_t t = tokens[e].token_id;
    if (t < 0 || t >= vocab) continue;
    buffer[t] = sampling::penalized_logit(raw[t], true, tokens[e].output_count, p.repetition_penalty,
                                          p.presence_penalty, p.frequency_penalty);
  }
  return buffer.data();
}

void top_logprobs(const float* raw, int64_t vocab, double lse, int32_t n, int32_t* ids, float* values) {
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  const int64_t count = std::min<int64_t>(n, vocab);
  sampling::sort_prefix(order, raw, count);
  for (int32_t j = 0; j < ops::kMaxTopLogprobs; ++j) {
    ids[j] = j < count ? order[j] : -1;
    values[j] = j < count ? static_cast<float>(raw[order[j]] - lse) : 0.0f;
  }
}

void sample_row(const ops::SamplingArgs& args, int64_t r) {
  const SamplingRow& p = args.rows.data_as<const SamplingRow>()[r];
  const int64_t vocab = args.logits.dim(1);
  const float* raw = args.logits.data_as<const float>() + p.logits_row * vocab;
  std::vector<float> buffer;
  const RowView view{.raw = raw, .x = apply_penalties(args, p, raw, vocab, buffer), .vocab = vocab};
  const int32_t token = sampling::is_greedy(p.temperature, p.top_k) ? sampling::argmax_by_key(view.x, vocab)
                                                                     : draw(view, p);
  const double lse = log_sum_exp(raw, vocab);
  args.token_ids.data_as<int32_t>()[r] = token;
  args.logprobs.data_as<float>()[r] = static_cast<float>(raw[token] - lse);
  int32_t* ids = args.top_ids.data_as<int32_t>() + r * ops::kMaxTopLogprobs;
  float* values = args.top_logprobs.data_as<float>() + r * ops::kMaxTopLogprobs;
  if (p.num_top_logprobs > 0) {
    top_logprobs(raw, vocab, lse, p.num_top_logprobs, ids, values);
  } else {
    std::fill(ids, ids + ops::kMaxTopLogprobs, -1);
    std::fill(values, values + ops::kMaxTopLogprobs, 0.0f);
  }
}

}  // namespace

void sample_tokens(const ops::SamplingArgs& args) {
  const int64_t num_rows = args.rows.dim(0);
  parallel_for(num_rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) sample_row(args, r);
  });
}

}  // namespace strata::cpu
