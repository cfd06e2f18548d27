// Biased, group-limited sigmoid routing on the CPU, the reference for the CUDA kernel: the
// same steps as transformers' DeepSeek-V3 / Nemotron-H top-k router, ties to the lowest id;
// DeepSeek-V4's sqrt(softplus) scores and its hash routing by a token -> experts table.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/moe.h"

namespace strata::cpu {
namespace {

// The indices of the k largest values, largest first, ties to the lowest index.
void top_indices(const std::vector<float>& values, int64_t k, std::vector<int32_t>& order) {
  order.resize(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
}

float score(float logit, ops::MoeScoring scoring) {
  if (scoring == ops::MoeScoring::kSqrtSoftplus)  // softplus as torch computes it: linear past 20
    return std::sqrt(logit > 20.f ? logit : std::log1p(std::exp(logit)));
  return 1.0f / (1.0f + std::exp(-logit));
}

// Writes row i's ids and weights: the chosen scores, renormalised if asked, times the scaling.
void write_choice(const std::vector<float>& scores, const int32_t* chosen, int64_t i, const Tensor& topk_ids,
                  const Tensor& topk_weights, const ops::MoeRouteOptions& options) {
  const int64_t k = options.top_k;
  float sum = 0;
  for (int64_t j = 0; j < k; ++j) sum += scores[chosen[j]];
  const float norm = options.norm_topk_prob ? 1.0f / (sum + 1e-20f) : 1.0f;
  for (int64_t j = 0; j < k; ++j) {
    topk_ids.data_as<int32_t>()[i * k + j] = chosen[j];
    topk_weights.data_as<float>()[i * k + j] = scores[chosen[j]] * norm * options.routed_scaling_factor;
  }
}

}  // namespace

void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const ops::MoeRouteOptions& options) {
  const int64_t e = router_logits.dim(1), k = options.top_k;
  std::vector<float> scores(e);
  for (int64_t i = 0; i < router_logits.dim(0); ++i) {
    const int32_t token = token_ids.data_as<int32_t>()[i];
    STRATA_CHECK(token >= 0 && token < tid2eid.dim(0));
    const int32_t* chosen = tid2eid.data_as<int32_t>() + token * k;
    for (int64_t j = 0; j < e; ++j) scores[j] = score(router_logits.data_as<float>()[i * e + j], options.scoring);
    for (int64_t j = 0; j < k; ++j) STRATA_CHECK(chosen[j] >= 0 && chosen[j] < e);
    write_choice(scores, chosen, i, topk_ids, topk_weights, options);
  }
}

void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const ops::MoeRouteOptions& options) {
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1), k = options.top_k;
  const int64_t groups = options.n_group, group_size = e / groups;
  const float* bias = correction_bias.data_as<const float>();
  parallel_for(t, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(e), choice(e), group_scores(groups), in_group(group_size);
    std::vector<int32_t> order, group_order, pair;
    for (int64_t i = begin; i < end; ++i) {
      const float* logits = router_logits.data_as<const float>() + i * e;
      for (int64_t j = 0; j < e; ++j) {
        scores[j] = score(logits[j], options.scoring);
        choice[j] = scores[j] + bias[j];
      }
      if (groups > 1) {
        for (int64_t g = 0; g < groups; ++g) {
          in_group.assign(choice.begin() + g * group_size, choice.begin() + (g + 1) * group_size);
          top_indices(in_group, 2, pair);
          group_scores[g] = in_group[pair[0]] + in_group[pair[1]];
        }
        top_indices(group_scores, options.topk_group, group_order);
        for (int64_t r = options.topk_group; r < groups; ++r)  // ineligible groups are never chosen
          std::fill_n(choice.begin() + group_order[r] * group_size, group_size, -INFINITY);
      }
      top_indices(choice, k, order);
      write_choice(scores, order.data(), i, topk_ids, topk_weights, options);
    }
  });
}

}  // namespace strata::cpu
