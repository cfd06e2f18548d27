// CUDA mixture-of-experts pieces: top-k routing (block per token), stable grouping of the
// (token, choice) pairs by expert (one block; a warp per expert compacts with ballots, so
// pair order is kept), grouped linears (few rows: the skinny kernel reading the offsets on
// the device, graph-safe; many rows: one cuBLASLt GEMM per expert after reading the offsets),
// and the weighted combine.
#include <vector>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/cuda/device_scratch.h"
#include "strata/ops/cuda/skinny_gemm.h"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

constexpr int kRouteThreads = 256;
constexpr int64_t kSkinnyMaxPairs = 64;  // above: per-expert library GEMMs

struct RouteParams {
  const float* logits;  // [T, E]
  int32_t* ids;         // [T, k]
  float* weights;       // [T, k]
  int64_t experts, k;
  bool softmax, renormalise;
  float scaling;
};

// Block-wide argmax, ties to the lowest index; every thread gets the winner.
__device__ void block_argmax(float& value, int& index, float* vals, int* idxs) {
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, o);
    const int i = __shfl_xor_sync(0xffffffffu, index, o);
    if (v > value || (v == value && i < index)) value = v, index = i;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) vals[warp] = value, idxs[warp] = index;
  __syncthreads();
  value = lane < blockDim.x / 32 ? vals[lane] : -INFINITY;
  index = lane < blockDim.x / 32 ? idxs[lane] : INT_MAX;
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, o);
    const int i = __shfl_xor_sync(0xffffffffu, index, o);
    if (v > value || (v == value && i < index)) value = v, index = i;
  }
}

__global__ void route_kernel(RouteParams p) {
  extern __shared__ float scores[];  // [E]
  __shared__ float vals[32], chosen_sum;
  __shared__ int idxs[32];
  const int64_t t = blockIdx.x;
  const float* logits = p.logits + t * p.experts;
  float mx = -INFINITY;
  int unused = 0;
  for (int64_t e = threadIdx.x; e < p.experts; e += blockDim.x) mx = fmaxf(mx, logits[e]);
  block_argmax(mx, unused, vals, idxs);
  float sum = 0.0f;
  for (int64_t e = threadIdx.x; e < p.experts; e += blockDim.x) {
    scores[e] = p.softmax ? expf(logits[e] - mx) : 1.0f / (1.0f + expf(-logits[e]));
    sum += scores[e];
  }
  sum = block_sum(sum, vals);
  if (threadIdx.x == 0) chosen_sum = 0.0f;
  for (int64_t j = 0; j < p.k; ++j) {
    float best = -INFINITY;
    int best_e = INT_MAX;
    for (int64_t e = threadIdx.x; e < p.experts; e += blockDim.x)
      if (scores[e] > best) best = scores[e], best_e = static_cast<int>(e);
    block_argmax(best, best_e, vals, idxs);
    if (threadIdx.x == 0) {
      const float w = p.softmax ? best / sum : best;
      p.ids[t * p.k + j] = best_e;
      p.weights[t * p.k + j] = w;
      chosen_sum += w;
      scores[best_e] = -INFINITY;
    }
    __syncthreads();
  }
  if (threadIdx.x < p.k) {
    const float norm = p.renormalise ? 1.0f / chosen_sum : 1.0f;
    p.weights[t * p.k + threadIdx.x] *= norm * p.scaling;
  }
}

// One block of 1024 threads: counts, prefix sums, then warp w places the pairs of experts
// w, w + 32, ... in pair order with ballot compaction.
__global__ void group_kernel(const int32_t* ids, int64_t pairs, int64_t k, int64_t experts, int32_t* sorted,
                             int32_t* token_rows, int32_t* offsets) {
  for (int64_t e = threadIdx.x; e <= experts; e += blockDim.x) offsets[e] = 0;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < pairs; i += blockDim.x) {
    const int32_t e = ids[i];
    if (e >= 0 && e < experts) atomicAdd(&offsets[e + 1], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int64_t e = 0; e < experts; ++e) offsets[e + 1] += offsets[e];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t e = warp; e < experts; e += warps) {
    int32_t next = offsets[e];
    for (int64_t base = 0; base < pairs; base += 32) {
      const int64_t i = base + lane;
      const bool mine = i < pairs && ids[i] == e;
      const unsigned mask = __ballot_sync(0xffffffffu, mine);
      if (mine) {
        const int32_t slot = next + __popc(mask & ((1u << lane) - 1));
        sorted[slot] = static_cast<int32_t>(i);
        token_rows[slot] = static_cast<int32_t>(i / k);
      }
      next += __popc(mask);
    }
  }
}

__global__ void invert_kernel(const int32_t* sorted, int32_t* position, int64_t pairs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t pair = sorted[i];
    if (pair >= 0 && pair < pairs) position[pair] = static_cast<int32_t>(i);
  }
}

// out[t] = sum_j w[t, j] * y[position[t * k + j]] (position: the sorted row of each pair).
template <typename T>
__global__ void combine_kernel(const T* y, const int32_t* position_all, const float* weights, T* out,
                               int64_t k, int64_t hidden) {
  const int64_t t = blockIdx.x;
  const int32_t* position = position_all + t * k;
  for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) acc += weights[t * k + j] * to_f32(y[position[j] * hidden + c]);
    out[t * hidden + c] = from_f32<T>(acc);
  }
}

