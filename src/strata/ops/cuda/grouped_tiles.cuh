// The staging of the tensor-core grouped kernels (mma.sync and wgmma): a block's x rows and
// weight rows of one 64-wide K slice land in shared memory as [rows, 64] bf16 tiles of
// 128-byte rows, 16-byte chunks XOR-swizzled by row (chunk ^ row % 8). That is the layout
// ldmatrix reads without bank conflicts and, 1024-byte aligned, wgmma's 128-byte swizzle.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/expert_tiles.cuh"
#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

constexpr int kGroupedBlockN = 128;  // weight rows (output columns) of a block
constexpr int kGroupedBlockK = 64;   // one 128-byte shared row per tile row: 8 chunks of 16 bytes

struct GroupedBlockTile {
  const __nv_bfloat16* x;  // row 0 of the tile, [rows, K]
  const __nv_bfloat16* w;  // weight row n0 of the expert, [N - n0, K]
  int64_t rows, n_left, k;  // valid x rows (<= BM), valid weight rows, K
};

// Element offset of (row, chunk) in a [rows, 64] tile.
__device__ __forceinline__ int grouped_swizzled(int row, int chunk) {
  return row * kGroupedBlockK + ((chunk ^ (row & 7)) << 3);
}

// Issues the cp.asyncs of K slice `slice` into one stage ([BM, 64] x then [128, 64] weight
// rows); rows past the valid ones are zero-filled. All kThreads threads call it.
template <int BM, int kThreads>
__device__ void grouped_load_stage(__nv_bfloat16* stage, const GroupedBlockTile& t, int64_t slice) {
  __nv_bfloat16* a = stage;
  __nv_bfloat16* b = stage + BM * kGroupedBlockK;
  const int64_t k0 = slice * kGroupedBlockK;
#pragma unroll
  for (int j = 0; j < BM * 8 / kThreads; ++j) {
    const int i = threadIdx.x + j * kThreads, row = i / 8, chunk = i % 8;
    const bool valid = row < t.rows;
    cp_async_16(a + grouped_swizzled(row, chunk), valid ? t.x + row * t.k + k0 + chunk * 8 : t.x, valid);
  }
#pragma unroll
  for (int j = 0; j < kGroupedBlockN * 8 / kThreads; ++j) {
    const int i = threadIdx.x + j * kThreads, row = i / 8, chunk = i % 8;
    const bool valid = row < t.n_left;
    cp_async_16(b + grouped_swizzled(row, chunk), valid ? t.w + row * t.k + k0 + chunk * 8 : t.w, valid);
  }
}

// One 64-wide K slice of a warp's 16 kFragsM x 32 tile: x rows a_row0.. of the [rows, 64] tile at
// a against weight rows b_row0.. of the [128, 64] tile at b, 4 steps of k16, fragments by
// ldmatrix. acc[fm][fn]: x rows a_row0 + 16 fm + g (+ 8), weight rows b_row0 + 8 fn + 2q (+ 1).
template <int kFragsM>
__device__ __forceinline__ void grouped_mma_tile(const __nv_bfloat16* a, const __nv_bfloat16* b, int a_row0,
                                                 int b_row0, float (&acc)[kFragsM][4][4]) {
  const int lane = threadIdx.x % 32, mat = lane / 8, mat_row = lane % 8;
#pragma unroll
  for (int kk = 0; kk < kGroupedBlockK / 16; ++kk) {
    uint32_t af[kFragsM][4], bfr[2][4];
#pragma unroll
    for (int fm = 0; fm < kFragsM; ++fm) {
      // Matrices: (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
      const int row = a_row0 + fm * 16 + mat_row + (mat & 1) * 8;
      ldmatrix_x4(af[fm], a + grouped_swizzled(row, kk * 2 + (mat >> 1)));
    }
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
      const int row = b_row0 + pair * 16 + mat_row + (mat >> 1) * 8;
      ldmatrix_x4(bfr[pair], b + grouped_swizzled(row, kk * 2 + (mat & 1)));
    }
#pragma unroll
    for (int fm = 0; fm < kFragsM; ++fm)
#pragma unroll
      for (int fn = 0; fn < 4; ++fn)
        mma_bf16_16816(acc[fm][fn], af[fm][0], af[fm][1], af[fm][2], af[fm][3], bfr[fn / 2][(fn % 2) * 2],
                       bfr[fn / 2][(fn % 2) * 2 + 1]);
  }
}

// The same for a stage of [BM, 64] x rows and the [128, 64] weight rows after them, 8 warps as
// 2 x 4 over BM x rows and 128 weight rows: the warp's tile is (BM/2) x 32.
template <int BM>
__device__ __forceinline__ void grouped_mma_slice(const __nv_bfloat16* stage, int warp_m, int warp_n,
                                                  float (&acc)[BM / 32][4][4]) {
  grouped_mma_tile<BM / 32>(stage, stage + BM * kGroupedBlockK, warp_m * (BM / 2), warp_n * 32, acc);
}

template <typename Tout>
__device__ __forceinline__ void grouped_store_pair(Tout* out, float a, float b);
template <>
__device__ __forceinline__ void grouped_store_pair<float>(float* out, float a, float b) {
  *reinterpret_cast<float2*>(out) = make_float2(a, b);
}
template <>
__device__ __forceinline__ void grouped_store_pair<__nv_bfloat16>(__nv_bfloat16* out, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(a, b);
}

struct GroupedTileLaunch {
  int tile_rows, threads, smem_bytes;
};

// Launches a grouped tile kernel over (row tile, N block), N block fastest: the grid sized by
// the tile bound (blocks past the real tiles exit), the kernel's shared memory set up once.
template <auto Kernel>
void launch_grouped_tiles(const GroupedTileLaunch& shape, const GroupedGemmArgs& args, cudaStream_t stream) {
  static const bool configured = [&] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shape.smem_bytes));
    return true;
  }();
  (void)configured;
  const int64_t n_blocks = ceil_div(args.n, kGroupedBlockN);
  const int64_t blocks = n_blocks * expert_tile_bound(args.m, args.num_experts, shape.tile_rows);
  STRATA_CHECK(blocks < (int64_t{1} << 31));
  Kernel<<<static_cast<unsigned>(blocks), shape.threads, shape.smem_bytes, stream>>>(args, n_blocks);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
