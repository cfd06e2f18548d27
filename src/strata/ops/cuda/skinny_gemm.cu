// Each warp computes two output features for up to 8 rows at a time: the two weight rows
// stream through once per 8 rows with 16-byte loads, x rows come from L1/L2. Grid:
// (N / 16 features per block, groups); a group's rows are [offsets[g], offsets[g + 1]).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/skinny_gemm.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kRows = 8;           // rows of x per pass
constexpr int kFeaturesPerWarp = 2;
constexpr int kWarps = 8;

__device__ __forceinline__ void fma8(float& acc, const uint4& w, const uint4& x) {
  const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
  const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = __bfloat1622float2(wp[i]), b = __bfloat1622float2(xp[i]);
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
  }
}

template <typename Tout>
__global__ void __launch_bounds__(kWarps * 32) skinny_gemm_kernel(SkinnyGemmArgs p) {
  const int g = blockIdx.y;
  const int64_t row_begin = p.offsets != nullptr ? p.offsets[g] : 0;
  const int64_t row_end = p.offsets != nullptr ? p.offsets[g + 1] : p.m;
  if (row_begin >= row_end) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n0 = (static_cast<int64_t>(blockIdx.x) * kWarps + warp) * kFeaturesPerWarp;
  if (n0 >= p.n) return;
  const bool two = n0 + 1 < p.n;
  const bf16* w0 = static_cast<const bf16*>(p.weight) + (static_cast<int64_t>(g) * p.n + n0) * p.k;
  const bf16* w1 = two ? w0 + p.k : w0;
  const int64_t chunks = p.k / 8;
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kRows) {
    const int rows = static_cast<int>(row_end - r0 < kRows ? row_end - r0 : kRows);
    float acc[kFeaturesPerWarp][kRows] = {};
#pragma unroll 4
    for (int64_t c = lane; c < chunks; c += 32) {
      const uint4 a = reinterpret_cast<const uint4*>(w0)[c];
      const uint4 b = reinterpret_cast<const uint4*>(w1)[c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r < rows) {
          const uint4 xv = reinterpret_cast<const uint4*>(static_cast<const bf16*>(p.x) + (r0 + r) * p.k)[c];
          fma8(acc[0][r], a, xv);
          fma8(acc[1][r], b, xv);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int f = 0; f < kFeaturesPerWarp; ++f)
        for (int o = 16; o > 0; o >>= 1) acc[f][r] += __shfl_xor_sync(0xffffffffu, acc[f][r], o);
    }
    if (lane < rows * kFeaturesPerWarp) {
      const int r = lane / kFeaturesPerWarp, f = lane % kFeaturesPerWarp;
      float v = 0.0f;
#pragma unroll
      for (int rr = 0; rr < kRows; ++rr)
#pragma unroll
        for (int ff = 0; ff < kFeaturesPerWarp; ++ff)
          if (rr == r && ff == f) v = acc[ff][rr];
      const int64_t n = n0 + f;
      if (f == 0 || two) {
        if (p.bias != nullptr) v += __bfloat162float(static_cast<const bf16*>(p.bias)[n]);
        static_cast<Tout*>(p.out)[(r0 + r) * p.n + n] = from_f32<Tout>(v);
      }
    }
  }
}

}  // namespace

bool skinny_gemm_supported(const SkinnyGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return args.k % 8 == 0 && aligned(args.x) && aligned(args.weight);
}

void skinny_gemm(const SkinnyGemmArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  STRATA_CHECK(skinny_gemm_supported(args));
  const dim3 grid(static_cast<unsigned>(ceil_div(args.n, kWarps * kFeaturesPerWarp)),
                  static_cast<unsigned>(args.num_groups));
  if (args.out_dtype == DType::kF32) {
    skinny_gemm_kernel<float><<<grid, kWarps * 32, 0, stream>>>(args);
  } else {
    skinny_gemm_kernel<bf16><<<grid, kWarps * 32, 0, stream>>>(args);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
