// CUDA mixture-of-experts pieces: top-k routing (a warp per token, a block past 512 experts),
// grouped linears through the grouped kernels (offsets read on the device: no host sync, any
// batch can be captured in a graph) and the weighted combine. The stable grouping by expert lives in moe_group.cu.
#include <string>

#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/quant_widen.h"
#include "strata/ops/cuda/grouped_gemm.h"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

constexpr int kRouteThreads = 256;

struct RouteParams {
  const float* logits;  // [T, E]
  int32_t* ids;         // [T, k]
  float* weights;       // [T, k]
  int64_t experts, k;
  bool softmax, renormalise;
  float scaling;
};

__global__ void route_kernel(RouteParams p) {
  extern __shared__ float scores[];  // [E]
  __shared__ float vals[32], chosen_sum;
  __shared__ int idxs[32];
  const int64_t t = blockIdx.x;
  const float* logits = p.logits + t * p.experts;
  float mx = -INFINITY;
  int unused = 0;
  wait_for_previous_kernel();  // the router's logits
  allow_next_kernel();         // the next kernel's blocks may come resident; it waits for all of this one
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
    float best;
    int best_e;
    block_max_of(scores, p.experts, best, best_e, vals, idxs);
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

// Decode-sized routing: one warp per token, scores in registers (expert lane + 32 i), no block
// barriers. Same math and tie rule (lowest id) as route_kernel. E <= 32 * kWarpScores.
constexpr int kWarpScores = 16;
constexpr int kRouteWarps = 4;

__device__ __forceinline__ void warp_argmax(float& value, int& index) {
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, o);
    const int i = __shfl_xor_sync(0xffffffffu, index, o);
    if (v > value || (v == value && i < index)) value = v, index = i;
  }
}

__global__ void __launch_bounds__(kRouteWarps * 32) route_warp_kernel(RouteParams p, int64_t tokens) {
  const int lane = threadIdx.x % 32;
  const int64_t t = blockIdx.x * static_cast<int64_t>(kRouteWarps) + threadIdx.x / 32;
  wait_for_previous_kernel();  // the router's logits
  allow_next_kernel();         // the next kernel's blocks may come resident; it waits for all of this one
  if (t >= tokens) return;
  const float* logits = p.logits + t * p.experts;
  float scores[kWarpScores];
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < kWarpScores; ++i) {
    const int64_t e = lane + 32 * i;
    scores[i] = e < p.experts ? logits[e] : -INFINITY;
    mx = fmaxf(mx, scores[i]);
  }
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kWarpScores; ++i) {
    if (lane + 32 * i >= p.experts) continue;
    scores[i] = p.softmax ? expf(scores[i] - mx) : 1.0f / (1.0f + expf(-scores[i]));
    sum += scores[i];
  }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  float chosen_sum = 0.0f, mine = 0.0f;  // lane j keeps the weight of choice j
  for (int64_t j = 0; j < p.k; ++j) {
    float best = -INFINITY;
    int best_e = INT_MAX;
#pragma unroll
    for (int i = 0; i < kWarpScores; ++i)
      if (scores[i] > best) best = scores[i], best_e = lane + 32 * i;
    warp_argmax(best, best_e);
#pragma unroll
    for (int i = 0; i < kWarpScores; ++i)
      if (lane + 32 * i == best_e) scores[i] = -INFINITY;
    const float w = p.softmax ? best / sum : best;
    chosen_sum += w;
    if (lane == j % 32) mine = w;
    if (lane == 0) p.ids[t * p.k + j] = best_e;
  }
  if (lane < p.k) p.weights[t * p.k + lane] = mine * ((p.renormalise ? 1.0f / chosen_sum : 1.0f) * p.scaling);
}

__global__ void invert_kernel(const int32_t* sorted, int32_t* position, int64_t pairs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t pair = sorted[i];
    if (pair >= 0 && pair < pairs) position[pair] = static_cast<int32_t>(i);
  }
}

struct CombineParams {
  const int32_t* position;  // [pairs]: the row of y of each pair, or null (pair order)
  const float* weights;     // [T, k]
  int64_t k, hidden, pairs;
  bool accumulate;          // out += the combine
};

// Pair t * k + j's row of y, clamped so that a bad permutation cannot read outside y.
__device__ __forceinline__ int64_t pair_row(const CombineParams& p, int64_t t, int64_t j) {
  if (p.position == nullptr) return t * p.k + j;
  return min(max(p.position[t * p.k + j], 0), static_cast<int32_t>(p.pairs - 1));
}

// out[t] (+)= sum_j w[t, j] * y[pair_row(t, j)].
template <typename T>
__global__ void combine_kernel(const T* y, T* out, CombineParams p) {
  const int64_t t = blockIdx.x, k = p.k, hidden = p.hidden;
  const float* weights = p.weights;
  wait_for_previous_kernel();  // the experts' products
  allow_next_kernel();
  for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
    float acc = p.accumulate ? to_f32(out[t * hidden + c]) : 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t row = pair_row(p, t, j);
      acc += weights[t * k + j] * to_f32(y[row * hidden + c]);
    }
    out[t * hidden + c] = from_f32<T>(acc);
  }
}

