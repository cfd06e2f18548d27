// 8 warps per block; warp w of block b owns weight rows [(b * 8 + w) * F, + F). A row is K / 128
// blocks of 128 e4m3 codes with an f32 scale each (device layout: fp8.cuh); the warp reads a block
// per 4-byte load (lane l: codes 4l..4l+3), U blocks of each of its F rows in flight.
// x is staged in K tiles that fit shared memory (8 rows of K = 14336 do not fit at once).
#include <algorithm>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/fp8_gemv.h"
#include "strata/ops/cuda/gemv_x_stage.cuh"
#include "strata/ops/cuda/pdl.cuh"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int64_t kMaxXBytes = 96 * 1024;

struct Params {
  const uint4* x;         // [M, K / 8] 16-byte chunks, or [M, 2K / 8] gated
  const uint8_t* weight;  // [N, K / 128] blocks
  const bf16* bias;       // [N] or null
  void* out;              // [M, N]
  int64_t n, k, blocks;   // blocks = K / 128
  int64_t tile_blocks;    // blocks of x staged at a time, a multiple of 16 (every U)
  bool gated, accumulate;
  ops::Activation act;
};

// Codes and scales of blocks [b, b + U) of rows [row0, row0 + F); past the ends: zero.
template <int F, int U>
__device__ __forceinline__ void load_blocks(const Params& p, int64_t row0, int64_t b, int lane, uint32_t (&w)[F][U],
                                            float (&s)[F][U]) {
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool valid = row0 + f < p.n && b + u < p.blocks;
      const int64_t code = fp8_code_offset(row0 + f, (b + u) * kFp8Block + 4 * lane, p.k);
      w[f][u] = valid ? __ldcs(reinterpret_cast<const unsigned int*>(p.weight + code)) : 0u;
      s[f][u] = valid ? __ldcs(reinterpret_cast<const float*>(p.weight + fp8_scale_offset(row0 + f, b + u, p.k))) : 0.f;
    }
  }
}

__device__ __forceinline__ float4 x_quad(const bf16* xs_row, int64_t col) {
  const uint2 v = *reinterpret_cast<const uint2*>(xs_row + col);
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

template <int R, int F, int U, typename Tout>
__global__ void __launch_bounds__(kThreads) fp8_gemv_kernel(Params p, int rows) {
  extern __shared__ uint4 xs[];  // [rows, tile_blocks * 128 / 8]
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarps + warp) * F;
  uint32_t w[F][U];
  float s[F][U];
  load_blocks<F, U>(p, row0, 0, lane, w, s);  // weights do not depend on the previous kernel
  wait_for_previous_kernel();
  float acc[F][R] = {};
  const bf16* x = reinterpret_cast<const bf16*>(xs);
  for (int64_t tile = 0; tile < p.blocks; tile += p.tile_blocks) {
    const int64_t tile_end = tile + p.tile_blocks < p.blocks ? tile + p.tile_blocks : p.blocks, tile_cols = (tile_end - tile) * kFp8Block;
    if (tile > 0) __syncthreads();  // every warp is done with the previous tile
    stage_gemv_x_cols(p.x, p.k / 8, tile * kFp8Block / 8, tile_cols / 8, rows, p.gated, p.act, xs, tile_cols / 8);
    __syncthreads();
    for (int64_t b = tile; b < tile_end; b += U) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (b + u >= tile_end) break;
        const int64_t col = (b + u - tile) * kFp8Block + 4 * lane;
        float4 wf[F];
#pragma unroll
        for (int f = 0; f < F; ++f) wf[f] = fp8x4_to_float4(w[f][u]);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if (r >= rows) break;
          const float4 xv = x_quad(x + r * tile_cols, col);
#pragma unroll
          for (int f = 0; f < F; ++f)
            acc[f][r] += s[f][u] * (wf[f].x * xv.x + wf[f].y * xv.y + wf[f].z * xv.z + wf[f].w * xv.w);
        }
      }
      if (b + U < p.blocks) load_blocks<F, U>(p, row0, b + U, lane, w, s);
    }
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
        Tout* dst = static_cast<Tout*>(p.out) + r * p.n + row0 + f;
        if (p.accumulate) v += to_f32(*dst);
        *dst = from_f32<Tout>(v);
      }
    }
}

