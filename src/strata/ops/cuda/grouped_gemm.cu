// The tensor-core grouped kernel: a block computes a BM x 128 tile of one expert's rows with
// 8 warps (2 x 4, warp tile BM/2 x 32) of mma.sync m16n8k16 bf16, f32 accumulators, fed by a
// cp.async pipeline of 64-wide K slices through XOR-swizzled shared memory and ldmatrix.
// Grid: 1-D over (tile, N block), N block fastest so neighbouring blocks share x rows in L2.
// Tiles of 64 and 128 rows run on wgmma instead (grouped_gemm_wgmma.cu); 32-row ones here.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/expert_tiles.cuh"
#include "strata/ops/cuda/grouped_gemm.h"
#include "strata/ops/cuda/grouped_gemm_wgmma.h"
#include "strata/ops/cuda/grouped_tiles.cuh"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;
constexpr int kBlockN = kGroupedBlockN;
constexpr int kBlockK = kGroupedBlockK;
// Up to this many rows per expert on average, streaming the weights beats tensor-core tiles
// (decode); above, tensor cores. H200 (gpu_moe_bench): 32-row tiles won at 4 rows per expert
// (Qwen3-30B-A3B, 108 vs 180 us) and at 1.25 (Qwen3-Next, 194 vs 259), streaming at 0.5.
constexpr int64_t kStreamingRowsPerExpert = 1;

template <int BM>
struct Tiling {
  static constexpr int kStages = BM == 128 ? 3 : 4;
  static constexpr int kWarpM = BM / 2, kFragsM = kWarpM / 16;
  static constexpr int kStageElems = (BM + kBlockN) * kBlockK;
  static constexpr int kSmemBytes = kStages * kStageElems * 2;
};

template <int BM, typename Tout>
__device__ void store_tile(const GroupedGemmArgs& p, const ExpertTile& tile, int64_t n0, int warp_m, int warp_n,
                           const float (&acc)[Tiling<BM>::kFragsM][4][4]) {
  using T = Tiling<BM>;
  const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  Tout* out = static_cast<Tout*>(p.out);
#pragma unroll
  for (int fm = 0; fm < T::kFragsM; ++fm)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t row = tile.row_begin + warp_m * T::kWarpM + fm * 16 + g + half * 8;
      if (row >= tile.row_end) continue;
#pragma unroll
      for (int fn = 0; fn < 4; ++fn) {
        const int64_t col = n0 + warp_n * 32 + fn * 8 + q * 2;
        if (col < p.n) grouped_store_pair(out + row * p.n + col, acc[fm][fn][half * 2], acc[fm][fn][half * 2 + 1]);
      }
    }
}

template <int BM, typename Tout>
__global__ void __launch_bounds__(kThreads) grouped_gemm_kernel(GroupedGemmArgs p, int64_t n_blocks) {
  using T = Tiling<BM>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ ExpertTileShared shared;
  ExpertTile tile;
  const int64_t n_block = blockIdx.x % n_blocks, index = blockIdx.x / n_blocks;
  if (!find_expert_tile(p.offsets, p.num_experts, p.m, BM, index, tile, shared)) return;
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const int64_t n0 = n_block * kBlockN;
  const GroupedBlockTile t{.x = static_cast<const bf16*>(p.x) + tile.row_begin * p.k,
                    .w = static_cast<const bf16*>(p.weight) + (tile.expert * p.n + n0) * p.k,
                    .rows = tile.row_end - tile.row_begin, .n_left = p.n - n0, .k = p.k};
  const int64_t slices = p.k / kBlockK;
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < slices) grouped_load_stage<BM, kThreads>(smem + s * T::kStageElems, t, s);
    cp_async_commit();
  }
  const int warp = threadIdx.x / 32, warp_m = warp / 4, warp_n = warp % 4;
  float acc[T::kFragsM][4][4] = {};
  for (int64_t slice = 0; slice < slices; ++slice) {
    cp_async_wait<T::kStages - 2>();
    __syncthreads();  // slice is in; every warp is done with the stage refilled below
    const int64_t next = slice + T::kStages - 1;
    if (next < slices) grouped_load_stage<BM, kThreads>(smem + (next % T::kStages) * T::kStageElems, t, next);
    cp_async_commit();
    grouped_mma_slice<BM>(smem + (slice % T::kStages) * T::kStageElems, warp_m, warp_n, acc);
  }
  cp_async_wait<0>();
  store_tile<BM, Tout>(p, tile, n0, warp_m, warp_n, acc);
}

template <int BM, typename Tout>
void launch(const GroupedGemmArgs& args, cudaStream_t stream) {
  launch_grouped_tiles<grouped_gemm_kernel<BM, Tout>>({BM, kThreads, Tiling<BM>::kSmemBytes}, args, stream);
}

template <typename Tout>
void launch_rows(int tile_rows, const GroupedGemmArgs& args, cudaStream_t stream) {
  if (tile_rows == 128) {
    launch<128, Tout>(args, stream);
  } else if (tile_rows == 64) {
    launch<64, Tout>(args, stream);
  } else {
    launch<32, Tout>(args, stream);
  }
}

}  // namespace

bool grouped_gemm_supported(const GroupedGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool rows_ok = args.tile_rows == 0 || args.tile_rows == 32 || args.tile_rows == 64 || args.tile_rows == 128;
  return args.k % kBlockK == 0 && args.n % 8 == 0 && aligned(args.x) && aligned(args.weight) &&
         reinterpret_cast<uintptr_t>(args.out) % 8 == 0 && rows_ok &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

// Rows per expert on average (as if every expert had rows): a tile about that tall wastes the
// least; taller tiles read each expert's weights fewer times. On wgmma, 128-row tiles win from
// 64 rows an expert (H200, gpu_moe_bench at 4096 tokens: 30B gate_up 324 TFLOP/s against 266 at
// 64 rows and mma.sync's 250; Qwen3-Next, 80 rows an expert, 243 against 188 and 194).
int grouped_gemm_tile_rows(const GroupedGemmArgs& args) {
  if (args.tile_rows != 0) return args.tile_rows;
  const int64_t per_expert = args.m / (args.num_experts > 0 ? args.num_experts : 1);
  return per_expert >= 64 ? 128 : (per_expert >= 24 ? 64 : 32);
}

GroupedKernel grouped_kernel_for(const GroupedGemmArgs& args) {
  const bool few_rows = args.m <= kStreamingRowsPerExpert * args.num_experts;
  if (!few_rows && grouped_gemm_supported(args)) return GroupedKernel::kTensorCores;
  if (bulk_gemv_supported(args)) return GroupedKernel::kBulkStreaming;
  if (grouped_gemv_supported(args)) return GroupedKernel::kStreaming;
  return GroupedKernel::kNone;
}

void grouped_gemm(const GroupedGemmArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0 || args.num_experts == 0) return;
  STRATA_CHECK(grouped_gemm_supported(args));
  const int rows = grouped_gemm_tile_rows(args);
  if (!args.mma_sync_tiles && grouped_gemm_wgmma_takes(rows)) return grouped_gemm_wgmma(args, rows, stream);
  if (args.out_dtype == DType::kF32) {
    launch_rows<float>(rows, args, stream);
  } else {
    launch_rows<bf16>(rows, args, stream);
  }
}

}  // namespace strata::cuda
