// What the tensor-core GEMVs over GGUF's nibble-coded types share (k_quant_mma_gemv.cu: Q4_K,
// Q5_K, Q6_K; legacy_quant_mma_gemv.cu: Q4_0, Q4_1, Q5_0, Q5_1). Each mma step is 16 values of
// one scale's block: lane (g, t) holds values 4t..4t+3 of rows g and g + 8 (one 16-byte load per
// 128 columns in the device layout) and the same x columns. Codes widen to bf16 as 128 + q, one
// byte permute a pair; a second mma against ones sums x over the step, which takes the 128 off
// and applies the block's offset, so the scales multiply exact f32 partial sums.
#pragma once

#include "strata/ops/cuda/mma_gemv.cuh"
#include "strata/ops/cuda/quant_mma_gemm_staged.cuh"

namespace strata::cuda::nibble_mma {

// Codes 0-1 (kPair 0) or 2-3 of four byte codes below 128 as bf16x2 of 128 + code: 0x43XX.
template <int kPair>
__device__ __forceinline__ uint32_t codes_plus_128(uint32_t codes) {
  return __byte_perm(codes, 0x43434343u, kPair == 0 ? 0x4140 : 0x4342);
}

// Lane t's codes of 256-value unit b of rows `row` and row + 8 (rows at or past p.n read as
// zeros): [row][half] 16 bytes of nibbles (word w = steps 2w low, 2w + 1 high) and, with kFive,
// 4 bytes of fifth bits (bit 8 i + step for value i of a step) from k / 2 on.
template <bool kFive, typename Mem = mma_gemv::GlobalWeights>
__device__ __forceinline__ void load_codes(const mma_gemv::Params& p, int64_t row, int64_t row_bytes, int64_t b, int t,
                                           uint4 (&codes)[2][2], uint32_t (&fifth)[2][2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const bool valid = row + 8 * r < p.n;
    const uint8_t* base = p.weight + (row + 8 * r) * row_bytes;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      codes[r][h] = valid ? Mem::template load<uint4>(base + 128 * b + 64 * h + 16 * t) : uint4{};
      if constexpr (kFive)
        fifth[r][h] = valid ? Mem::template load<unsigned>(base + p.k / 2 + 32 * b + 16 * h + 4 * t) : 0u;
    }
  }
}

// The four codes (bytes) of a step, row r of the half.
template <bool kFive>
__device__ __forceinline__ uint32_t step_codes(const uint4 (&codes)[2][2], const uint32_t (&fifth)[2][2], int r,
                                               int half, int step) {
  uint32_t c = (mma_gemv::word(codes[r][half], step / 2) >> (4 * (step % 2))) & 0x0f0f0f0fu;
  if constexpr (kFive) c |= ((fifth[r][half] >> step) & 0x01010101u) << 4;
  return c;
}

// One step's A fragment from four codes of row g (lo) and of row g + 8 (hi).
__device__ __forceinline__ void step_fragment(uint32_t lo, uint32_t hi, uint32_t (&a)[4]) {
  a[0] = codes_plus_128<0>(lo), a[1] = codes_plus_128<0>(hi);
  a[2] = codes_plus_128<1>(lo), a[3] = codes_plus_128<1>(hi);
}

// part += A x, sum += the x sums for the step at column `col` of the unit, every x tile.
template <int NT, typename X>
__device__ __forceinline__ void step_products(const X& x, const uint32_t (&a)[4], int64_t col, int g,
                                              float (&part)[NT][4], float (&sum)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const uint2 xv = x.load4(nt * 8 + g, col);
    mma_gemv::mma_bf16(part[nt], a, xv);
    x.step_sum(sum[nt], xv, nt * 8, col);
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

// The skeleton's unit here is 256 columns (both 128-value halves of the device layout, a k-quant
// super-block): twice the bytes in flight a warp of the 128-column unit, which the GEMV needs at
// 4.5-6.6 bits a value to keep HBM busy.
constexpr int64_t kSuperCols = 2 * mma_gemv::kUnitCols;

// part and sum over the 32 values of half `half`'s block s of unit b (steps 2s, 2s + 1), rows g
// and g + 8; Format::codes(load, r, half, step) gives a step's four codes.
template <typename Format, int NT, typename X>
__device__ __forceinline__ void block_products(const X& x, const typename Format::Load& l, int64_t b,
                                               int half, int s, int g, int t, float (&part)[NT][4],
                                               float (&sum)[NT][4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint32_t a[4];
    step_fragment(Format::codes(l, 0, half, 2 * s + h), Format::codes(l, 1, half, 2 * s + h), a);
    step_products<NT>(x, a, b * kSuperCols + 128 * half + 16 * (2 * s + h) + 4 * t, g, part, sum);
  }
}

// Lane t's values of a loaded super-block, row g (r 0) or g + 8 (r 1): f(col, v) for each four
// values (Format::values) at column col of the super-block.
template <typename Format, typename F>
__device__ __forceinline__ void visit_super_block(const typename Format::Load& l, int r, int t, F&& f) {
#pragma unroll
  for (int half = 0; half < 2; ++half)
#pragma unroll
    for (int step = 0; step < 8; ++step) {
      float v[4];
      Format::values(l, r, half, step, v);
      f(128 * half + 16 * step + 4 * t, v);
    }
}

// Lane t's values of super-block b of a row, four bf16 a step in one store.
template <typename Format>
__device__ void widen_super_block(const typename Format::Load& l, int r, int64_t b, int t, mma_gemv::bf16* row) {
  mma_gemv::bf16* out = row + b * kSuperCols;
  visit_super_block<Format>(l, r, t, [&](int col, const float (&v)[4]) { mma_gemv::store_bf16x4(out + col, v); });
}


// Each family's formats launched (pairs: 1, or the pairs of an expert launch) and widened.
void launch_k_quant(DType dtype, DType out, const mma_gemv::Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                    cudaStream_t stream);
void launch_legacy(DType dtype, DType out, const mma_gemv::Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                   cudaStream_t stream);
void widen_k_quant(DType dtype, const mma_gemv::Params& params, mma_gemv::bf16* out, cudaStream_t stream);
void widen_legacy(DType dtype, const mma_gemv::Params& params, mma_gemv::bf16* out, cudaStream_t stream);
// The GEMM past the GEMVs' rows (quant_mma_gemm.cuh) over each family's formats.
void gemm_k_quant(DType dtype, const quant_gemm::Launch& launch, cudaStream_t stream);
void gemm_legacy(DType dtype, const quant_gemm::Launch& launch, cudaStream_t stream);

}  // namespace strata::cuda::nibble_mma
