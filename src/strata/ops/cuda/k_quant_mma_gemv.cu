// GGUF Q4_K, Q5_K and Q6_K on the tensor-core GEMV skeleton (mma_gemv.cuh). Each mma step is 16
// values of one sub-block: lane (g, t) holds values 4t..4t+3 of rows g and g + 8 (the device
// layout puts them in one 16-byte load per 128 columns) and the same x columns. Codes widen to bf16 as
// 128 + q, one byte permute a pair; a second mma against ones sums x over the step, which takes
// the 128 off and applies Q4_K's mins, so the scales multiply exact f32 partial sums.
#include "strata/ops/cuda/k_quant_mma_gemv.h"

#include "strata/ops/cuda/mma_gemv.cuh"
#include "strata/weights/device_layout.h"
#include "strata/weights/quant_blocks.h"

namespace strata::cuda {
namespace {

using mma_gemv::Params;
constexpr uint32_t kOnes = 0x3f803f80u;  // bf16x2 {1, 1}

// Codes 0-1 (kPair 0) or 2-3 of four byte codes below 128 as bf16x2 of 128 + code: 0x43XX.
template <int kPair>
__device__ __forceinline__ uint32_t codes_plus_128(uint32_t codes) {
  return __byte_perm(codes, 0x43434343u, kPair == 0 ? 0x4140 : 0x4342);
}

// Byte i of `word` as a float plus 2^23 (0x4b0000XX): a byte permute, where I2F runs at a
// quarter of the FMA rate and the scale decode has 16 of them a lane per super-block.
__device__ __forceinline__ float byte_plus_2p23(uint32_t word, int i) {
  return __int_as_float(static_cast<int>(__byte_perm(word, 0x4b000000u, 0x7650u | static_cast<unsigned>(i))));
}
constexpr float k2p23 = 8388608.f;

// One step's A fragment from four codes of row g (lo) and of row g + 8 (hi).
__device__ __forceinline__ void step_fragment(uint32_t lo, uint32_t hi, uint32_t (&a)[4]) {
  a[0] = codes_plus_128<0>(lo), a[1] = codes_plus_128<0>(hi);
  a[2] = codes_plus_128<1>(lo), a[3] = codes_plus_128<1>(hi);
}

// part += A x, sum += ones x for the step at column `col` of the unit, every x tile.
template <int NT>
__device__ __forceinline__ void step_products(const Params& p, const uint32_t (&a)[4], int64_t col, int g,
                                              float (&part)[NT][4], float (&sum)[NT][4]) {
  const uint32_t ones[4] = {kOnes, kOnes, kOnes, kOnes};
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const uint2 x = mma_gemv::load_x4(p, nt * 8 + g, col);
    mma_gemv::mma_bf16(part[nt], a, x);
    mma_gemv::mma_bf16(sum[nt], ones, x);
  }
}

// acc += part * scale - sum * bias, rows g (scale[0]) and g + 8 (scale[1]); sum is the same
// in every row of a tile.
template <int NT>
__device__ __forceinline__ void scale_into(const float (&part)[NT][4], const float (&sum)[NT][4],
                                           const float (&scale)[2], const float (&bias)[2], float (&acc)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    acc[nt][0] += part[nt][0] * scale[0] - sum[nt][0] * bias[0];
    acc[nt][1] += part[nt][1] * scale[0] - sum[nt][1] * bias[0];
    acc[nt][2] += part[nt][2] * scale[1] - sum[nt][0] * bias[1];
    acc[nt][3] += part[nt][3] * scale[1] - sum[nt][1] * bias[1];
  }
}

__host__ __device__ int64_t q4k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ4_K)); }
__host__ __device__ int64_t q5k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ5_K)); }
__host__ __device__ int64_t q6k_row_bytes(int64_t k) { return k / kQkK * static_cast<int64_t>(sizeof(BlockQ6_K)); }

// The skeleton's unit for k-quants is a whole super-block (256 columns, both 128-value halves
// of the device layout): twice the bytes in flight a warp of the 128-column unit, which the
// GEMV needs at 4.5-6.6 bits a value to keep HBM busy.
constexpr int64_t kSuperCols = 2 * mma_gemv::kUnitCols;

// Lane t's values of super-block b of a row (Format::values), four bf16 a step in one store.
template <typename Format>
__device__ void widen_super_block(const typename Format::Load& l, int r, int64_t b, int t, mma_gemv::bf16* row) {
  mma_gemv::bf16* out = row + b * kSuperCols + 4 * t;
#pragma unroll
  for (int half = 0; half < 2; ++half)
#pragma unroll
    for (int step = 0; step < 8; ++step) {
      float v[4];
      Format::values(l, r, half, step, v);
      mma_gemv::store_bf16x4(out + 128 * half + 16 * step, v);
    }
}

