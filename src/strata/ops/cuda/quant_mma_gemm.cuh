// The tensor-core GEMM over block-quantized weights past the GEMVs' rows (quant_mma_gemm.h). A
// block takes BM (32 or 64) x rows by 128 weight rows: warp w owns weight rows 16w..16w + 15 and
// runs the GEMVs' own product (Format::product: codes widened in registers, mma.sync, scales per
// block in f32) over every x row of the block. Per 256-column K tile the x rows wait in shared
// memory (cp.async, two stages) with their sums per 16 columns where the format needs them,
// shared by the eight warps; each weight unit's registers refill with the next tile's unit once
// its product is done. No weight tile is widened in memory.
#pragma once

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/ops/cuda/mma_gemv.cuh"

namespace strata::cuda::quant_gemm {

using mma_gemv::bf16;
constexpr int kBlockN = 128;             // weight rows of a block: 8 warps of 16
constexpr int kWarps = kBlockN / 16;
constexpr int kThreads = 32 * kWarps;
constexpr int64_t kTileK = 256;          // a k-quant super-block, two 128-column units of the others
constexpr int kSteps = kTileK / 16;      // mma steps of 16 columns a tile

// BM x rows a block: 32 (two blocks a SM) or 64 (one, each weight unit against twice the rows).
template <int BM>
struct Tiling {
  static constexpr int kMinBlocks = BM == 32 ? 2 : 1;
  static constexpr int kXElems = BM * kTileK;                          // a stage's x tile, bf16
  static constexpr int kStageBytes = kXElems * 2 + kSteps * BM * 4;    // then its sums, f32
  static constexpr int kSmemBytes = 2 * kStageBytes;
};

struct Launch {
  // rows = M. With K split over blockIdx.z, out is the f32 partials [splits, M, N], no bias and
  // no accumulation; else the linear's out.
  mma_gemv::Params p;
  int64_t tiles_per_split = 0;  // K tiles each blockIdx.z takes
  unsigned splits = 1;
  int tile_rows = 32;  // BM
  DType out_dtype = DType::kF32;
  bool staged = false;  // weights through shared memory (quant_mma_gemm_staged.cuh)
};

// The 8-byte chunk (4 columns) c of x row r sits at chunk c ^ (swizzle(r) << 2): a half warp's
// 8-byte loads (rows g, four chunks) and a quarter warp's 16-byte loads (rows g, g + 1) both
// meet every bank once.
__device__ __forceinline__ int tile_chunk(int row, int chunk) {
  const int swizzle = (row & 1) << 1 | (row >> 1 & 1);
  return chunk ^ (swizzle << 2);
}

// An x source for Format::product (the GEMVs' GlobalX, mma_gemv.cuh) over a stage: x rows
// [m0, m0 + BM) and columns [0, 256) of the K tile, and sums[step][row] of each 16 columns.
template <int BM>
struct TileX {
  const bf16* x;     // [BM][256], chunks swizzled
  const float* sums;  // [16][BM]
  __device__ __forceinline__ uint2 load4(int token, int64_t col) const {
    return *reinterpret_cast<const uint2*>(x + token * kTileK + 4 * tile_chunk(token, static_cast<int>(col) / 4));
  }
  __device__ __forceinline__ uint4 load8(int token, int64_t col) const {
    return *reinterpret_cast<const uint4*>(x + token * kTileK + 4 * tile_chunk(token, static_cast<int>(col) / 4));
  }
  // The step's sums for rows token0 + 2t and + 1 (t = lane % 4), the columns of fragment values 0, 1.
  __device__ __forceinline__ void step_sum(float (&sum)[4], uint2 /*x*/, int token0, int64_t col) const {
    const float2 s = *reinterpret_cast<const float2*>(sums + col / 16 * BM + token0 + 2 * (threadIdx.x % 4));
    sum[0] += s.x, sum[1] += s.y;
  }
};

// cp.asyncs of x rows [m0, m0 + BM) of K tile `tile` into a stage (zeros past M).
template <int BM>
__device__ __forceinline__ void load_x(const mma_gemv::Params& p, int64_t m0, int64_t tile, bf16* stage) {
  constexpr int kRowChunks = kTileK / 8;  // 16-byte chunks of a tile row
#pragma unroll
  for (int j = 0; j < BM * kRowChunks / kThreads; ++j) {
    const int i = threadIdx.x + j * kThreads, row = i / kRowChunks, c = i % kRowChunks;
    const bool valid = m0 + row < p.rows;
    const bf16* src = valid ? p.x + (m0 + row) * p.k + tile * kTileK + c * 8 : p.x;
    cp_async_16(stage + row * kTileK + 4 * tile_chunk(row, 2 * c), src, valid);
  }
}

// The stage's sums of 16 columns a row, in f32 (the GEMVs' mma against ones sums them alike).
template <int BM>
__device__ __forceinline__ void sum_x(const bf16* stage, float* sums) {
#pragma unroll
  for (int j = 0; j < kSteps * BM / kThreads; ++j) {
    const int i = threadIdx.x + j * kThreads, row = i % BM, step = i / BM;
    float s = 0.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage + row * kTileK + 4 * tile_chunk(row, 4 * step + 2 * h));
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float2 f = __bfloat1622float2(pairs[q]);
        s += f.x + f.y;
      }
    }
    sums[step * BM + row] = s;
  }
}

