// CUDA hash routing (DeepSeek-V4's hash_moe layers): token t's experts are the fixed row
// tid2eid[token_ids[t]], weighted by their router scores as the CPU weights them. One thread
// per token: k is small (6 for DeepSeek-V4) and only the k chosen logits are read.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/moe_score.cuh"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 128;

struct TableRouteParams {
  const float* logits;     // [T, E]
  const int32_t* tokens;   // [T]
  const int32_t* tid2eid;  // [vocab, k]
  int32_t* ids;            // [T, k]
  float* weights;          // [T, k]
  int64_t tokens_count, experts, vocab, k;
  ops::MoeScoring scoring;  // kSigmoid or kSqrtSoftplus
  bool renormalise;
  float scaling;
};

// A choice outside the table or the experts (which the CPU refuses) becomes expert 0 with
// weight 0: the token then gets nothing from it, and the grouping never sees a bad id.
__device__ int32_t table_expert(const TableRouteParams& p, int32_t token, int64_t j) {
  if (token < 0 || token >= p.vocab) return -1;
  const int32_t e = p.tid2eid[token * p.k + j];
  return e >= 0 && e < p.experts ? e : -1;
}

__global__ void __launch_bounds__(kThreads) route_table_kernel(TableRouteParams p) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= p.tokens_count) return;
  const int32_t token = p.tokens[t];
  const float* logits = p.logits + t * p.experts;
  float sum = 0.0f;  // summed in choice order, as the CPU sums
  for (int64_t j = 0; j < p.k; ++j) {
    const int32_t e = table_expert(p, token, j);
    if (e >= 0) sum += moe_score(logits[e], p.scoring);
  }
  const float norm = p.renormalise ? 1.0f / (sum + 1e-20f) : 1.0f;
  for (int64_t j = 0; j < p.k; ++j) {
    const int32_t e = table_expert(p, token, j);
    p.ids[t * p.k + j] = e >= 0 ? e : 0;
    p.weights[t * p.k + j] = e >= 0 ? moe_score(logits[e], p.scoring) * norm * p.scaling : 0.0f;
  }
}

}  // namespace

void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const ops::MoeRouteOptions& options) {
  const int64_t t = router_logits.dim(0);
  if (t == 0) return;
  const TableRouteParams p{.logits = router_logits.data_as<const float>(),
                           .tokens = token_ids.data_as<const int32_t>(),
                           .tid2eid = tid2eid.data_as<const int32_t>(),
                           .ids = topk_ids.data_as<int32_t>(),
                           .weights = topk_weights.data_as<float>(),
                           .tokens_count = t,
                           .experts = router_logits.dim(1),
                           .vocab = tid2eid.dim(0),
                           .k = options.top_k,
                           .scoring = options.scoring,
                           .renormalise = options.norm_topk_prob,
                           .scaling = options.routed_scaling_factor};
  route_table_kernel<<<ceil_div(t, kThreads), kThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