// The bf16 combine with 16-byte loads and stores (hidden a multiple of 8).
__global__ void combine_bf16x8_kernel(const __nv_bfloat16* y, __nv_bfloat16* out, CombineParams p) {
  const int64_t t = blockIdx.x, vecs = p.hidden / 8, k = p.k, hidden = p.hidden;
  const float* weights = p.weights;
  wait_for_previous_kernel();  // the experts' products
  allow_next_kernel();
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    float acc[8] = {};
    if (p.accumulate) {
      const uint4 raw = reinterpret_cast<const uint4*>(out + t * hidden)[v];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = __bfloat1622float2(h[i]);
        acc[2 * i] = f.x, acc[2 * i + 1] = f.y;
      }
    }
#pragma unroll 4
    for (int64_t j = 0; j < k; ++j) {
      const int64_t row = pair_row(p, t, j);
      const float w = weights[t * k + j];
      const uint4 raw = reinterpret_cast<const uint4*>(y + row * hidden)[v];
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = __bfloat1622float2(h[i]);
        acc[2 * i] = fmaf(w, f.x, acc[2 * i]);
        acc[2 * i + 1] = fmaf(w, f.y, acc[2 * i + 1]);
      }
    }
    uint4 packed;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
    reinterpret_cast<uint4*>(out + t * hidden)[v] = packed;
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
  if (e <= 32 * kWarpScores && options.top_k <= 32) {
    launch_dependent(route_warp_kernel, dim3(static_cast<unsigned>(ceil_div(t, kRouteWarps))), dim3(kRouteWarps * 32), 0,
                     current_stream(), p, t);
  } else {
    launch_dependent(route_kernel, dim3(static_cast<unsigned>(t)), dim3(kRouteThreads), e * sizeof(float),
                     current_stream(), p);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

// Quantized experts are widened to bf16 whole, into scratch that only grows, for the bf16 kernels.
Tensor widened_experts(const Tensor& weights) {
  void* widened = scratch(ScratchUse::kWidenedExperts, dtype_bytes(DType::kBF16, weights.numel()));
  widen_to_bf16(weights.dtype(), weights.data(), weights.numel() / weights.dim(2), weights.dim(2), widened);
  return Tensor::view(widened, DType::kBF16, weights.shape(), weights.device());
}

void grouped_linear(const Tensor& x, const Tensor& stored_weights, const Tensor& expert_offsets,
                    const Tensor& out) {
  const Tensor weights = stored_weights.dtype() == DType::kBF16 ? stored_weights : widened_experts(stored_weights);
  if (x.dtype() != DType::kBF16 || weights.dtype() != DType::kBF16) unsupported_dtype("grouped_linear", x.dtype());
  if (out.dtype() != DType::kBF16 && out.dtype() != DType::kF32) unsupported_dtype("grouped_linear out", out.dtype());
  const GroupedGemmArgs args{.x = x.data(), .weight = weights.data(), .offsets = expert_offsets.data_as<int32_t>(),
                             .out = out.data(), .out_dtype = out.dtype(), .num_experts = weights.dim(0),
                             .m = x.dim(0), .n = weights.dim(1), .k = weights.dim(2)};
  if (args.m == 0) return;
  switch (grouped_kernel_for(args)) {
    case GroupedKernel::kTensorCores: grouped_gemm(args, current_stream()); return;
    case GroupedKernel::kBulkStreaming: bulk_gemv(args, current_stream()); return;
    case GroupedKernel::kStreaming: grouped_gemv(args, current_stream()); return;
    case GroupedKernel::kNone: break;
  }
  throw Error("grouped_linear: expert weights [" + std::to_string(args.num_experts) + ", " + std::to_string(args.n) +
              ", " + std::to_string(args.k) + "] need K a multiple of 8 and 16-byte aligned x and weight views on CUDA");
}

void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights, const Tensor& out,
                 const ops::MoeCombineOptions& options) {
  const int64_t t = topk_weights.dim(0), k = topk_weights.dim(1), hidden = y.dim(1), pairs = t * k;
  if (t == 0) return;
  STRATA_CHECK(out.dtype() == y.dtype());
  CombineParams p{.position = nullptr, .weights = topk_weights.data_as<float>(), .k = k, .hidden = hidden,
                  .pairs = pairs, .accumulate = options.accumulate};
  if (sorted_pairs.defined()) {
    auto* position =
        static_cast<int32_t*>(scratch(ScratchUse::kCombinePositions, pairs * static_cast<int64_t>(sizeof(int32_t))));
    invert_kernel<<<grid_for(pairs, 256), 256, 0, current_stream()>>>(sorted_pairs.data_as<int32_t>(), position, pairs);
    STRATA_CUDA_CHECK_LAUNCH();
    p.position = position;
  }
  const int threads = hidden >= 1024 ? 256 : 128;
  const bool vector = y.dtype() == DType::kBF16 && hidden % 8 == 0 &&
                      reinterpret_cast<uintptr_t>(y.data()) % 16 == 0 && reinterpret_cast<uintptr_t>(out.data()) % 16 == 0;
  const dim3 grid(static_cast<unsigned>(t)), block(threads);
  if (vector) {
    launch_dependent(combine_bf16x8_kernel, grid, block, 0, current_stream(), y.data_as<__nv_bfloat16>(),
                     out.data_as<__nv_bfloat16>(), p);
  } else if (y.dtype() == DType::kBF16) {
    launch_dependent(combine_kernel<__nv_bfloat16>, grid, block, 0, current_stream(), y.data_as<__nv_bfloat16>(),
                     out.data_as<__nv_bfloat16>(), p);
  } else if (y.dtype() == DType::kF32) {
    launch_dependent(combine_kernel<float>, grid, block, 0, current_stream(), y.data_as<float>(), out.data_as<float>(), p);
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
