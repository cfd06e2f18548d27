// Q8_0 on the tensor-core GEMV skeleton (mma_gemv.cuh). Lane (g, t) = (lane / 4, lane % 4) loads
// codes 8t..8t+7 of both 32-value blocks of each 64-column half (rows g and g + 8) and the same
// columns of x row g; mma steps 0-1 of the half take the first block, 2-3 the second, so each
// step's partial sums belong to one block and its scale.
#include "strata/ops/cuda/q8_0_mma_gemv.h"

#include "strata/ops/cuda/mma_gemv.cuh"
#include "strata/ops/cuda/quant_mma_gemm_staged.cuh"
#include "strata/weights/quant_blocks.h"

namespace strata::cuda {
namespace {

using mma_gemv::Params;
constexpr int64_t kBlockBytes = sizeof(BlockQ8_0);

__host__ __device__ int64_t q8_row_bytes(int64_t k) { return k / kQk * kBlockBytes; }

// Two int8 values (bytes 2i, 2i + 1 of `word`) as bf16x2 times 2^-112: as f16, 0x64XX with XX
// = v + 128 is 1152 + v, and 1152 comes off exactly.
template <int kPair>
__device__ __forceinline__ uint32_t s8x2_to_bf16x2_scaled(uint32_t word) {
  const uint32_t biased = __byte_perm(word, 0x64646464u, kPair == 0 ? 0x4140 : 0x4342) ^ 0x00800080u;
  const __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&biased), __half2{__half(1152.f), __half(1152.f)});
  return mma_gemv::f16x2_to_bf16x2_scaled(*reinterpret_cast<const uint32_t*>(&v));
}

struct Q8Format {
  static constexpr bool kXSums = false;  // signed codes, no offset
  // Per half h: codes 8t..8t+7 of its first block (x, y) and of its second (z, w), rows g and
  // g + 8; the unit's four block scales of each row (times 2^112).
  struct Load {
    uint4 lo[2], hi[2];
    float scale_lo[4], scale_hi[4];
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return q8_row_bytes(k); }

  // The staged GEMM's tile row (quant_mma_gemm_staged.cuh) is a K = 256 row of the device
  // layout: the two units' codes, then their scales; chunk c's offset in a row of K columns.
  static constexpr int kTileRowBytes = 272;
  __device__ static int64_t tile_chunk_offset(int64_t k, int64_t tile, int c) {
    return c < 16 ? 256 * tile + 16 * c : k + 16 * tile;
  }

  template <bool kWide, typename Mem = mma_gemv::GlobalWeights>
  __device__ static void load(const Params& p, int64_t row, int64_t u, int t, Load& l) {
    const bool lo_valid = row < p.n, hi_valid = row + 8 < p.n;
    const int64_t rb = q8_row_bytes(p.k);
    const auto codes = [&](int64_t r, int h) {
      const uint8_t* at = p.weight + r * rb + u * mma_gemv::kUnitCols + 64 * h + 8 * t;
      const uint2 a = Mem::template load<uint2>(at), b = Mem::template load<uint2>(at + 32);
      return uint4{a.x, a.y, b.x, b.y};
    };
    const auto scales = [&](int64_t r, float (&s)[4]) {
      const uint2 d = Mem::template load<uint2>(p.weight + r * rb + p.k + 8 * u);
      const __half2 d01 = *reinterpret_cast<const __half2*>(&d.x), d23 = *reinterpret_cast<const __half2*>(&d.y);
      s[0] = __low2float(d01) * mma_gemv::kUnscale, s[1] = __high2float(d01) * mma_gemv::kUnscale;
      s[2] = __low2float(d23) * mma_gemv::kUnscale, s[3] = __high2float(d23) * mma_gemv::kUnscale;
    };
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l.lo[h] = lo_valid ? codes(row, h) : uint4{};
      l.hi[h] = hi_valid ? codes(row + 8, h) : uint4{};
    }
    if (lo_valid) scales(row, l.scale_lo); else for (float& s : l.scale_lo) s = 0.f;
    if (hi_valid) scales(row + 8, l.scale_hi); else for (float& s : l.scale_hi) s = 0.f;
  }

  // f(column of the unit, v) for lane t's values of row g (r 0) or g + 8 (r 1): codes 8t..8t+7
  // of each 32-value block times its f16 scale (the load's 2^112 comes off exactly).
  template <typename F>
  __device__ static void visit(const Load& l, int r, int t, F&& f) {
    const uint4* codes = r == 0 ? l.lo : l.hi;
    const float* scales = r == 0 ? l.scale_lo : l.scale_hi;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < 2; ++c)