// Q4_K (kFive false) and Q5_K: value = d sc q - dmin m per 32-value sub-block, q four bits, or
// five with Q5_K's fifth bits (lane t's 4 bytes a unit: bit 8 i + step for its value i).
template <bool kFive>
struct Q4kFormat {
  struct Load {
    uint4 codes[2][2];     // [row g, g + 8][half]: word w = steps 2w (low nibbles) and 2w + 1 (high)
    uint32_t fifth[2][2];  // Q5_K's fifth bits, [row][half]
    uint4 header[2];       // the super-block's d, dmin and packed 6-bit scales and mins
  };

  __host__ __device__ static int64_t row_bytes(int64_t k) { return kFive ? q5k_row_bytes(k) : q4k_row_bytes(k); }

  template <bool kWide>
  __device__ static void load(const Params& p, int64_t row, int64_t b, int t, Load& l) {
    const int64_t headers = p.k / 2 + (kFive ? p.k / 8 : 0);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const bool valid = row + 8 * r < p.n;
      const uint8_t* base = p.weight + (row + 8 * r) * row_bytes(p.k);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l.codes[r][h] = valid ? __ldcs(reinterpret_cast<const uint4*>(base + 128 * b + 64 * h + 16 * t)) : uint4{};
        if constexpr (kFive)
          l.fifth[r][h] = valid ? __ldcs(reinterpret_cast<const unsigned*>(base + p.k / 2 + 32 * b + 16 * h + 4 * t)) : 0u;
      }
      l.header[r] = valid ? __ldcs(reinterpret_cast<const uint4*>(base + headers + 16 * b)) : uint4{};
    }
  }

  // Four codes of a step (bytes), row r of the half.
  __device__ static uint32_t codes(const Load& l, int r, int half, int step) {
    uint32_t c = (mma_gemv::word(l.codes[r][half], step / 2) >> (4 * (step % 2))) & 0x0f0f0f0fu;
    if constexpr (kFive) c |= ((l.fifth[r][half] >> step) & 0x01010101u) << 4;
    return c;
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

  template <int NT>
  __device__ static void product(const Params& p, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float scale[2][4], bias[2][4];
      decode(l.header[0], half == 1, scale[0], bias[0]);
      decode(l.header[1], half == 1, scale[1], bias[1]);
#pragma unroll
      for (int s = 0; s < 4; ++s) {  // sub-block s of the half: steps 2s and 2s + 1
        float part[NT][4] = {}, sum[NT][4] = {};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t a[4];
          step_fragment(codes(l, 0, half, 2 * s + h), codes(l, 1, half, 2 * s + h), a);
          step_products<NT>(p, a, b * kSuperCols + 128 * half + 16 * (2 * s + h) + 4 * t, g, part, sum);
        }
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
    const int shift = 8 * (step / 2);
    const float d1 = __low2float(dd) * static_cast<float>((sc >> shift) & 0xff);
    const float m1 = __high2float(dd) * static_cast<float>((m >> shift) & 0xff);
    const uint32_t c = codes(l, r, half, step);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = d1 * static_cast<float>((c >> (8 * i)) & 0xff) - m1;
  }
};

// Q6_K: value = d sc (q - 32) per 16-value sub-block, q six bits.
struct Q6kFormat {
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

  template <int NT>
  __device__ static void product(const Params& p, const Load& l, int64_t b, int g, int t, float (&acc)[NT][4]) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
#pragma unroll
      for (int step = 0; step < 8; ++step) {
        uint32_t a[4];
        step_fragment(codes(l, 0, half, step), codes(l, 1, half, step), a);
        float part[NT][4] = {}, sum[NT][4] = {};
        step_products<NT>(p, a, b * kSuperCols + 128 * half + 16 * step + 4 * t, g, part, sum);
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
    for (int i = 0; i < 4; ++i) v[i] = d1 * static_cast<float>(static_cast<int>((c >> (8 * i)) & 0xff) - 32);
  }
};

void launch_format(DType dtype, DType out, const Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                   cudaStream_t stream) {
  if (dtype == DType::kQ4_K) return mma_gemv::launch_for<Q4kFormat<false>>(out, params, pairs, shape, stream);
  if (dtype == DType::kQ5_K) return mma_gemv::launch_for<Q4kFormat<true>>(out, params, pairs, shape, stream);
  mma_gemv::launch_for<Q6kFormat>(out, params, pairs, shape, stream);
}

bool is_k_quant(DType dtype) { return dtype == DType::kQ4_K || dtype == DType::kQ5_K || dtype == DType::kQ6_K; }

}  // namespace

