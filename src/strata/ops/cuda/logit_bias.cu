// CUDA logit bias: a thread per (row, token, bias) entry.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/logit_bias.h"

namespace strata::cuda {
namespace {

__global__ void add_logit_bias_kernel(float* logits, const int32_t* targets, const float* biases, int64_t num_entries,
                                      int64_t num_rows, int64_t vocab) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= num_entries) return;
  const int64_t row = targets[2 * k], token = targets[2 * k + 1];
  if (row < 0 || row >= num_rows || token < 0 || token >= vocab) return;
  // Entries are distinct by contract; the atomic keeps a repeated one from racing anyway.
  atomicAdd(logits + row * vocab + token, biases[k]);
}

}  // namespace

void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases) {
  constexpr int kThreads = 256;
  const int64_t n = biases.dim(0);
  add_logit_bias_kernel<<<static_cast<unsigned>(ceil_div(n, kThreads)), kThreads, 0, current_stream()>>>(
      logits.data_as<float>(), targets.data_as<const int32_t>(), biases.data_as<const float>(), n, logits.dim(0),
      logits.dim(1));
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