template <int R, int F, int U, typename Tout>
void launch_variant(const Params& params, int rows, cudaStream_t stream) {
  const size_t smem = static_cast<size_t>(rows * params.tile_blocks * kFp8Block) * sizeof(bf16);
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(fp8_gemv_kernel<R, F, U, Tout>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kMaxXBytes)));
    return true;
  }();
  (void)configured;
  const int64_t grid = ceil_div(params.n, int64_t{kWarps} * F);
  launch_dependent(fp8_gemv_kernel<R, F, U, Tout>, dim3(static_cast<unsigned>(grid)), dim3(kThreads), smem, stream,
                   params, rows);
}

// R: rows rounded up to a power of two (the accumulators held per weight row).
template <int F, int U, typename Tout>
void launch_rows(const Params& params, int rows, cudaStream_t stream) {
  if (rows == 1) return launch_variant<1, F, U, Tout>(params, rows, stream);
  if (rows == 2) return launch_variant<2, F, U, Tout>(params, rows, stream);
  if (rows <= 4) return launch_variant<4, F, U, Tout>(params, rows, stream);
  launch_variant<8, F, U, Tout>(params, rows, stream);
}

template <typename Tout>
void launch(const Params& params, int rows, Fp8GemvVariant variant, cudaStream_t stream) {
  switch (variant) {
    case Fp8GemvVariant::kRows2Unroll8: return launch_rows<2, 8, Tout>(params, rows, stream);
    case Fp8GemvVariant::kRows1Unroll16: return launch_rows<1, 16, Tout>(params, rows, stream);
    case Fp8GemvVariant::kRows4Unroll4: return launch_rows<4, 4, Tout>(params, rows, stream);
    case Fp8GemvVariant::kAuto: break;
  }
  STRATA_CHECK(false);
}

// Two rows a warp where that still gives every SM two blocks; else one, for more blocks.
Fp8GemvVariant auto_variant(const QuantGemvArgs& args) {
  return ceil_div(args.n, 2 * kWarps) >= 2 * num_sms() ? Fp8GemvVariant::kRows2Unroll8 : Fp8GemvVariant::kRows1Unroll16;
}

}  // namespace

bool fp8_gemv_supported(const QuantGemvArgs& args) {
  auto aligned = [](const void* p, uintptr_t to) { return reinterpret_cast<uintptr_t>(p) % to == 0; };
  return args.m >= 1 && args.m <= kFp8GemvMaxRows && args.k > 0 && args.k % kFp8Block == 0 &&
         aligned(args.x, 16) && aligned(args.weight, 4) &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void fp8_gemv(const QuantGemvArgs& args, cudaStream_t stream, Fp8GemvVariant variant) {
  if (args.n == 0) return;
  STRATA_CHECK(fp8_gemv_supported(args));
  Params params{.x = static_cast<const uint4*>(args.x), .weight = static_cast<const uint8_t*>(args.weight),
                      .bias = static_cast<const bf16*>(args.bias), .out = args.out, .n = args.n, .k = args.k,
                      .blocks = args.k / kFp8Block, .gated = args.gated_input.has_value(),
                      .accumulate = args.accumulate, .act = args.gated_input.value_or(ops::Activation::kSilu)};
  if (variant == Fp8GemvVariant::kAuto) variant = auto_variant(args);
  const int rows = static_cast<int>(args.m);
  params.tile_blocks = std::min(params.blocks, kMaxXBytes / (rows * kFp8Block * 2) / 16 * 16);
  if (args.out_dtype == DType::kF32) {
    launch<float>(params, rows, variant, stream);
  } else {
    launch<bf16>(params, rows, variant, stream);
  }
}

}  // namespace strata::cuda
