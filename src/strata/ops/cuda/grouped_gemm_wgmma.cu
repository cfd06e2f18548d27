// The grouped tensor-core kernel on Hopper's warpgroup MMA: a block computes a BM x 128 tile
// of one expert's rows with two warpgroups (a 128-row tile: each 64 rows x 128; a 64-row tile:
// each 64 x 64 columns), fed by the same cp.async pipeline of swizzled 64-wide K slices as the
// mma.sync kernel (grouped_tiles.cuh), which wgmma reads straight from shared memory.
#include "strata/ops/cuda/grouped_gemm_wgmma.h"
#include "strata/ops/cuda/grouped_tiles.cuh"
#include "strata/ops/cuda/wgmma.cuh"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;  // two warpgroups

// Stages: three for 128-row tiles, four for 64, so two blocks fit a SM (96 KB each; launch
// bounds hold registers to 128 a thread for the same reason: 136 kept one block a SM). Two
// slices are copied ahead; with four stages the refilled one held slice s - 2, so slice s - 1's
// products may still run (one group in flight); with three they must be done.
template <int BM>
struct WgTiling {
  static constexpr int kStages = BM == 128 ? 3 : 4;
  static constexpr int kAhead = 2;
  static constexpr int kInFlight = kStages - 1 - kAhead;
  static constexpr int kWgN = BM == 128 ? 128 : 64;  // columns of a warpgroup's tile
  static constexpr int kAccRegs = kWgN / 2;          // its 64 x kWgN f32 over 128 threads
  static constexpr int kStageElems = (BM + kGroupedBlockN) * kGroupedBlockK;
  static constexpr int kSmemBytes = kStages * kStageElems * 2 + 1024;  // + slack to align to 1024
};

// One 64-wide K slice: four k16 steps of the warpgroup's tile. a: its 64 x rows, b: its kWgN
// weight rows, both [rows, 64] swizzled.
template <int BM>
__device__ __forceinline__ void wgmma_slice(const bf16* a, const bf16* b, float (&acc)[WgTiling<BM>::kAccRegs]) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kGroupedBlockK / 16; ++kk) {
    const uint64_t da = wgmma_desc_k_major_sw128(a + kk * 16), db = wgmma_desc_k_major_sw128(b + kk * 16);
    if constexpr (BM == 128) {
      wgmma_m64n128k16(acc, da, db);
    } else {
      wgmma_m64n64k16(acc, da, db);
    }
  }
  wgmma_commit();
}

// The warpgroup's accumulators into out rows [a_row0, + 64) and columns [n0 + b_row0, + kWgN).
template <int BM, typename Tout>
__device__ void store_wg_tile(const GroupedGemmArgs& p, const ExpertTile& tile, int64_t col0, int a_row0,
                              const float (&acc)[WgTiling<BM>::kAccRegs]) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  Tout* out = static_cast<Tout*>(p.out);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t row = tile.row_begin + a_row0 + warp * 16 + g + half * 8;
    if (row >= tile.row_end) continue;
#pragma unroll
    for (int j = 0; j < WgTiling<BM>::kWgN / 8; ++j) {
      const int64_t col = col0 + j * 8 + q * 2;
      if (col < p.n) grouped_store_pair(out + row * p.n + col, acc[4 * j + 2 * half], acc[4 * j + 2 * half + 1]);
    }
  }
}

template <int BM, typename Tout>
__global__ void __launch_bounds__(kThreads, 2) grouped_wgmma_kernel(GroupedGemmArgs p, int64_t n_blocks) {
  using T = WgTiling<BM>;
  extern __shared__ unsigned char smem_raw[];
  __shared__ ExpertTileShared shared;
  ExpertTile tile;
  const int64_t n_block = blockIdx.x % n_blocks, index = blockIdx.x / n_blocks;
  if (!find_expert_tile(p.offsets, p.num_experts, p.m, BM, index, tile, shared)) return;
  bf16* smem = reinterpret_cast<bf16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const int64_t n0 = n_block * kGroupedBlockN;
  const GroupedBlockTile t{.x = static_cast<const bf16*>(p.x) + tile.row_begin * p.k,
                           .w = static_cast<const bf16*>(p.weight) + (tile.expert * p.n + n0) * p.k,
                           .rows = tile.row_end - tile.row_begin, .n_left = p.n - n0, .k = p.k};
  const int64_t slices = p.k / kGroupedBlockK;
#pragma unroll
  for (int s = 0; s < T::kAhead; ++s) {
    if (s < slices) grouped_load_stage<BM, kThreads>(smem + s * T::kStageElems, t, s);
    cp_async_commit();
  }
  const int wg = threadIdx.x / 128;
  const int a_row0 = BM == 128 ? 64 * wg : 0, b_row0 = BM == 128 ? 0 : 64 * wg;
  float acc[T::kAccRegs] = {};
  for (int64_t slice = 0; slice < slices; ++slice) {
    cp_async_wait<T::kAhead - 1>();
    fence_proxy_async_shared();  // this thread's copies of the slice, visible to wgmma
    __syncthreads();             // everyone's; and the refilled stage's reader is done
    const bf16* stage = smem + (slice % T::kStages) * T::kStageElems;
    wgmma_slice<BM>(stage + a_row0 * kGroupedBlockK, stage + (BM + b_row0) * kGroupedBlockK, acc);
    const int64_t next = slice + T::kAhead;
    if (next < slices) grouped_load_stage<BM, kThreads>(smem + (next % T::kStages) * T::kStageElems, t, next);
    cp_async_commit();
    wgmma_wait<T::kInFlight>();  // with four stages, this slice's products overlap the next wait
    wgmma_fence_operands(acc);
  }
  wgmma_wait<0>();
  wgmma_fence_operands(acc);
  cp_async_wait<0>();
  store_wg_tile<BM, Tout>(p, tile, n0 + b_row0, a_row0, acc);
}

template <int BM, typename Tout>
void launch(const GroupedGemmArgs& args, cudaStream_t stream) {
  launch_grouped_tiles<grouped_wgmma_kernel<BM, Tout>>({BM, kThreads, WgTiling<BM>::kSmemBytes}, args, stream);
}

template <typename Tout>
void launch_rows(int tile_rows, const GroupedGemmArgs& args, cudaStream_t stream) {
  if (tile_rows == 128) return launch<128, Tout>(args, stream);
  launch<64, Tout>(args, stream);
}

}  // namespace

bool grouped_gemm_wgmma_takes(int tile_rows) { return tile_rows == 64 || tile_rows == 128; }

void grouped_gemm_wgmma(const GroupedGemmArgs& args, int tile_rows, cudaStream_t stream) {
  STRATA_CHECK(grouped_gemm_wgmma_takes(tile_rows));
  if (args.out_dtype == DType::kF32) return launch_rows<float>(tile_rows, args, stream);
  launch_rows<bf16>(tile_rows, args, stream);
}

}  // namespace strata::cuda