// acc (the warp's fragments: weight rows g, g + 8 by x rows 8 nt + 2t, + 1) into out rows < M,
// columns < N: + bias, + out.
template <typename Tout, int NT>
__device__ __forceinline__ void store_out(const Launch& launch, int64_t m0, int64_t row, const float (&acc)[NT][4]) {
  const mma_gemv::Params& p = launch.p;
  const int t = threadIdx.x % 4;
  Tout* out = static_cast<Tout*>(p.out) + static_cast<int64_t>(blockIdx.z) * p.rows * p.n;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t token = m0 + nt * 8 + 2 * t + i % 2, col = row + 8 * (i / 2);
      if (token >= p.rows || col >= p.n) continue;
      float v = acc[nt][i];
      if (p.bias != nullptr) v += __bfloat162float(p.bias[col]);
      Tout* dst = out + token * p.n + col;
      if (p.accumulate) v += to_f32(*dst);
      *dst = from_f32<Tout>(v);
    }
}

// Grid (M / BM, N / 128, splits). Per K tile: the next tile's x cp.asyncs go out, then this
// tile's sums and products, each weight unit's registers refilled with the next tile's unit as
// soon as its product is done (a second set would spill; the SM's other warps cover the loads);
// the syncs keep a stage's reuse behind every warp's reads of it.
template <typename Format, int kUnits, bool kWide, typename Tout, int BM>
__global__ void __launch_bounds__(kThreads, Tiling<BM>::kMinBlocks) gemm_kernel(Launch launch) {
  using T = Tiling<BM>;
  constexpr int NT = BM / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const auto stage_x = [&](int64_t i) { return reinterpret_cast<bf16*>(smem_raw + i % 2 * T::kStageBytes); };
  const auto stage_sums = [&](int64_t i) {
    return reinterpret_cast<float*>(smem_raw + i % 2 * T::kStageBytes + T::kXElems * 2);
  };
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kBlockN + 16 * warp + g;
  const int64_t first = blockIdx.z * launch.tiles_per_split, tiles = p.k / kTileK;
  const int64_t last = first + launch.tiles_per_split < tiles ? first + launch.tiles_per_split : tiles;
  typename Format::Load l[kUnits];
  float acc[NT][4] = {};
  if (first < last) {
    load_x<BM>(p, m0, first, stage_x(0));
    cp_async_commit();
#pragma unroll
    for (int u = 0; u < kUnits; ++u) Format::template load<kWide>(p, row, first * kUnits + u, t, l[u]);
  }
  for (int64_t tile = first; tile < last; ++tile) {
    const int64_t i = tile - first;
    if (tile + 1 < last) load_x<BM>(p, m0, tile + 1, stage_x(i + 1));
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();  // the tile's x is in
    if constexpr (Format::kXSums) {  // Q8_0 and FP8 codes are signed: no offset to take off
      sum_x<BM>(stage_x(i), stage_sums(i));
      __syncthreads();  // and its sums
    }
    const TileX<BM> x{stage_x(i), stage_sums(i)};
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      Format::template product<NT>(x, l[u], u, g, t, acc);
      if (tile + 1 < last) Format::template load<kWide>(p, row, (tile + 1) * kUnits + u, t, l[u]);
    }
    __syncthreads();  // every warp is done with the stage before the next tile's cp.asyncs refill it
  }
  store_out<Tout, NT>(launch, m0, row, acc);
}

// A GEMM kernel over the grid (M / BM, N / 128, splits) with smem_bytes of dynamic shared memory
// (which the caller let it take, once per kernel).
template <int BM>
void launch_grid(void (*kernel)(Launch), int smem_bytes, const Launch& launch, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(launch.p.rows, BM)),
                  static_cast<unsigned>(ceil_div(launch.p.n, kBlockN)), launch.splits);
  kernel<<<grid, kThreads, smem_bytes, stream>>>(launch);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <typename Format, int kUnits, bool kWide, typename Tout, int BM>
void launch_kernel(const Launch& launch, cudaStream_t stream) {
  const auto kernel = gemm_kernel<Format, kUnits, kWide, Tout, BM>;
  static const bool configured = [&] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tiling<BM>::kSmemBytes));
    return true;
  }();
  (void)configured;
  launch_grid<BM>(kernel, Tiling<BM>::kSmemBytes, launch, stream);
}

template <typename Format, int kUnits, bool kWide, typename Tout>
void launch_tiles(const Launch& launch, cudaStream_t stream) {
  if (launch.tile_rows == 64) return launch_kernel<Format, kUnits, kWide, Tout, 64>(launch, stream);
  launch_kernel<Format, kUnits, kWide, Tout, 32>(launch, stream);
}

// Formats whose K tile's weight rows can be staged through shared memory (Format::
// kTileRowBytes, tile_chunk_offset: quant_mma_gemm_staged.cuh, which defines launch_staged).
template <typename Format>
concept StagedFormat = requires { Format::kTileRowBytes; };
template <typename Format, int kUnits>
void launch_staged(const Launch& launch, cudaStream_t stream);

// Format: the GEMVs' (mma_gemv.cuh), whose unit is 256 / kUnits columns; kWide: its rows are
// 16-byte aligned. launch.staged takes the weights through shared memory (StagedFormat only).
template <typename Format, int kUnits, bool kWide = true>
void launch(const Launch& launch, cudaStream_t stream) {
  if constexpr (StagedFormat<Format>) {
    if (launch.staged) return launch_staged<Format, kUnits>(launch, stream);
  } else {
    STRATA_CHECK(!launch.staged);  // quant_mma_gemm_stages_weights
  }
  if (launch.out_dtype == DType::kF32) return launch_tiles<Format, kUnits, kWide, float>(launch, stream);
  launch_tiles<Format, kUnits, kWide, bf16>(launch, stream);
}

}  // namespace strata::cuda::quant_gemm

namespace strata::cuda {

// The formats of q8_0_mma_gemv.cu and fp8_mma_gemv.cu (kF8_E4M3_B128 rows 16-byte aligned or not).
void q8_0_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);
void fp8_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);

}  // namespace strata::cuda
