// CUDA pending tokens: one thread per pending token; indices were checked on the host when
// the step was built, so the kernel only guards against a stray pair.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/pending_tokens.h"

namespace strata::cuda {
namespace {

struct PendingTokenParams {
  const int32_t* sampled;  // [num_sampled]
  const int32_t* pairs;    // [num_pending, 2]
  int32_t* tokens;         // [num_tokens]
  int64_t num_sampled;
  int64_t num_pending;
  int64_t num_tokens;
};

__global__ void fill_pending_tokens_kernel(PendingTokenParams p) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= p.num_pending) return;
  const int32_t dst = p.pairs[2 * j], src = p.pairs[2 * j + 1];
  if (dst >= 0 && dst < p.num_tokens && src >= 0 && src < p.num_sampled) p.tokens[dst] = p.sampled[src];
}

}  // namespace

void fill_pending_tokens(const Tensor& sampled_ids, const Tensor& pending, const Tensor& token_ids) {
  const PendingTokenParams p{.sampled = sampled_ids.data_as<const int32_t>(),
                             .pairs = pending.data_as<const int32_t>(),
                             .tokens = token_ids.data_as<int32_t>(),
                             .num_sampled = sampled_ids.dim(0),
                             .num_pending = pending.dim(0),
                             .num_tokens = token_ids.dim(0)};
  constexpr int kThreads = 128;
  const int blocks = static_cast<int>((p.num_pending + kThreads - 1) / kThreads);
  fill_pending_tokens_kernel<<<blocks, kThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
