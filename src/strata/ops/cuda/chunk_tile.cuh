// Shared-memory tile product of the chunked scans (gated delta rule, Mamba-2 SSD): a block of
// kScanThreads threads works on a [kScanChunk, kTileCols] tile, thread (row group g, column c)
// owning rows g, g + kRowGroups, ... of column c, so a warp shares its rows (broadcast loads).
#pragma once

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

constexpr int kScanChunk = 64;
constexpr int kScanThreads = 256;
constexpr int kTileCols = 32;
constexpr int kRowGroups = kScanThreads / kTileCols;
constexpr int kRowsPerThread = kScanChunk / kRowGroups;

// Tokens of the chunk starting at t0 (kScanChunk, or fewer for the last one).
__device__ __forceinline__ int scan_chunk_len(int64_t tokens, int64_t t0) {
  return tokens - t0 < kScanChunk ? static_cast<int>(tokens - t0) : kScanChunk;
}

// acc[r] += Σ_{j<N} m[(row0 + kRowGroups r) * ld + j] * x[j * kTileCols + col]; m's rows are
// float4-aligned (ld % 4 == 0, m 16-byte aligned) and N % 4 == 0.
template <int N>
__device__ __forceinline__ void rows_times_column(const float* m, int ld, const float* x, int row0,
                                                  int col, float (&acc)[kRowsPerThread]) {
  static_assert(N % 4 == 0, "rows are read as float4");
  for (int j = 0; j < N; j += 4) {
    const float x0 = x[j * kTileCols + col], x1 = x[(j + 1) * kTileCols + col];
    const float x2 = x[(j + 2) * kTileCols + col], x3 = x[(j + 3) * kTileCols + col];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const float4 mv = *reinterpret_cast<const float4*>(m + (row0 + kRowGroups * r) * ld + j);
      acc[r] += mv.x * x0 + mv.y * x1 + mv.z * x2 + mv.w * x3;
    }
  }
}

}  // namespace strata::cuda
