// FP8 on the tensor-core GEMV skeleton (mma_gemv.cuh). Lane (g, t) = (lane / 4, lane % 4) loads
// codes 16t..16t+15 of each 64-column half of a block for rows g and g + 8 and the same columns
// of x row g; mma step s of the half takes codes 4s..4s+3: the k order is permuted alike.
#include "strata/ops/cuda/fp8_mma_gemv.h"

#include <cuda_fp8.h>

#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/mma_gemv.cuh"
#include "strata/ops/cuda/quant_mma_gemm.cuh"

namespace strata::cuda {
namespace {

using mma_gemv::Params;

// Two e4m3 codes as bf16x2 of their values times 2^-112 (every code widens to a normal f16 or 0).
__device__ __forceinline__ uint32_t fp8x2_to_bf16x2_scaled(uint32_t codes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes & 0xffffu), __NV_E4M3);
  return mma_gemv::f16x2_to_bf16x2_scaled(static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16));
}

struct Fp8Format {
  static constexpr bool kXSums = false;
  // Codes 16t..16t+15 of each half of rows g and g + 8, and the rows' scales (times 2^112).
  struct Load {
    uint4 lo[2], hi[2];
    float scale_lo, scale_hi;
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return fp8_row_bytes(k); }

  template <bool kWide>
  __device__ static void load(const Params& p, int64_t row, int64_t b, int t, Load& l) {
    const bool lo_valid = row < p.n, hi_valid = row + 8 < p.n;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t col = b * kFp8Block + 64 * h + 16 * t;
      l.lo[h] = lo_valid ? mma_gemv::load16<kWide>(p.weight + fp8_code_offset(row, col, p.k)) : uint4{};
      l.hi[h] = hi_valid ? mma_gemv::load16<kWide>(p.weight + fp8_code_offset(row + 8, col, p.k)) : uint4{};
    }
    const auto scale = [&](int64_t r) {
      return __ldcs(reinterpret_cast<const float*>(p.weight + fp8_scale_offset(r, b, p.k))) * mma_gemv::kUnscale;
    };
    l.scale_lo = lo_valid ? scale(row) : 0.f;
    l.scale_hi = hi_valid ? scale(row + 8) : 0.f;
  }

  // acc += block b's product, summed apart in f32 and scaled per weight row.
  template <int NT, typename X>
  __device__ static void product(const X& x, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
    float part[NT][4] = {};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint4 xv[NT][2];  // x row nt * 8 + g, columns 16t..16t+15 of the half
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int64_t col = b * kFp8Block + 64 * h + 16 * t;
        xv[nt][0] = x.load8(nt * 8 + g, col);
        xv[nt][1] = x.load8(nt * 8 + g, col + 8);
      }
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const uint32_t lo = mma_gemv::word(l.lo[h], s), hi = mma_gemv::word(l.hi[h], s);
        const uint32_t a[4] = {fp8x2_to_bf16x2_scaled(lo), fp8x2_to_bf16x2_scaled(hi),
                               fp8x2_to_bf16x2_scaled(lo >> 16), fp8x2_to_bf16x2_scaled(hi >> 16)};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint4& xs = xv[nt][s / 2];
          mma_gemv::mma_bf16(part[nt], a, s % 2 == 0 ? uint2{xs.x, xs.y} : uint2{xs.z, xs.w});
        }
      }
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      acc[nt][0] += part[nt][0] * l.scale_lo;
      acc[nt][1] += part[nt][1] * l.scale_lo;
      acc[nt][2] += part[nt][2] * l.scale_hi;
      acc[nt][3] += part[nt][3] * l.scale_hi;
    }
  }
};

// K a multiple of 256 keeps every row 8-byte aligned (33 K / 32 bytes), of 512 16-byte aligned.
bool weight_aligned(const void* weight, int64_t k) {
  return k > 0 && k % kFp8MmaGemvKMultiple == 0 && mma_gemv::aligned(weight, fp8_row_bytes(k) % 16 == 0 ? 16 : 8);
}

int variant_warps(Fp8MmaGemvVariant variant, int64_t rows, int64_t units) {
  switch (variant) {
    case Fp8MmaGemvVariant::kWarps8: return 8;
    case Fp8MmaGemvVariant::kWarps4: return 4;
    case Fp8MmaGemvVariant::kWarps2: return 2;
    case Fp8MmaGemvVariant::kAuto: break;
  }
  return mma_gemv::auto_warps(rows, units);
}

}  // namespace

bool fp8_mma_gemv_supported(const QuantGemvArgs& args) {
  return args.m >= 1 && args.m <= kFp8MmaGemvMaxRows && weight_aligned(args.weight, args.k) && !args.gated_input &&
         mma_gemv::aligned(args.x, 16) && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void fp8_mma_gemv(const QuantGemvArgs& args, cudaStream_t stream, Fp8MmaGemvVariant variant) {
  if (args.n == 0) return;
  STRATA_CHECK(fp8_mma_gemv_supported(args));
  const Params params = mma_gemv::params_for(args);
  const int warps = variant_warps(variant, args.m, params.units);
  mma_gemv::launch_for<Fp8Format>(args.out_dtype, params, 1, {.warps = warps}, stream);
}

bool fp8_mma_gemv_experts_supported(const QuantExpertArgs& args) {
  return weight_aligned(args.weights, args.k) && mma_gemv::aligned(args.x, 16) && args.pairs_per_x >= 1 &&
         args.num_pairs <= 65535 && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void fp8_mma_gemv_experts(const QuantExpertArgs& args, cudaStream_t stream) {
  if (args.num_pairs == 0 || args.n == 0) return;
  STRATA_CHECK(fp8_mma_gemv_experts_supported(args));
  const Params params = mma_gemv::params_for(args);
  mma_gemv::launch_for<Fp8Format>(args.out_dtype, params, static_cast<unsigned>(args.num_pairs), {.warps = 8}, stream);
}

void fp8_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream) {
  constexpr int kUnits = quant_gemm::kTileK / kFp8Block;
  if (fp8_row_bytes(launch.p.k) % 16 == 0) return quant_gemm::launch<Fp8Format, kUnits, true>(launch, stream);
  quant_gemm::launch<Fp8Format, kUnits, false>(launch, stream);
}

}  // namespace strata::cuda
