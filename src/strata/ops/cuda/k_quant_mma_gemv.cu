// GGUF Q4_K, Q5_K and Q6_K on the tensor-core GEMV skeleton (mma_gemv.cuh), one mma step per 16
// values of a sub-block (nibble_mma.cuh); Q4_K's mins come off with the x sums. Past the GEMV's
// rows the same loads feed the GEMM (quant_mma_gemm.cuh) through values().
#include "strata/ops/cuda/nibble_mma.cuh"
#include "strata/weights/quant_blocks.h"

namespace strata::cuda::nibble_mma {
namespace {

using mma_gemv::Params;

// The scale decode has 16 byte conversions a lane per super-block: permutes, not I2F.
using mma_gemv::byte_plus_2p23;
using mma_gemv::byte_value;
using mma_gemv::k2p23;

__host__ __device__ int64_t q4k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ4_K)); }
__host__ __device__ int64_t q5k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ5_K)); }
__host__ __device__ int64_t q6k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ6_K)); }

// Q4_K (kFive false) and Q5_K: value = d sc q - dmin m per 32-value sub-block, q four bits, or
// five with Q5_K's fifth bits (lane t's 4 bytes a unit: bit 8 i + step for its value i).
template <bool kFive>
struct Q4kFormat {
  static constexpr bool kXSums = true;  // codes widen as 128 + q: the x sums take the offset off
  struct Load {
    uint4 codes[2][2];     // [row g, g + 8][half]: word w = steps 2w (low nibbles) and 2w + 1 (high)
    uint32_t fifth[2][2];  // Q5_K's fifth bits, [row][half]
    uint4 header[2];       // the super-block's d, dmin and packed 6-bit scales and mins
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return kFive ? q5k_row_bytes(k) : q4k_row_bytes(k); }

  // The staged GEMM's tile row (quant_mma_gemm_staged.cuh) is a K = 256 row of the device
  // layout: codes, Q5_K's fifth bits, the header; chunk c's offset in a row of K columns.
  static constexpr int kTileRowBytes = kFive ? 176 : 144;
  __device__ static int64_t tile_chunk_offset(int64_t k, int64_t tile, int c) {
    if (c < 8) return 128 * tile + 16 * c;
    if (kFive && c < 10) return k / 2 + 32 * tile + 16 * (c - 8);
    return k / 2 + (kFive ? k / 8 : 0) + 16 * tile;
  }

  template <bool kWide, typename Mem = mma_gemv::GlobalWeights>
  __device__ static void load(const Params& p, int64_t row, int64_t b, int t, Load& l) {
    const int64_t headers = p.k / 2 + (kFive ? p.k / 8 : 0);
    load_codes<kFive, Mem>(p, row, row_bytes(p.k), b, t, l.codes, l.fifth);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const uint8_t* header = p.weight + (row + 8 * r) * row_bytes(p.k) + headers + 16 * b;
      l.header[r] = row + 8 * r < p.n ? Mem::template load<uint4>(header) : uint4{};
    }
  }

  __device__ static uint32_t codes(const Load& l, int r, int half, int step) {
    return step_codes<kFive>(l.codes, l.fifth, r, half, step);
  }

  // The 6-bit scales and mins of four sub-blocks (the first four, or the last), a byte each.
  __device__ static void scale_bytes(const uint4& h, bool last, uint32_t& sc, uint32_t& m) {
    sc = last ? (h.w & 0x0f0f0f0fu) | ((h.y >> 2) & 0x30303030u) : h.y & 0x3f3f3f3fu;
    m = last ? ((h.w >> 4) & 0x0f0f0f0fu) | ((h.z >> 2) & 0x30303030u) : h.z & 0x3f3f3f3fu;
  }

  // Scales d sc and biases 128 d sc + dmin m of four sub-blocks (the first four, or the last).
  __device__ static void decode(const uint4& h, bool last, float (&scale)[4], float (&bias)[4]) {
    const __half2 dd = *reinterpret_cast<const __half2*>(&h.x);
    const float d = __low2float(dd), dmin = __high2float(dd);
    uint32_t sc = 0, m = 0;
    scale_bytes(h, last, sc, m);
    // d (2^23 + s) - d 2^23 = d s, one rounding of an exact product (s < 64, d an f16).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      scale[i] = fmaf(d, byte_plus_2p23(sc, i), -d * k2p23);
      bias[i] = fmaf(128.f, scale[i], fmaf(dmin, byte_plus_2p23(m, i), -dmin * k2p23));
    }
  }

  template <int NT, typename X>
  __device__ static void product(const X& x, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float scale[2][4], bias[2][4];
      decode(l.header[0], half == 1, scale[0], bias[0]);
      decode(l.header[1], half == 1, scale[1], bias[1]);
#pragma unroll
      for (int s = 0; s < 4; ++s) {  // sub-block s of the half: steps 2s and 2s + 1
        float part[NT][4] = {}, sum[NT][4] = {};
        block_products<Q4kFormat, NT>(x, l, b, half, s, g, t, part, sum);
        scale_into<NT>(part, sum, {scale[0][s], scale[1][s]}, {bias[0][s], bias[1][s]}, acc);
      }
    }
  }

  __device__ static void widen(const Load& l, int r, int64_t b, int t, mma_gemv::bf16* row) {
    widen_super_block<Q4kFormat>(l, r, b, t, row);
  }

  // Lane t's four values of a step of row g (r 0) or g + 8 (r 1), as ggml computes them.
  __device__ static void values(const Load& l, int r, int half, int step, float (&v)[4]) {
    const __half2 dd = *reinterpret_cast<const __half2*>(&l.header[r].x);
    uint32_t sc = 0, m = 0;
    scale_bytes(l.header[r], half == 1, sc, m);
    const float d1 = __low2float(dd) * byte_value(sc, step / 2), m1 = __high2float(dd) * byte_value(m, step / 2);
    const uint32_t c = codes(l, r, half, step);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = d1 * byte_value(c, i) - m1;
  }
};

