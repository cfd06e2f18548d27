// MoE on the CPU: routing and grouping are plain loops over tokens; each expert's rows go
// through the ordinary linear kernel on that expert's slice of the stacked weights.
#include "strata/ops/moe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/linear.h"

namespace strata::cpu {

void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const ops::MoeRouteOptions& options) {
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1), k = options.top_k;
  parallel_for(t, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(e);
    std::vector<int32_t> order(e);
    for (int64_t i = begin; i < end; ++i) {
      const float* logits = router_logits.data_as<float>() + i * e;
      if (options.scoring == ops::MoeScoring::kSoftmax) {
        const float max = *std::max_element(logits, logits + e);
        float sum = 0;
        for (int64_t j = 0; j < e; ++j) sum += scores[j] = std::exp(logits[j] - max);
        for (float& s : scores) s /= sum;
      } else {
        for (int64_t j = 0; j < e; ++j) scores[j] = 1.0f / (1.0f + std::exp(-logits[j]));
      }
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
        return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
      });
      float sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += scores[order[j]];
      const float norm = options.norm_topk_prob ? 1.0f / sum : 1.0f;
      for (int64_t j = 0; j < k; ++j) {
        topk_ids.data_as<int32_t>()[i * k + j] = order[j];
        topk_weights.data_as<float>()[i * k + j] =
            scores[order[j]] * norm * options.routed_scaling_factor;
      }
    }
  });
}

void moe_group(const Tensor& topk_ids, const ops::MoeGroups& groups) {
  const int64_t pairs = topk_ids.numel(), k = topk_ids.dim(1);
  const int64_t e = groups.expert_offsets.dim(0) - 1, first = groups.first_expert;
  const int32_t* ids = topk_ids.data_as<int32_t>();
  int32_t* offsets = groups.expert_offsets.data_as<int32_t>();
  auto local = [&](int64_t p) { return ids[p] - first; };  // in [0, e): one of this group's experts
  std::fill_n(offsets, e + 1, 0);
  for (int64_t p = 0; p < pairs; ++p) {
    STRATA_CHECK_MSG(ids[p] >= 0, "expert id {}", ids[p]);
    if (local(p) >= 0 && local(p) < e) ++offsets[local(p) + 1];
  }
  for (int64_t i = 0; i < e; ++i) offsets[i + 1] += offsets[i];
  std::vector<int32_t> next(offsets, offsets + e + 1);  // next[e]: the first row of other experts' pairs
  for (int64_t p = 0; p < pairs; ++p) {
    const int32_t slot = next[local(p) >= 0 && local(p) < e ? local(p) : e]++;
    groups.sorted_pairs.data_as<int32_t>()[slot] = static_cast<int32_t>(p);
    groups.token_rows.data_as<int32_t>()[slot] = static_cast<int32_t>(p / k);
  }
}

void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets,
                    const Tensor& out) {
  const int64_t e = weights.dim(0), rows = weights.dim(1), cols = weights.dim(2);
  const int32_t* offsets = expert_offsets.data_as<int32_t>();
  for (int64_t i = 0; i < e; ++i) {
    if (offsets[i + 1] == offsets[i]) continue;
    const Tensor w = weights.slice_rows(i, i + 1).reshape({rows, cols});
    linear(x.slice_rows(offsets[i], offsets[i + 1]), w, Tensor(),
           out.slice_rows(offsets[i], offsets[i + 1]));
  }
}

void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights,
                 const Tensor& out, const ops::MoeCombineOptions& options) {
  const int64_t t = topk_weights.dim(0), k = topk_weights.dim(1), h = y.dim(1);
  std::vector<int32_t> position(t * k);  // row of y of each pair
  for (int64_t i = 0; i < t * k; ++i) {
    const int32_t pair = sorted_pairs.defined() ? sorted_pairs.data_as<int32_t>()[i] : static_cast<int32_t>(i);
    position[pair] = static_cast<int32_t>(i);
  }
  parallel_for(t, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* dst = out.data_as<float>() + i * h;
      if (!options.accumulate) std::fill_n(dst, h, 0.0f);
      for (int64_t j = 0; j < k; ++j) {
        const float w = topk_weights.data_as<float>()[i * k + j];
        const float* src = y.data_as<float>() + position[i * k + j] * h;
        for (int64_t c = 0; c < h; ++c) dst[c] += src[c] * w;
      }
    }
  });
}

void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate) {
  const int64_t t = x.dim(0), h = x.dim(1);
  for (int64_t i = 0; i < t; ++i) {
    const float g = 1.0f / (1.0f + std::exp(-gate.data_as<float>()[i]));
    float* dst = x.data_as<float>() + i * h;
    const float* src = y.data_as<float>() + i * h;
    for (int64_t c = 0; c < h; ++c) dst[c] += g * src[c];
  }
}

void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets) {
  STRATA_CHECK(y.dtype() == DType::kF32);
  const int64_t rows = y.dim(0), n = y.dim(1);
  const int32_t* offsets = expert_offsets.defined() ? expert_offsets.data_as<const int32_t>() : nullptr;
  const int64_t end = offsets != nullptr ? offsets[bias.dim(0)] : rows;
  int64_t expert = 0;
  for (int64_t i = 0; i < end; ++i) {
    if (offsets != nullptr)
      while (expert + 1 < bias.dim(0) && offsets[expert + 1] <= i) ++expert;
    const float* b = bias.data_as<const float>() + expert * n;
    float* dst = y.data_as<float>() + i * n;
    for (int64_t c = 0; c < n; ++c) dst[c] += b[c];
  }
}

}  // namespace strata::cpu
