// CUDA expert_linear_combine: block (b, t) owns output rows [b * W * F, + W * F) of token t;
// each warp streams its F rows of every one of the token's k experts as one run of k * K / 8
// chunks (the next expert's loads issue while the last chunks of this one are summed), scales
// each chunk's dot by its pair's weight and adds the rows into out once. x's k rows (act(gate) *
// up where gated) are staged in shared memory. Quantized experts run the product and combine apart.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dot_bf16.cuh"
#include "strata/ops/cuda/gemv_x_stage.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/cuda/warp_gemv.h"
#include "strata/ops/expert_combine.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kMaxPairs = 32;  // experts a token chooses (top_k) that one block stages

struct Params {
  const uint4* x;             // [T * k, K / 8], or [T * k, 2 K / 8] gate | up with `gated`
  const uint4* weights;       // [E, N, K / 8]
  const int32_t* expert_ids;  // [T * k]
  const float* pair_weights;  // [T * k]
  void* out;                  // [T, N]
  int64_t n, chunks, num_experts;
  int k;
  bool gated, accumulate;
  ops::Activation act;
};

template <int F, int U>
__device__ __forceinline__ void load_chunks(const Params& p, const int64_t* expert_row0, int64_t row0, int64_t flat,
                                            uint4 (&w)[F][U]) {
  const int64_t total = p.k * p.chunks;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t cc = flat + u * 32;
    const int64_t j = cc / p.chunks, c = cc - j * p.chunks;
#pragma unroll
    for (int f = 0; f < F; ++f)
      w[f][u] = (row0 + f < p.n && cc < total) ? __ldcs(p.weights + (expert_row0[j] + row0 + f) * p.chunks + c)
                                               : make_uint4(0, 0, 0, 0);
  }
}

template <int W, int F, int U, typename Tout>
__global__ void __launch_bounds__(W * 32) expert_combine_kernel(Params p) {
  extern __shared__ uint4 xs[];  // [k, chunks]
  __shared__ int64_t expert_row0[kMaxPairs];  // each pair's expert's first row, in rows of the stack
  __shared__ float pair_weight[kMaxPairs];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t token = blockIdx.y, row0 = (static_cast<int64_t>(blockIdx.x) * W + warp) * F;
  wait_for_previous_kernel();  // the router wrote the ids and weights, the gate | up product x
  if (threadIdx.x < p.k) {
    const int64_t pair = token * p.k + threadIdx.x;
    const int64_t expert = min(max(static_cast<int64_t>(p.expert_ids[pair]), int64_t{0}), p.num_experts - 1);
    expert_row0[threadIdx.x] = expert * p.n;
    pair_weight[threadIdx.x] = p.pair_weights[pair];
  }
  const int64_t row_chunks = p.gated ? 2 * p.chunks : p.chunks;
  stage_gemv_x(p.x + token * p.k * row_chunks, p.chunks, p.k, p.gated, p.act, xs);
  __syncthreads();
  const int64_t total = p.k * p.chunks;
  uint4 w[F][U];
  load_chunks<F, U>(p, expert_row0, row0, lane, w);
  float acc[F] = {};
  for (int64_t flat = lane; flat < total; flat += 32 * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t cc = flat + u * 32;
      if (cc >= total) break;
      const uint4 xv = xs[cc];
      const float scale = pair_weight[cc / p.chunks];
#pragma unroll
      for (int f = 0; f < F; ++f) {
        float dot = 0.0f;
        fma_bf16x8(dot, w[f][u], xv);
        acc[f] = fmaf(scale, dot, acc[f]);
      }
    }
    if (flat + 32 * U < total) load_chunks<F, U>(p, expert_row0, row0, flat + 32 * U, w);
  }
  allow_next_kernel();
#pragma unroll
  for (int f = 0; f < F; ++f) {
    float v = acc[f];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0 && row0 + f < p.n) {
      Tout* dst = static_cast<Tout*>(p.out) + token * p.n + row0 + f;
      if (p.accumulate) v += to_f32(*dst);
      *dst = from_f32<Tout>(v);
    }
  }
}

// 4 warps of 2 rows with 3 loads each in flight: the pair-order down projection's shape
// (K = 768: one pass of 32 lanes x 3 loads per expert row).
template <typename Tout>
void launch(const Params& p, int64_t tokens, cudaStream_t stream) {
  constexpr int W = 4, F = 2, U = 3;
  const size_t smem = static_cast<size_t>(p.k * p.chunks) * sizeof(uint4);
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(expert_combine_kernel<W, F, U, Tout>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kWarpGemvMaxXBytes)));
    return true;
  }();
  (void)configured;
  const int64_t blocks = ceil_div(p.n, int64_t{W} * F);
  launch_dependent(expert_combine_kernel<W, F, U, Tout>, dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(tokens)),
                   dim3(W * 32), smem, stream, p);
}

bool fusable(const ops::ExpertCombineArgs& a) {
  const int64_t k = a.topk_ids.dim(1), in = a.weights.dim(2);
  const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  return a.x.dtype() == DType::kBF16 && a.weights.dtype() == DType::kBF16 &&
         (a.out.dtype() == DType::kBF16 || a.out.dtype() == DType::kF32) && k <= kMaxPairs && in % 8 == 0 &&
         k * in * 2 <= kWarpGemvMaxXBytes && a.topk_ids.dim(0) <= 65535 && aligned(a.x.data()) &&
         aligned(a.weights.data());
}

}  // namespace

void expert_linear_combine(const ops::ExpertCombineArgs& a) {
  if (a.topk_ids.numel() == 0) return;
  if (!fusable(a)) {
    expert_linear(a.x, a.weights, a.topk_ids, a.scratch, {.gated_input = a.gated_input});
    moe_combine(a.scratch, Tensor(), a.topk_weights, a.out, {.accumulate = a.accumulate});
    return;
  }
  const Params p{.x = static_cast<const uint4*>(a.x.data()), .weights = static_cast<const uint4*>(a.weights.data()),
                 .expert_ids = a.topk_ids.data_as<int32_t>(), .pair_weights = a.topk_weights.data_as<float>(),
                 .out = a.out.data(), .n = a.weights.dim(1), .chunks = a.weights.dim(2) / 8,
                 .num_experts = a.weights.dim(0), .k = static_cast<int>(a.topk_ids.dim(1)),
                 .gated = a.gated_input.has_value(), .accumulate = a.accumulate,
                 .act = a.gated_input.value_or(ops::Activation::kSilu)};
  if (a.out.dtype() == DType::kF32) {
    launch<float>(p, a.topk_ids.dim(0), current_stream());
  } else {
    launch<bf16>(p, a.topk_ids.dim(0), current_stream());
  }
}

}  // namespace strata::cuda
