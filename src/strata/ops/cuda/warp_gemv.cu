// out[M, N] = x[M, K] @ weight[N, K]^T (+ bias): W warps per block (8, or 4 for short expert
// rows), warp w of block b owns weight rows [(b * W + w) * F, + F). Lane l reads 16-byte chunks l, l + 32, ... of each row,
// U chunks per row per iteration, all issued before any is used (F * U loads in flight).
#include "strata/ops/cuda/activation.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dot_bf16.cuh"
#include "strata/ops/cuda/gemv_x_stage.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/cuda/warp_gemv.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;

struct Params {
  const uint4* x;       // [M, K / 8], or [M, 2 K / 8] gate | up with `gated`
  const uint4* weight;  // [N, K / 8]
  const bf16* bias;     // [N] or null
  void* out;            // [M, N]
  int64_t n, chunks;    // chunks = K / 8
  bool gated, accumulate;
  ops::Activation act;
  // Expert products: block row y is pair y, which reads weight [expert_ids[y]] (of num_experts
  // stacked [N, K] matrices) and x row y / pairs_per_x, and writes out row y. Dense: null, 1 pair.
  const int32_t* expert_ids;
  int64_t num_pairs, num_experts, pairs_per_x;
};

__device__ void stage_x(const Params& p, int rows, uint4* xs) {
  const int64_t row_chunks = p.gated ? 2 * p.chunks : p.chunks;
  stage_gemv_x(p.x + blockIdx.y / p.pairs_per_x * row_chunks, p.chunks, rows, p.gated, p.act, xs);
}

// Loads the U chunks of F rows starting at chunk c (chunks past the row end read as zero).
template <int F, int U>
__device__ __forceinline__ void load_weights(const Params& p, int64_t row0, int64_t c, uint4 (&w)[F][U]) {
#pragma unroll
  for (int f = 0; f < F; ++f)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t cc = c + u * 32;
      w[f][u] = (row0 + f < p.n && cc < p.chunks) ? __ldcs(p.weight + (row0 + f) * p.chunks + cc) : make_uint4(0, 0, 0, 0);
    }
}

template <int W, int R, int F, int U, typename Tout>
__global__ void __launch_bounds__(W * 32) warp_gemv_kernel(Params p, int rows) {
  extern __shared__ uint4 xs[];  // [rows, chunks]
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * W + warp) * F;
  if (p.expert_ids != nullptr) {  // the router ahead wrote the ids: wait before the weights
    wait_for_previous_kernel();
    const int64_t expert = min(max(static_cast<int64_t>(p.expert_ids[blockIdx.y]), int64_t{0}), p.num_experts - 1);
    p.weight += expert * p.n * p.chunks;
  }
  uint4 w[F][U];
  load_weights<F, U>(p, row0, lane, w);  // dense: independent of the previous kernel's output
  wait_for_previous_kernel();
  float before[F][R] = {};  // out's values ahead of an accumulate, read while the weights stream
  if (p.accumulate && lane == 0) {
#pragma unroll
    for (int f = 0; f < F; ++f)
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < rows && row0 + f < p.n) before[f][r] = to_f32(static_cast<const Tout*>(p.out)[(blockIdx.y + r) * p.n + row0 + f]);
  }
  stage_x(p, rows, xs);
  __syncthreads();
  float acc[F][R] = {};
  for (int64_t c = lane; c < p.chunks; c += 32 * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t cc = c + u * 32;
      if (cc >= p.chunks) break;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= rows) break;
        const uint4 xv = xs[r * p.chunks + cc];
#pragma unroll
        for (int f = 0; f < F; ++f) fma_bf16x8(acc[f][r], w[f][u], xv);
      }
    }
    if (c + 32 * U < p.chunks) load_weights<F, U>(p, row0, c + 32 * U, w);
  }
  allow_next_kernel();
#pragma unroll
  for (int f = 0; f < F; ++f)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float v = acc[f][r];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0 && r < rows && row0 + f < p.n) {
        if (p.bias != nullptr) v += __bfloat162float(p.bias[row0 + f]);
        Tout* dst = static_cast<Tout*>(p.out) + (blockIdx.y + r) * p.n + row0 + f;
        *dst = from_f32<Tout>(v + before[f][r]);
      }
    }
}

template <int W, int R, int F, int U, typename Tout>
void launch_variant(const Params& params, int rows, cudaStream_t stream) {
  const size_t smem = static_cast<size_t>(rows * params.chunks) * sizeof(uint4);
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(warp_gemv_kernel<W, R, F, U, Tout>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kWarpGemvMaxXBytes)));
    return true;
  }();
  (void)configured;
  const int64_t blocks = ceil_div(params.n, int64_t{W} * F);
  launch_dependent(warp_gemv_kernel<W, R, F, U, Tout>,
                   dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(params.num_pairs)), dim3(W * 32), smem,
                   stream, params, rows);
}

// R: rows rounded up to a power of two (the accumulators held per weight row).
template <int F, int U, typename Tout, int W = 8>
void launch_rows(const Params& params, int rows, cudaStream_t stream) {
  if (rows == 1) return launch_variant<W, 1, F, U, Tout>(params, rows, stream);
  if (rows == 2) return launch_variant<W, 2, F, U, Tout>(params, rows, stream);
  if (rows <= 4) return launch_variant<W, 4, F, U, Tout>(params, rows, stream);
  launch_variant<W, 8, F, U, Tout>(params, rows, stream);
}