#pragma unroll
        for (int w = 0; w < 2; ++w) {
          const uint32_t biased = mma_gemv::word(codes[h], 2 * c + w) ^ 0x80808080u;  // v + 128, bytes
          const float d = scales[2 * h + c] / mma_gemv::kUnscale;
          float v[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) v[i] = (mma_gemv::byte_plus_2p23(biased, i) - (mma_gemv::k2p23 + 128.f)) * d;
          f(64 * h + 32 * c + 8 * t + 4 * w, v);
        }
  }

  // Lane t's values of unit u of row g (r 0) or g + 8 (r 1).
  __device__ static void widen(const Load& l, int r, int64_t u, int t, mma_gemv::bf16* row) {
    mma_gemv::bf16* out = row + u * mma_gemv::kUnitCols;
    visit(l, r, t, [&](int col, const float (&v)[4]) { mma_gemv::store_bf16x4(out + col, v); });
  }

  template <int NT, typename X>
  __device__ static void product(const X& x, const Load& l, int64_t u, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint4 xv[NT][2];  // x row nt * 8 + g: columns 8t..8t+7 of the half's first block, then of its second
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int64_t col = u * mma_gemv::kUnitCols + 64 * h + 8 * t;
        xv[nt][0] = x.load8(nt * 8 + g, col);
        xv[nt][1] = x.load8(nt * 8 + g, col + 32);
      }
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float part[NT][4] = {};
#pragma unroll
        for (int s = 2 * c; s < 2 * c + 2; ++s) {
          const uint32_t lo = mma_gemv::word(l.lo[h], s), hi = mma_gemv::word(l.hi[h], s);
          const uint32_t a[4] = {s8x2_to_bf16x2_scaled<0>(lo), s8x2_to_bf16x2_scaled<0>(hi),
                                 s8x2_to_bf16x2_scaled<1>(lo), s8x2_to_bf16x2_scaled<1>(hi)};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const uint4& xs = xv[nt][c];
            mma_gemv::mma_bf16(part[nt], a, s % 2 == 0 ? uint2{xs.x, xs.y} : uint2{xs.z, xs.w});
          }
        }
        const float s_lo = l.scale_lo[2 * h + c], s_hi = l.scale_hi[2 * h + c];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          acc[nt][0] += part[nt][0] * s_lo;
          acc[nt][1] += part[nt][1] * s_lo;
          acc[nt][2] += part[nt][2] * s_hi;
          acc[nt][3] += part[nt][3] * s_hi;
        }
      }
    }
  }
};

__global__ void dequantize_kernel(const uint8_t* src, int64_t rows, int64_t k, __nv_bfloat16* dst) {
  const int64_t total = rows * k, rb = q8_row_bytes(k);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / k, c = i % k;
    const __half d = *reinterpret_cast<const __half*>(src + r * rb + k + 2 * (c / kQk));
    dst[i] = __float2bfloat16(static_cast<float>(static_cast<int8_t>(src[r * rb + c])) * __half2float(d));
  }
}

}  // namespace

bool q8_0_mma_gemv_supported(const QuantGemvArgs& args) {
  return args.m >= 1 && args.m <= kQ8_0MmaGemvMaxRows && args.k > 0 && args.k % mma_gemv::kUnitCols == 0 &&
         !args.gated_input && mma_gemv::aligned(args.x, 16) && mma_gemv::aligned(args.weight, 8) &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void q8_0_mma_gemv(const QuantGemvArgs& args, cudaStream_t stream) {
  if (args.n == 0) return;
  STRATA_CHECK(q8_0_mma_gemv_supported(args));
  const Params params = mma_gemv::params_for(args);
  const int warps = mma_gemv::auto_warps(args.m, params.units);
  mma_gemv::launch_for<Q8Format>(args.out_dtype, params, 1, {.warps = warps}, stream);
}

bool q8_0_mma_gemv_experts_supported(const QuantExpertArgs& args) {
  return args.k > 0 && args.k % mma_gemv::kUnitCols == 0 && mma_gemv::aligned(args.x, 16) &&
         mma_gemv::aligned(args.weights, 8) && args.pairs_per_x >= 1 && args.num_pairs <= 65535 &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void q8_0_mma_gemv_experts(const QuantExpertArgs& args, cudaStream_t stream) {
  if (args.num_pairs == 0 || args.n == 0) return;
  STRATA_CHECK(q8_0_mma_gemv_experts_supported(args));
  const Params params = mma_gemv::params_for(args);
  mma_gemv::launch_for<Q8Format>(args.out_dtype, params, static_cast<unsigned>(args.num_pairs), {.warps = 8}, stream);
}

void dequantize_q8_0_to_bf16(const void* src, int64_t rows, int64_t k, void* dst) {
  STRATA_CHECK(k % kQk == 0);
  if (rows * k == 0) return;
  if (k % mma_gemv::kUnitCols == 0) {
    const Params p{.x = nullptr, .weight = static_cast<const uint8_t*>(src), .bias = nullptr, .out = nullptr,
                   .n = rows, .k = k, .units = k / mma_gemv::kUnitCols, .rows = 0, .accumulate = false};
    return mma_gemv::widen<Q8Format>(p, static_cast<mma_gemv::bf16*>(dst), current_stream());
  }
  dequantize_kernel<<<grid_for(rows * k, 256), 256, 0, current_stream()>>>(static_cast<const uint8_t*>(src), rows, k,
                                                                         static_cast<__nv_bfloat16*>(dst));
  STRATA_CUDA_CHECK_LAUNCH();
}

void q8_0_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream) {
  quant_gemm::launch<Q8Format, quant_gemm::kTileK / mma_gemv::kUnitCols>(launch, stream);
}

}  // namespace strata::cuda
