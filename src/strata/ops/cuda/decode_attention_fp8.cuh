// Decode attention over an e4m3 KV cache (--kv-cache-dtype fp8): tiles stay e4m3 codes in
// shared memory and each lane widens the bytes its mma fragments need in registers. Head dims
// are permuted so that every fragment reads whole words: the query and key fragments of slice
// kd take dims 16 kd + 4 q .. + 3, and O column c of dim block nd is dim c * D / 8 + nd.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "strata/ops/cuda/attention_tile.cuh"

namespace strata::cuda {

// K and V tiles of 16 keys as codes, rows padded by 16 bytes so a warp's fragment reads hit
// distinct banks. Stages are half a bf16 tile's size, so more of them stay in flight.
template <int D>
struct Fp8Ring {
  static constexpr int kRow = D + 16;
  static constexpr int kStages = D <= 64 ? 8 : D <= 128 ? 6 : 3;
  static constexpr int kSlotBytes = 16 * kRow;  // one K or V tile
  static constexpr int kBytes = 2 * kStages * kSlotBytes;
};

// Bytes 1 and 3 of `v` hold e4m3 codes (bytes 0 and 2 are ignored). Moved into bf16's
// exponent and mantissa they read as 2^-120 times their value; the product with 2^120 is exact
// for normals and subnormals alike.
__device__ __forceinline__ uint32_t e4m3_odd_bytes_to_bf16x2(uint32_t v) {
  const uint32_t bits = (v & 0x80008000u) | ((v >> 4) & 0x07f007f0u);
  const __nv_bfloat162 scaled = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&bits),
                                        __floats2bfloat162_rn(0x1p120f, 0x1p120f));
  return *reinterpret_cast<const uint32_t*>(&scaled);
}

// (byte lo_byte of lo, byte hi_byte of hi) as bf16 x 2, the first in the low half.
__device__ __forceinline__ uint32_t e4m3_pair(uint32_t lo, uint32_t hi, int lo_byte, int hi_byte) {
  return e4m3_odd_bytes_to_bf16x2(__byte_perm(lo, hi, static_cast<unsigned>(((4 + hi_byte) << 12) | (lo_byte << 4))));
}

// Scores of the lane's rows against keys 8 nt + g of a code tile (key fragments widened here).
template <int D>
__device__ __forceinline__ void fp8_scores(const uint32_t (&qa)[D / 16][4], const uint8_t* ks, float (&s)[2][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
#pragma unroll
  for (int nt = 0; nt < 2; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      const uint32_t w = *reinterpret_cast<const uint32_t*>(ks + (nt * 8 + g) * Fp8Ring<D>::kRow + kd * 16 + 4 * qd);
      mma_bf16_16816(s[nt], qa[kd][0], qa[kd][1], qa[kd][2], qa[kd][3], e4m3_pair(w, w, 0, 1), e4m3_pair(w, w, 2, 3));
    }
  }
}

// O += P V for a code tile: the lane's B fragments are keys 2 q, 2 q + 1 (+ 8) at dim
// g * D / 8 + nd, read as D / 8 contiguous bytes of each of its four key rows.
template <int D>
__device__ __forceinline__ void fp8_pv(const uint32_t (&pa)[4], const uint8_t* vs, float (&o)[D / 8][4]) {
  constexpr int kWords = D / 32;  // D / 8 bytes of a row
  const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
  uint32_t v[4][kWords];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const uint8_t* row = vs + (2 * qd + (r & 1) + (r >= 2 ? 8 : 0)) * Fp8Ring<D>::kRow + g * (D / 8);
    if constexpr (kWords % 4 == 0) {
#pragma unroll
      for (int w = 0; w < kWords; w += 4) {
        const uint4 x = reinterpret_cast<const uint4*>(row)[w / 4];
        v[r][w] = x.x, v[r][w + 1] = x.y, v[r][w + 2] = x.z, v[r][w + 3] = x.w;
      }
    } else {
      static_assert(kWords == 2);
      const uint2 x = *reinterpret_cast<const uint2*>(row);
      v[r][0] = x.x, v[r][1] = x.y;
    }
  }
#pragma unroll
  for (int nd = 0; nd < D / 8; ++nd) {
    const int w = nd / 4, b = nd % 4;
    mma_bf16_16816(o[nd], pa[0], pa[1], pa[2], pa[3], e4m3_pair(v[0][w], v[1][w], b, b),
                   e4m3_pair(v[2][w], v[3][w], b, b));
  }
}

}  // namespace strata::cuda
