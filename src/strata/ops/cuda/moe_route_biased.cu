// CUDA biased, group-limited routing by sigmoid (DeepSeek-V3 / Nemotron-H) or sqrt(softplus)
// scores (DeepSeek-V4): one block per token with its scores in shared memory. The eligible
// groups are picked by one thread (n_group is small: 8 for DeepSeek-V3, 1 for Nemotron-H);
// the k experts by repeated block argmaxes, ties to the lowest id as on the CPU.
#include <climits>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/moe_score.cuh"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;

struct BiasedRouteParams {
  const float* logits;  // [T, E]
  const float* bias;    // [E]
  int32_t* ids;         // [T, k]
  float* weights;       // [T, k]
  int64_t experts, k, groups, topk_group;
  ops::MoeScoring scoring;  // kSigmoid or kSqrtSoftplus
  bool renormalise;
  float scaling;
};

// The sum of the two largest of values[0, n) (n >= 2).
__device__ float top_two_sum(const float* values, int64_t n) {
  float first = -INFINITY, second = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (values[i] > first) second = first, first = values[i];
    else if (values[i] > second) second = values[i];
  }
  return first + second;
}

// Rules out every group outside the topk_group best (thread 0 only).
__device__ void mask_groups(float* choice, float* group_scores, const BiasedRouteParams& p) {
  const int64_t size = p.experts / p.groups;
  for (int64_t g = 0; g < p.groups; ++g) group_scores[g] = top_two_sum(choice + g * size, size);
  for (int64_t r = 0; r < p.topk_group; ++r) {  // mark the chosen groups with +inf
    int64_t best = -1;
    for (int64_t g = 0; g < p.groups; ++g)
      if (group_scores[g] != INFINITY && (best < 0 || group_scores[g] > group_scores[best])) best = g;
    group_scores[best] = INFINITY;
  }
  for (int64_t g = 0; g < p.groups; ++g)
    if (group_scores[g] != INFINITY)
      for (int64_t i = 0; i < size; ++i) choice[g * size + i] = -INFINITY;
}

__global__ void __launch_bounds__(kThreads) route_biased_kernel(BiasedRouteParams p) {
  extern __shared__ float shared[];  // scores [E], choice [E], group scores [groups]
  float* scores = shared;
  float* choice = shared + p.experts;
  __shared__ float vals[32], chosen_sum;
  __shared__ int idxs[32];
  const int64_t t = blockIdx.x;
  for (int64_t e = threadIdx.x; e < p.experts; e += blockDim.x) {
    scores[e] = moe_score(p.logits[t * p.experts + e], p.scoring);
    choice[e] = scores[e] + p.bias[e];
  }
  __syncthreads();
  if (p.groups > 1 && threadIdx.x == 0) mask_groups(choice, choice + p.experts, p);
  if (threadIdx.x == 0) chosen_sum = 0.0f;
  __syncthreads();
  for (int64_t j = 0; j < p.k; ++j) {
    float best;
    int best_e;
    block_max_of(choice, p.experts, best, best_e, vals, idxs);
    if (threadIdx.x == 0) {
      p.ids[t * p.k + j] = best_e;
      p.weights[t * p.k + j] = scores[best_e];
      chosen_sum += scores[best_e];
      choice[best_e] = -INFINITY;
    }
    __syncthreads();
  }
  if (threadIdx.x < p.k) {
    const float norm = p.renormalise ? 1.0f / (chosen_sum + 1e-20f) : 1.0f;
    float& w = p.weights[t * p.k + threadIdx.x];
    w = w * norm * p.scaling;  // the CPU's order of the products
  }
}

}  // namespace

void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const ops::MoeRouteOptions& options) {
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1);
  if (t == 0) return;
  STRATA_CHECK(options.top_k <= kThreads);
  const BiasedRouteParams p{.logits = router_logits.data_as<const float>(),
                            .bias = correction_bias.data_as<const float>(),
                            .ids = topk_ids.data_as<int32_t>(),
                            .weights = topk_weights.data_as<float>(),
                            .experts = e,
                            .k = options.top_k,
                            .groups = options.n_group,
                            .topk_group = options.topk_group,
                            .scoring = options.scoring,
                            .renormalise = options.norm_topk_prob,
                            .scaling = options.routed_scaling_factor};
  const size_t shared_bytes = (2 * e + options.n_group) * sizeof(float);
  route_biased_kernel<<<t, kThreads, shared_bytes, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