template <typename T>
__global__ void add_sigmoid_gated_kernel(T* x, const T* y, const float* gate, int64_t rows, int64_t hidden) {
  const int64_t n = rows * hidden;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = 1.0f / (1.0f + expf(-gate[i / hidden]));
    x[i] = from_f32<T>(to_f32(x[i]) + g * to_f32(y[i]));
  }
}

}  // namespace

void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const ops::MoeRouteOptions& options) {
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1);
  if (t == 0) return;
  STRATA_CHECK(options.top_k <= kRouteThreads);
  const RouteParams p{.logits = router_logits.data_as<float>(), .ids = topk_ids.data_as<int32_t>(),
                      .weights = topk_weights.data_as<float>(), .experts = e, .k = options.top_k,
                      .softmax = options.scoring == ops::MoeScoring::kSoftmax,
                      .renormalise = options.norm_topk_prob, .scaling = options.routed_scaling_factor};
  route_kernel<<<t, kRouteThreads, e * sizeof(float), current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

void moe_group(const Tensor& topk_ids, const ops::MoeGroups& groups) {
  const int64_t pairs = topk_ids.numel(), e = groups.expert_offsets.dim(0) - 1;
  group_kernel<<<1, 1024, 0, current_stream()>>>(topk_ids.data_as<int32_t>(), pairs, topk_ids.dim(1), e,
                                                 groups.sorted_pairs.data_as<int32_t>(),
                                                 groups.token_rows.data_as<int32_t>(),
                                                 groups.expert_offsets.data_as<int32_t>());
  STRATA_CUDA_CHECK_LAUNCH();
}

// Many rows: the offsets come to the host (a sync; such steps are never captured) and each
// expert's rows go through one library GEMM on its slice of the stacked weights.
void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets, const Tensor& out) {
  if (x.dtype() != DType::kBF16 || weights.dtype() != DType::kBF16) unsupported_dtype("grouped_linear", x.dtype());
  const int64_t m = x.dim(0), e = weights.dim(0), n = weights.dim(1), k = weights.dim(2);
  if (m == 0) return;
  const SkinnyGemmArgs skinny{.x = x.data(), .weight = weights.data(), .offsets = expert_offsets.data_as<int32_t>(),
                              .num_groups = e, .out = out.data(), .out_dtype = out.dtype(), .m = m, .n = n, .k = k};
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STRATA_CUDA_CHECK(cudaStreamIsCapturing(current_stream(), &capture));
  if (skinny_gemm_supported(skinny) && (m <= kSkinnyMaxPairs || capture != cudaStreamCaptureStatusNone)) {
    skinny_gemm(skinny, current_stream());
    return;
  }
  std::vector<int32_t> offsets(e + 1);
  STRATA_CUDA_CHECK(cudaMemcpyAsync(offsets.data(), expert_offsets.data(), (e + 1) * sizeof(int32_t),
                                    cudaMemcpyDeviceToHost, current_stream()));
  STRATA_CUDA_CHECK(cudaStreamSynchronize(current_stream()));
  const int64_t out_row = dtype_bytes(out.dtype(), n);
  for (int64_t i = 0; i < e; ++i) {
    const int64_t rows = offsets[i + 1] - offsets[i];
    if (rows <= 0) continue;
    gemm_bf16({.weight = static_cast<const char*>(weights.data()) + i * n * k * 2,
               .x = static_cast<const char*>(x.data()) + offsets[i] * k * 2,
               .out = static_cast<char*>(out.data()) + offsets[i] * out_row, .out_dtype = out.dtype(),
               .m = rows, .n = n, .k = k, .autotune = false},
              current_stream());
  }
}

void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights, const Tensor& out) {
  const int64_t t = topk_weights.dim(0), k = topk_weights.dim(1), hidden = y.dim(1), pairs = t * k;
  if (t == 0) return;
  STRATA_CHECK(out.dtype() == y.dtype());
  static DeviceScratch scratch;
  auto* position = static_cast<int32_t*>(scratch.get(pairs * static_cast<int64_t>(sizeof(int32_t))));
  invert_kernel<<<grid_for(pairs, 256), 256, 0, current_stream()>>>(sorted_pairs.data_as<int32_t>(), position, pairs);
  STRATA_CUDA_CHECK_LAUNCH();
  const int threads = hidden >= 1024 ? 256 : 128;
  if (y.dtype() == DType::kBF16) {
    combine_kernel<<<t, threads, 0, current_stream()>>>(y.data_as<__nv_bfloat16>(), position,
                                                        topk_weights.data_as<float>(),
                                                        out.data_as<__nv_bfloat16>(), k, hidden);
  } else if (y.dtype() == DType::kF32) {
    combine_kernel<<<t, threads, 0, current_stream()>>>(y.data_as<float>(), position, topk_weights.data_as<float>(),
                                                        out.data_as<float>(), k, hidden);
  } else {
    unsupported_dtype("moe_combine", y.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate) {
  const int64_t rows = x.dim(0), hidden = x.dim(1);
  if (rows == 0) return;
  const unsigned blocks = grid_for(rows * hidden, 256);
  if (x.dtype() == DType::kBF16) {
    add_sigmoid_gated_kernel<<<blocks, 256, 0, current_stream()>>>(x.data_as<__nv_bfloat16>(),
                                                                   y.data_as<__nv_bfloat16>(),
                                                                   gate.data_as<float>(), rows, hidden);
  } else if (x.dtype() == DType::kF32) {
    add_sigmoid_gated_kernel<<<blocks, 256, 0, current_stream()>>>(x.data_as<float>(), y.data_as<float>(),
                                                                   gate.data_as<float>(), rows, hidden);
  } else {
    unsupported_dtype("add_sigmoid_gated", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
