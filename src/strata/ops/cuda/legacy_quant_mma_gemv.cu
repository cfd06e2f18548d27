// GGUF Q4_0, Q4_1, Q5_0 and Q5_1 on the tensor-core GEMV skeleton (mma_gemv.cuh), one mma step
// per 16 values of a 32-value block (nibble_mma.cuh). Value = d q + o: o is -8 d (Q4_0), -16 d
// (Q5_0) or the block's minimum m (_1 types), and comes off with the x sums as Q4_K's mins do.
#include "strata/ops/cuda/nibble_mma.cuh"
#include "strata/weights/quant_blocks.h"

namespace strata::cuda::nibble_mma {
namespace {

using mma_gemv::Params;

// Device row (weights/device_layout.cpp): k / 2 low-nibble bytes as the k-quants lay them out
// (64 a 128-value unit), Q5 types' k / 8 fifth-bit bytes (16 a unit), then each block's header:
// d (f16), with the _1 types' m (f16) after it.
template <bool kFive, bool kMin>
struct LegacyFormat {
  static constexpr int64_t kHeaderBytes = kMin ? 4 : 2;
  static constexpr int kHeaderLoads = kMin ? 2 : 1;  // 16 bytes each: a 256-value unit's 8 headers

  static constexpr bool kXSums = true;
  struct Load {
    uint4 codes[2][2];     // [row g, g + 8][half]: word w = steps 2w (low nibbles) and 2w + 1 (high)
    uint32_t fifth[2][2];  // the Q5 types' fifth bits, [row][half]
    uint4 header[2][kHeaderLoads];
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return k / 2 + (kFive ? k / 8 : 0) + k / kQk * kHeaderBytes; }

  template <bool kWide>
  __device__ static void load(const Params& p, int64_t row, int64_t b, int t, Load& l) {
    const int64_t headers = p.k / 2 + (kFive ? p.k / 8 : 0);
    load_codes<kFive>(p, row, row_bytes(p.k), b, t, l.codes, l.fifth);
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int i = 0; i < kHeaderLoads; ++i) {
        const uint8_t* at = p.weight + (row + 8 * r) * row_bytes(p.k) + headers + 8 * kHeaderBytes * b + 16 * i;
        l.header[r][i] = row + 8 * r < p.n ? __ldcs(reinterpret_cast<const uint4*>(at)) : uint4{};
      }
  }

  __device__ static uint32_t codes(const Load& l, int r, int half, int step) {
    return step_codes<kFive>(l.codes, l.fifth, r, half, step);
  }

  // Block j's (0..7 of the unit) scale d and offset o of row r.
  __device__ static void block_scale(const Load& l, int r, int j, float& d, float& o) {
    if constexpr (kMin) {
      const uint32_t bits = mma_gemv::word(l.header[r][j / 4], j % 4);
      const __half2 dm = *reinterpret_cast<const __half2*>(&bits);
      d = __low2float(dm), o = __high2float(dm);
    } else {
      const uint32_t bits = mma_gemv::word(l.header[r][0], j / 2);
      const __half2 dd = *reinterpret_cast<const __half2*>(&bits);
      d = j % 2 == 0 ? __low2float(dd) : __high2float(dd);
      o = -(kFive ? 16.f : 8.f) * d;
    }
  }

  template <int NT, typename X>
  __device__ static void product(const X& x, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
#pragma unroll
      for (int s = 0; s < 4; ++s) {  // block 4 half + s: steps 2s and 2s + 1 of the half
        float part[NT][4] = {}, sum[NT][4] = {};
        block_products<LegacyFormat, NT>(x, l, b, half, s, g, t, part, sum);
        float d[2], o[2];
        block_scale(l, 0, 4 * half + s, d[0], o[0]);
        block_scale(l, 1, 4 * half + s, d[1], o[1]);
        // sum (128 + q) d x - sum x (128 d - o) = sum (d q + o) x
        scale_into<NT>(part, sum, {d[0], d[1]}, {fmaf(128.f, d[0], -o[0]), fmaf(128.f, d[1], -o[1])}, acc);
      }
    }
  }

  __device__ static void widen(const Load& l, int r, int64_t b, int t, mma_gemv::bf16* row) {
    widen_super_block<LegacyFormat>(l, r, b, t, row);
  }

  // Lane t's four values of a step of row g (r 0) or g + 8 (r 1), as ggml computes them.
  __device__ static void values(const Load& l, int r, int half, int step, float (&v)[4]) {
    float d = 0.f, o = 0.f;
    block_scale(l, r, 4 * half + step / 2, d, o);
    const uint32_t c = codes(l, r, half, step);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float q = mma_gemv::byte_value(c, i);
      v[i] = kMin ? q * d + o : (q - (kFive ? 16.f : 8.f)) * d;
    }
  }
};

using Q4_0Format = LegacyFormat<false, false>;
using Q4_1Format = LegacyFormat<false, true>;
using Q5_0Format = LegacyFormat<true, false>;
using Q5_1Format = LegacyFormat<true, true>;

}  // namespace

void launch_legacy(DType dtype, DType out, const Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                   cudaStream_t stream) {
  switch (dtype) {
    case DType::kQ4_0: return mma_gemv::launch_for<Q4_0Format>(out, params, pairs, shape, stream);
    case DType::kQ4_1: return mma_gemv::launch_for<Q4_1Format>(out, params, pairs, shape, stream);
    case DType::kQ5_0: return mma_gemv::launch_for<Q5_0Format>(out, params, pairs, shape, stream);
    default: return mma_gemv::launch_for<Q5_1Format>(out, params, pairs, shape, stream);
  }
}

void widen_legacy(DType dtype, const Params& params, mma_gemv::bf16* out, cudaStream_t stream) {
  switch (dtype) {
    case DType::kQ4_0: return mma_gemv::widen<Q4_0Format>(params, out, stream);
    case DType::kQ4_1: return mma_gemv::widen<Q4_1Format>(params, out, stream);
    case DType::kQ5_0: return mma_gemv::widen<Q5_0Format>(params, out, stream);
    default: return mma_gemv::widen<Q5_1Format>(params, out, stream);
  }
}

void gemm_legacy(DType dtype, const quant_gemm::Launch& launch, cudaStream_t stream) {
  switch (dtype) {
    case DType::kQ4_0: return quant_gemm::launch<Q4_0Format, 1>(launch, stream);
    case DType::kQ4_1: return quant_gemm::launch<Q4_1Format, 1>(launch, stream);
    case DType::kQ5_0: return quant_gemm::launch<Q5_0Format, 1>(launch, stream);
    default: return quant_gemm::launch<Q5_1Format, 1>(launch, stream);
  }
}

}  // namespace strata::cuda::nibble_mma
