// CUDA twins of the mHC weight ops (ops/cpu/hyper_connection.cpp): one thread per token keeps its
// n x n comb in registers (loops unrolled to kCudaMaxHyperStreams, guarded by n) and follows the
// CPU's order of operations, so the f32 results differ only by expf's last bits.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/hyper_connection.h"

namespace strata::cuda {
namespace {

constexpr int kMax = static_cast<int>(ops::kCudaMaxHyperStreams);
constexpr int kThreads = 128;

struct HyperWeightsParams {
  const float* mixes;  // [T, (2 + n) * n]: pre | post | comb logits
  const float* base;   // [(2 + n) * n]
  const float* scale;  // [3]
  float* pre;          // [T, n]
  float* post;         // [T, n]
  float* comb;         // [T, n, n]
  int64_t tokens;
  int n, sinkhorn_iters;
  float eps;
};

__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + expf(-v)); }

// m: [kMax, kMax] registers, the top-left n x n used; each column (over j) divided by its sum + eps.
__device__ __forceinline__ void normalise_columns(float (&m)[kMax][kMax], int n, float eps) {
#pragma unroll
  for (int k = 0; k < kMax; ++k) {
    if (k >= n) break;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kMax; ++j)
      if (j < n) sum += m[j][k];
#pragma unroll
    for (int j = 0; j < kMax; ++j)
      if (j < n) m[j][k] /= sum + eps;
  }
}

__device__ __forceinline__ void normalise_rows(float (&m)[kMax][kMax], int n, float eps) {
#pragma unroll
  for (int j = 0; j < kMax; ++j) {
    if (j >= n) break;
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (k < n) sum += m[j][k];
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (k < n) m[j][k] /= sum + eps;
  }
}

// m = softmax over each row j of w * s + b, plus eps. w, b: [n, n] row-major.
__device__ __forceinline__ void softmax_rows(const float* w, const float* b, float s, int n, float eps,
                                             float (&m)[kMax][kMax]) {
#pragma unroll
  for (int j = 0; j < kMax; ++j) {
    if (j >= n) break;
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (k < n) mx = fmaxf(mx, m[j][k] = w[j * n + k] * s + b[j * n + k]);
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (k < n) sum += m[j][k] = expf(m[j][k] - mx);
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (k < n) m[j][k] = m[j][k] / sum + eps;
  }
}

__global__ void hyper_weights_kernel(HyperWeightsParams p) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= p.tokens) return;
  const int n = p.n;
  const float* w = p.mixes + t * (2 + n) * n;
  for (int j = 0; j < n; ++j) {
    p.pre[t * n + j] = sigmoid(w[j] * p.scale[0] + p.base[j]) + p.eps;
    p.post[t * n + j] = 2.f * sigmoid(w[n + j] * p.scale[1] + p.base[n + j]);
  }
  float m[kMax][kMax];
  softmax_rows(w + 2 * n, p.base + 2 * n, p.scale[2], n, p.eps, m);
  // Sinkhorn as transformers sweeps it: columns first, then sinkhorn_iters - 1 (rows, columns).
  normalise_columns(m, n, p.eps);
  for (int it = 1; it < p.sinkhorn_iters; ++it) {
    normalise_rows(m, n, p.eps);
    normalise_columns(m, n, p.eps);
  }
  float* c = p.comb + t * n * n;
#pragma unroll
  for (int j = 0; j < kMax; ++j)
#pragma unroll
    for (int k = 0; k < kMax; ++k)
      if (j < n && k < n) c[j * n + k] = m[j][k];
}

struct HeadWeightsParams {
  const float* mixes;  // [T, n]
  const float* base;   // [n]
  const float* scale;  // [1]
  float* pre;          // [T, n]
  int64_t total, n;    // total = T * n
  float eps;
};

__global__ void hyper_head_weights_kernel(HeadWeightsParams p) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p.pre[i] = sigmoid(p.mixes[i] * p.scale[0] + p.base[i % p.n]) + p.eps;
}

}  // namespace

void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const ops::HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb) {
  const HyperWeightsParams p{.mixes = mixes.data_as<float>(), .base = base.data_as<float>(),
                             .scale = scale.data_as<float>(), .pre = pre.data_as<float>(),
                             .post = post.data_as<float>(), .comb = comb.data_as<float>(), .tokens = mixes.dim(0),
                             .n = static_cast<int>(options.num_streams),
                             .sinkhorn_iters = static_cast<int>(options.sinkhorn_iters), .eps = options.eps};
  const auto blocks = static_cast<unsigned>(ceil_div(p.tokens, kThreads));
  hyper_weights_kernel<<<blocks, kThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre) {
  const HeadWeightsParams p{.mixes = mixes.data_as<float>(), .base = base.data_as<float>(),
                            .scale = scale.data_as<float>(), .pre = pre.data_as<float>(), .total = mixes.numel(),
                            .n = mixes.dim(1), .eps = eps};
  hyper_head_weights_kernel<<<grid_for(p.total, 256), 256, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