bool k_quant_mma_gemv_supported(DType dtype, const QuantGemvArgs& args) {
  return is_k_quant(dtype) && keeps_device_layout(dtype, args.k) && args.m >= 1 &&
         args.m <= kKQuantMmaGemvMaxRows && !args.gated_input && mma_gemv::aligned(args.x, 8) &&
         mma_gemv::aligned(args.weight, 16) && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

static mma_gemv::LaunchShape variant_shape(KQuantMmaGemvVariant variant, DType dtype, const Params& params) {
  switch (variant) {
    case KQuantMmaGemvVariant::kWarps8: return {.warps = 8};
    case KQuantMmaGemvVariant::kWarps4: return {.warps = 4};
    case KQuantMmaGemvVariant::kWarps2: return {.warps = 2};
    case KQuantMmaGemvVariant::kWarps8TwoBlocks: return {.warps = 8, .two_blocks = true};
    case KQuantMmaGemvVariant::kPersistent: return {.warps = 8, .two_blocks = true, .persistent = true};
    case KQuantMmaGemvVariant::kAuto: break;
  }
  // Q6_K's unit takes more registers than two blocks allow: at a vocabulary's rows 4 warps beat
  // the two-block launch (lm_head 202 against 245 us, H100); elsewhere within 5% of it.
  if (dtype == DType::kQ6_K && params.n >= 32768) return {.warps = 4};
  // 1-8 rows are latency-bound at one block of 137 registers a SM (ncu: 12% occupancy, issue
  // slots 20-30% busy): two blocks, persistent, keep loads in flight between tiles.
  if (params.rows <= 8) return {.warps = 8, .two_blocks = true, .persistent = true};
  return {.warps = mma_gemv::auto_warps(params.rows, params.units)};
}

void k_quant_mma_gemv(DType dtype, const QuantGemvArgs& args, cudaStream_t stream, KQuantMmaGemvVariant variant) {
  if (args.n == 0) return;
  STRATA_CHECK(k_quant_mma_gemv_supported(dtype, args));
  Params params = mma_gemv::params_for(args);
  params.units = args.k / kSuperCols;
  launch_format(dtype, args.out_dtype, params, 1, variant_shape(variant, dtype, params), stream);
}

// H100 lab (gpu_moe_bench --k-quant, Qwen3-30B-A3B): short rows (down, K = 768: 3 units) run
// best as 2-warp blocks (Q4_K 8 tokens 66.8 against 174.7 us at 8 warps); longer ones (gate_up)
// as the persistent two-block grid (79.4 against 124.8 us).
static mma_gemv::LaunchShape expert_shape(const Params& params) {
  if (params.units <= 4) return {.warps = 2};
  return {.warps = 8, .two_blocks = true, .persistent = true};
}

bool k_quant_mma_gemv_experts_supported(DType dtype, const QuantExpertArgs& args) {
  return is_k_quant(dtype) && keeps_device_layout(dtype, args.k) && mma_gemv::aligned(args.x, 8) && mma_gemv::aligned(args.weights, 16) && args.pairs_per_x >= 1 &&
         args.num_pairs <= 65535 && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void k_quant_mma_gemv_experts(DType dtype, const QuantExpertArgs& args, cudaStream_t stream,
                              KQuantMmaGemvVariant variant) {
  if (args.num_pairs == 0 || args.n == 0) return;
  STRATA_CHECK(k_quant_mma_gemv_experts_supported(dtype, args));
  Params params = mma_gemv::params_for(args);
  params.units = args.k / kSuperCols;
  const mma_gemv::LaunchShape shape =
      variant == KQuantMmaGemvVariant::kAuto ? expert_shape(params) : variant_shape(variant, dtype, params);
  launch_format(dtype, args.out_dtype, params, static_cast<unsigned>(args.num_pairs), shape, stream);
}

void dequantize_k_quant_to_bf16(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  STRATA_CHECK(k % kSuperCols == 0 && is_k_quant(dtype));
  const Params p{.x = nullptr, .weight = static_cast<const uint8_t*>(src), .bias = nullptr, .out = nullptr,
                 .n = rows, .k = k, .units = k / kSuperCols, .rows = 0, .accumulate = false};
  auto* out = static_cast<mma_gemv::bf16*>(dst);
  if (dtype == DType::kQ4_K) return mma_gemv::widen<Q4kFormat<false>>(p, out, current_stream());
  if (dtype == DType::kQ5_K) return mma_gemv::widen<Q4kFormat<true>>(p, out, current_stream());
  mma_gemv::widen<Q6kFormat>(p, out, current_stream());
}

}  // namespace strata::cuda