// Expert pairs read one x row each: only the one-row kernels.
template <typename Tout>
void launch_experts(const Params& params, WarpGemvVariant variant, cudaStream_t stream) {
  switch (variant) {
    case WarpGemvVariant::kRows2Unroll3: return launch_variant<8, 1, 2, 3, Tout>(params, 1, stream);
    case WarpGemvVariant::kRows4Unroll3: return launch_variant<8, 1, 4, 3, Tout>(params, 1, stream);
    case WarpGemvVariant::kRows2Unroll3Warps4: return launch_variant<4, 1, 2, 3, Tout>(params, 1, stream);
    case WarpGemvVariant::kRows1Unroll3Warps4: return launch_variant<4, 1, 1, 3, Tout>(params, 1, stream);
    case WarpGemvVariant::kRows2Unroll8: return launch_variant<8, 1, 2, 8, Tout>(params, 1, stream);
    case WarpGemvVariant::kRows1Unroll8: return launch_variant<8, 1, 1, 8, Tout>(params, 1, stream);
    default: break;
  }
  // Short rows (the 30B's down projection, K = 768): 4-warp blocks, all of a row's loads at once.
  if (params.chunks <= 96) return launch_variant<4, 1, 2, 3, Tout>(params, 1, stream);
  launch_variant<8, 1, 2, 4, Tout>(params, 1, stream);
}

template <typename Tout>
void launch(const Params& params, int rows, WarpGemvVariant variant, cudaStream_t stream) {
  switch (variant) {
    case WarpGemvVariant::kRows1Unroll8: return launch_rows<1, 8, Tout>(params, rows, stream);
    case WarpGemvVariant::kRows2Unroll4: return launch_rows<2, 4, Tout>(params, rows, stream);
    case WarpGemvVariant::kRows4Unroll2: return launch_rows<4, 2, Tout>(params, rows, stream);
    case WarpGemvVariant::kRows2Unroll8: return launch_rows<2, 8, Tout>(params, rows, stream);
    case WarpGemvVariant::kRows1Unroll8Warps4: return launch_rows<1, 8, Tout, 4>(params, rows, stream);
    default: break;
  }
  STRATA_CHECK(false);
}

// More rows of x mean more accumulators per weight row: fewer weight rows per warp. Few weight
// rows (a router) spread one a warp over more SMs (H100, the 30B's router: 5.0 against 5.7 us).
WarpGemvVariant auto_variant(int64_t rows, int64_t n) {
  return rows <= 2 && n > 1024 ? WarpGemvVariant::kRows2Unroll4 : WarpGemvVariant::kRows1Unroll8;
}

}  // namespace

bool warp_gemv_supported(const GroupedGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return args.offsets == nullptr && args.num_experts == 1 && args.m >= 1 && args.m <= kWarpGemvMaxRows &&
         args.k % 8 == 0 && args.k > 0 && args.m * args.k * 2 <= kWarpGemvMaxXBytes && aligned(args.x) &&
         aligned(args.weight) && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void warp_gemv(const GroupedGemmArgs& args, cudaStream_t stream, WarpGemvVariant variant,
               const WarpGemvFusion& fusion) {
  if (args.n == 0) return;
  STRATA_CHECK(warp_gemv_supported(args));
  const Params params{.x = static_cast<const uint4*>(args.x), .weight = static_cast<const uint4*>(args.weight),
                      .bias = static_cast<const bf16*>(args.bias), .out = args.out, .n = args.n,
                      .chunks = args.k / 8, .gated = fusion.gated_input.has_value(),
                      .accumulate = fusion.accumulate,
                      .act = fusion.gated_input.value_or(ops::Activation::kSilu), .expert_ids = nullptr,
                      .num_pairs = 1, .num_experts = 1, .pairs_per_x = 1};
  if (variant == WarpGemvVariant::kAuto) variant = auto_variant(args.m, args.n);
  const int rows = static_cast<int>(args.m);
  if (args.out_dtype == DType::kF32) {
    launch<float>(params, rows, variant, stream);
  } else {
    launch<bf16>(params, rows, variant, stream);
  }
}

bool warp_gemv_experts_supported(const WarpGemvExpertArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return args.k % 8 == 0 && args.k > 0 && args.k * 2 <= kWarpGemvMaxXBytes && aligned(args.x) &&
         aligned(args.weights) && args.num_pairs <= 65535 && args.pairs_per_x >= 1 &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void warp_gemv_experts(const WarpGemvExpertArgs& args, cudaStream_t stream) {
  if (args.n == 0 || args.num_pairs == 0) return;
  STRATA_CHECK(warp_gemv_experts_supported(args));
  const Params params{.x = static_cast<const uint4*>(args.x), .weight = static_cast<const uint4*>(args.weights),
                      .bias = nullptr, .out = args.out, .n = args.n, .chunks = args.k / 8,
                      .gated = args.gated_input.has_value(), .accumulate = false,
                      .act = args.gated_input.value_or(ops::Activation::kSilu), .expert_ids = args.expert_ids,
                      .num_pairs = args.num_pairs, .num_experts = args.num_experts, .pairs_per_x = args.pairs_per_x};
  if (args.out_dtype == DType::kF32) {
    launch_experts<float>(params, args.variant, stream);
  } else {
    launch_experts<bf16>(params, args.variant, stream);
  }
}

}  // namespace strata::cuda
