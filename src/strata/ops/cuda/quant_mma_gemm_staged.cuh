// The quantized GEMM with its weights staged through shared memory (QuantGemmOptions::
// staged_weights): each K tile's 128 weight rows arrive by cp.async with the x tile, kStages - 1
// tiles ahead of the products, so the loads in flight no longer live in registers (ncu of the
// register-loading GEMM at 32 rows: HBM 20% and issue slots 53% busy, its warps waiting on the
// weights each tile). A stage's weight rows are rows of K = 256 in the format's device layout
// (Format::kTileRowBytes, tile_chunk_offset), so the format's own load reads them there.
#pragma once

#include "strata/ops/cuda/quant_mma_gemm.cuh"

namespace strata::cuda::quant_gemm {

// BM x rows a block, 3 stages of {x tile, its sums, 128 weight rows of one K tile}; two blocks
// a SM where their shared memory fits (Q4_K at 32 rows), else one.
template <typename Format, int BM>
struct StagedTiling {
  static constexpr int kStages = 3;
  static constexpr int kXBytes = Tiling<BM>::kStageBytes;
  static constexpr int kWeightBytes = kBlockN * Format::kTileRowBytes;
  static constexpr int kStageBytes = (kXBytes + kWeightBytes + 127) / 128 * 128;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kMinBlocks = 2 * (kSmemBytes + 1024) <= 228 * 1024 ? 2 : 1;
};

// cp.asyncs of K tile `tile`'s weight rows [n0, n0 + 128) into a stage (zeros past N).
template <typename Format>
__device__ __forceinline__ void load_weights(const mma_gemv::Params& p, int64_t n0, int64_t tile, uint8_t* stage) {
  constexpr int kChunks = Format::kTileRowBytes / 16;
  static_assert(Format::kTileRowBytes % 16 == 0);
  const int64_t row_bytes = Format::row_bytes(p.k);
  for (int i = threadIdx.x; i < kBlockN * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks;
    const bool valid = n0 + r < p.n;
    const uint8_t* src = valid ? p.weight + (n0 + r) * row_bytes + Format::tile_chunk_offset(p.k, tile, c) : p.weight;
    cp_async_16(stage + r * Format::kTileRowBytes + 16 * c, src, valid);
  }
}

// Grid (M / BM, N / 128, splits), as gemm_kernel. Per K tile: the tile kStages - 1 ahead goes
// out (x and weights), this tile's stage is waited for, its x sums made, then each warp loads
// its 16 weight rows' units from the stage and runs the format's product.
template <typename Format, int kUnits, typename Tout, int BM>
__global__ void __launch_bounds__(kThreads, (StagedTiling<Format, BM>::kMinBlocks)) gemm_staged_kernel(Launch launch) {
  using T = StagedTiling<Format, BM>;
  constexpr int NT = BM / 8, S = T::kStages;
  extern __shared__ __align__(128) unsigned char staged_smem[];
  const auto stage = [&](int64_t i) { return staged_smem + i % S * T::kStageBytes; };
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM, n0 = static_cast<int64_t>(blockIdx.y) * kBlockN;
  const int64_t first = blockIdx.z * launch.tiles_per_split, tiles = p.k / kTileK;
  const int64_t last = first + launch.tiles_per_split < tiles ? first + launch.tiles_per_split : tiles;
  const auto load_stage = [&](int64_t tile) {
    uint8_t* at = stage(tile - first);
    load_x<BM>(p, m0, tile, reinterpret_cast<bf16*>(at));
    load_weights<Format>(p, n0, tile, at + T::kXBytes);
  };
  for (int s = 0; s < S - 1; ++s) {
    if (first + s < last) load_stage(first + s);
    cp_async_commit();
  }
  mma_gemv::Params rows = p;  // the stage's weight rows as a matrix of K = 256
  rows.k = kTileK;
  rows.n = kBlockN;
  float acc[NT][4] = {};
  for (int64_t tile = first; tile < last; ++tile) {
    if (tile + S - 1 < last) load_stage(tile + S - 1);
    cp_async_commit();
    cp_async_wait<S - 1>();
    __syncthreads();  // the tile's x and weights are in
    uint8_t* at = stage(tile - first);
    const auto* x = reinterpret_cast<const bf16*>(at);
    auto* sums = reinterpret_cast<float*>(at + Tiling<BM>::kXElems * 2);
    if constexpr (Format::kXSums) {
      sum_x<BM>(x, sums);
      __syncthreads();
    }
    rows.weight = at + T::kXBytes;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      typename Format::Load l;
      Format::template load<true, mma_gemv::SharedWeights>(rows, 16 * warp + g, u, t, l);
      Format::template product<NT>(TileX<BM>{x, sums}, l, u, g, t, acc);
    }
    __syncthreads();  // every warp is done with the stage before a later tile's cp.asyncs refill it
  }
  store_out<Tout, NT>(launch, m0, n0 + 16 * warp + g, acc);
}

template <typename Format, int kUnits, typename Tout, int BM>
void launch_staged_kernel(const Launch& launch, cudaStream_t stream) {
  constexpr int kSmemBytes = StagedTiling<Format, BM>::kSmemBytes;
  const auto kernel = gemm_staged_kernel<Format, kUnits, Tout, BM>;
  static const bool configured = [&] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  launch_grid<BM>(kernel, kSmemBytes, launch, stream);
}

// Declared in quant_mma_gemm.cuh, whose launch calls it for launch.staged; rows 16-byte aligned.
template <typename Format, int kUnits>
void launch_staged(const Launch& launch, cudaStream_t stream) {
  const bool f32 = launch.out_dtype == DType::kF32;
  if (launch.tile_rows == 64)
    return f32 ? launch_staged_kernel<Format, kUnits, float, 64>(launch, stream)
               : launch_staged_kernel<Format, kUnits, bf16, 64>(launch, stream);
  f32 ? launch_staged_kernel<Format, kUnits, float, 32>(launch, stream)
      : launch_staged_kernel<Format, kUnits, bf16, 32>(launch, stream);
}

}  // namespace strata::cuda::quant_gemm