// Q6_K: value = d sc (q - 32) per 16-value sub-block, q six bits.
struct Q6kFormat {
  static constexpr bool kXSums = true;
  struct Load {
    uint4 low[2][2];   // [row g, g + 8][half]: low nibbles, word w = steps 2w and 2w + 1
    uint2 high[2][2];  // high two bits, word w = steps 4w..4w + 3
    uint4 scales[2];   // the super-block's sixteen int8 sub-block scales
    uint32_t d[2];     // f16 bits
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return q6k_row_bytes(k); }

  template <bool kWide>
  __device__ static void load(const Params& p, int64_t row, int64_t b, int t, Load& l) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const bool valid = row + 8 * r < p.n;
      const uint8_t* base = p.weight + (row + 8 * r) * q6k_row_bytes(p.k);
      const uint8_t* scales = base + p.k * 3 / 4;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint8_t* unit = base + 192 * b + 96 * h;
        l.low[r][h] = valid ? __ldcs(reinterpret_cast<const uint4*>(unit + 16 * t)) : uint4{};
        l.high[r][h] = valid ? __ldcs(reinterpret_cast<const uint2*>(unit + 64 + 8 * t)) : uint2{};
      }
      l.scales[r] = valid ? __ldcs(reinterpret_cast<const uint4*>(scales + 16 * b)) : uint4{};
      l.d[r] = valid ? __ldcs(reinterpret_cast<const unsigned short*>(scales + p.k / 16 + 2 * b)) : 0u;
    }
  }

  __device__ static uint32_t codes(const Load& l, int r, int half, int step) {
    const uint32_t low = (mma_gemv::word(l.low[r][half], step / 2) >> (4 * (step % 2))) & 0x0f0f0f0fu;
    const uint2& high_bits = l.high[r][half];
    const uint32_t high = ((step < 4 ? high_bits.x : high_bits.y) >> (2 * (step % 4))) & 0x03030303u;
    return low | (high << 4);
  }

  // d times the int8 scale of sub-block j (0..15) of row r (flipped by 128 to an unsigned byte).
  __device__ static float scale(const Load& l, int r, int j) {
    const uint32_t word = mma_gemv::word(l.scales[r], j / 4) ^ 0x80808080u;
    const unsigned short d = static_cast<unsigned short>(l.d[r]);
    return __half2float(*reinterpret_cast<const __half*>(&d)) * (byte_plus_2p23(word, j % 4) - (k2p23 + 128.f));
  }

  template <int NT, typename X>
  __device__ static void product(const X& x, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
#pragma unroll
      for (int step = 0; step < 8; ++step) {
        uint32_t a[4];
        step_fragment(codes(l, 0, half, step), codes(l, 1, half, step), a);
        float part[NT][4] = {}, sum[NT][4] = {};
        step_products<NT>(x, a, b * kSuperCols + 128 * half + 16 * step + 4 * t, g, part, sum);
        const float s_lo = scale(l, 0, 8 * half + step), s_hi = scale(l, 1, 8 * half + step);
        scale_into<NT>(part, sum, {s_lo, s_hi}, {160.f * s_lo, 160.f * s_hi}, acc);
      }
    }
  }

  __device__ static void widen(const Load& l, int r, int64_t b, int t, mma_gemv::bf16* row) {
    widen_super_block<Q6kFormat>(l, r, b, t, row);
  }

  __device__ static void values(const Load& l, int r, int half, int step, float (&v)[4]) {
    const float d1 = scale(l, r, 8 * half + step);
    const uint32_t c = codes(l, r, half, step);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = d1 * (byte_plus_2p23(c, i) - (k2p23 + 32.f));
  }
};

}  // namespace

void launch_k_quant(DType dtype, DType out, const Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                    cudaStream_t stream) {
  if (dtype == DType::kQ4_K) return mma_gemv::launch_for<Q4kFormat<false>>(out, params, pairs, shape, stream);
  if (dtype == DType::kQ5_K) return mma_gemv::launch_for<Q4kFormat<true>>(out, params, pairs, shape, stream);
  mma_gemv::launch_for<Q6kFormat>(out, params, pairs, shape, stream);
}

void widen_k_quant(DType dtype, const Params& params, mma_gemv::bf16* out, cudaStream_t stream) {
  if (dtype == DType::kQ4_K) return mma_gemv::widen<Q4kFormat<false>>(params, out, stream);
  if (dtype == DType::kQ5_K) return mma_gemv::widen<Q4kFormat<true>>(params, out, stream);
  mma_gemv::widen<Q6kFormat>(params, out, stream);
}

void gemm_k_quant(DType dtype, const quant_gemm::Launch& launch, cudaStream_t stream) {
  if (dtype == DType::kQ4_K) return quant_gemm::launch<Q4kFormat<false>, 1>(launch, stream);
  if (dtype == DType::kQ5_K) return quant_gemm::launch<Q4kFormat<true>, 1>(launch, stream);
  quant_gemm::launch<Q6kFormat, 1>(launch, stream);
}

}  // namespace strata::cuda::nibble_mma
