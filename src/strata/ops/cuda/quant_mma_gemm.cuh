// The tensor-core GEMM over block-quantized weights past the GEMVs' rows (quant_mma_gemm.h). A
// block computes BM (64 or 128) x rows by 128 weight rows with BM / 8 warps of 32 x 32 tiles. Per
// 256-column K tile the warps load the 16-row tiles of weight units as the GEMVs do
// (Format::load), widen them to bf16 in shared memory (Format::visit: lane t's values, four at a
// column) in the grouped kernels' swizzled 64-wide slices, and run mma.sync over them
// (grouped_mma_tile) while the next tile's weights load.
#pragma once

#include "strata/ops/cuda/grouped_tiles.cuh"
#include "strata/ops/cuda/mma_gemv.cuh"

namespace strata::cuda::quant_gemm {

using mma_gemv::bf16;
constexpr int kBlockN = kGroupedBlockN;  // weight rows of a block: 8 tiles of 16
constexpr int64_t kTileK = 256;          // a k-quant super-block: four 64-wide slices
constexpr int kSlices = kTileK / kGroupedBlockK;

// BM x rows a block: 64 with 8 warps in 96 KB (two blocks a SM), 128 with 16 in 128 KB (one),
// which widens each weight tile once for twice the rows.
template <int BM>
struct Tiling {
  static constexpr int kWarps = BM / 8, kThreads = 32 * kWarps, kMinBlocks = BM == 64 ? 2 : 1;
  static constexpr int kSliceElems = (BM + kBlockN) * kGroupedBlockK;  // x rows, then weight rows
  static constexpr int kSmemBytes = kSlices * kSliceElems * 2;
};

// Which weights a warp widens: 8 / kGroups warps share a 16-row tile. With one unit a tile and
// two warps (BM 128, 256-column units) both load it and each widens one row of a lane's pair.
template <int kUnits, int kWarps>
struct WarpWeights {
  static constexpr int kGroups = kWarps / 8;
  static constexpr bool kOneRow = kUnits < kGroups;
  static constexpr int kLoads = kOneRow ? 1 : kUnits / kGroups;
  __device__ static int unit(int i, int group) { return kOneRow ? 0 : group + i * kGroups; }
};

struct Launch {
  // rows = M. With K split over blockIdx.z, out is the f32 partials [splits, M, N], no bias and
  // no accumulation; else the linear's out.
  mma_gemv::Params p;
  int64_t tiles_per_split = 0;  // K tiles each blockIdx.z takes
  unsigned splits = 1;
  int tile_rows = 64;  // BM
  DType out_dtype = DType::kF32;
};

// The warp's weight units of K tile `tile` (kUnits a tile: 256 / the format's unit columns),
// rows `row` and row + 8 (zeros past N).
template <typename Format, typename W, bool kWide>
__device__ __forceinline__ void load_weights(const mma_gemv::Params& p, int64_t row, int64_t tile, int units,
                                             int group, int t, typename Format::Load (&l)[W::kLoads]) {
#pragma unroll
  for (int i = 0; i < W::kLoads; ++i) Format::template load<kWide>(p, row, tile * units + W::unit(i, group), t, l[i]);
}

// Lane t's values of the warp's units as bf16 into the slices' weight rows 16 (warp % 8) + g (+ 8).
template <typename Format, int kUnits, typename W, int BM>
__device__ __forceinline__ void widen_weights(const typename Format::Load (&l)[W::kLoads], int warp, int g, int t,
                                              bf16* smem) {
  constexpr int kUnitCols = kTileK / kUnits;
  const int group = warp / 8;
#pragma unroll
  for (int i = 0; i < W::kLoads; ++i)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (W::kOneRow && r != group) continue;
      const int row = 16 * (warp % 8) + g + 8 * r, j = W::unit(i, group);
      Format::visit(l[i], r, t, [&](int col, const float (&v)[4]) {
        const int c = j * kUnitCols + col;  // column of the K tile, a multiple of 4
        bf16* w = smem + c / kGroupedBlockK * Tiling<BM>::kSliceElems + BM * kGroupedBlockK;
        mma_gemv::store_bf16x4(w + grouped_swizzled(row, c % kGroupedBlockK / 8) + c % 8, v);
      });
    }
}

// cp.asyncs of x rows [m0, m0 + BM) of K tile `tile` into the slices' x rows (zeros past M).
template <int BM>
__device__ __forceinline__ void load_x(const mma_gemv::Params& p, int64_t m0, int64_t tile, bf16* smem) {
  constexpr int kRowChunks = kTileK / 8;  // 16-byte chunks of a tile row
#pragma unroll
  for (int j = 0; j < BM * kRowChunks / Tiling<BM>::kThreads; ++j) {
    const int i = threadIdx.x + j * Tiling<BM>::kThreads, row = i / kRowChunks, c = i % kRowChunks;
    const bool valid = m0 + row < p.rows;
    const bf16* src = valid ? p.x + (m0 + row) * p.k + tile * kTileK + c * 8 : p.x;
    cp_async_16(smem + c / 8 * Tiling<BM>::kSliceElems + grouped_swizzled(row, c % 8), src, valid);
  }
}

// acc (grouped_mma_tile's fragments of the warp's 32 x 32 tile) into out rows < M, columns < N:
// + bias, + out.
template <typename Tout>
__device__ __forceinline__ void store_out(const Launch& launch, int64_t m0, int64_t n0, const float (&acc)[2][4][4]) {
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q = threadIdx.x % 4;
  Tout* out = static_cast<Tout*>(p.out) + static_cast<int64_t>(blockIdx.z) * p.rows * p.n;
#pragma unroll
  for (int fm = 0; fm < 2; ++fm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // fragment value i: x row g (i < 2) or g + 8, weight row 2q + i % 2
      const int64_t token = m0 + warp / 4 * 32 + fm * 16 + g + 8 * (i / 2);
      if (token >= p.rows) continue;
#pragma unroll
      for (int fn = 0; fn < 4; ++fn) {
        const int64_t col = n0 + warp % 4 * 32 + fn * 8 + 2 * q + i % 2;
        if (col >= p.n) continue;
        float v = acc[fm][fn][i];
        if (p.bias != nullptr) v += __bfloat162float(p.bias[col]);
        Tout* dst = out + token * p.n + col;
        if (p.accumulate) v += to_f32(*dst);
        *dst = from_f32<Tout>(v);
      }
    }
}

// Grid (M / BM, N / 128, splits). One shared buffer a stage of the tile: the syncs keep the
// widening of tile i + 1 behind every warp's mma of tile i (with BM 64 two blocks a SM overlap them).
template <typename Format, int kUnits, bool kWide, typename Tout, int BM>
__global__ void __launch_bounds__(Tiling<BM>::kThreads, Tiling<BM>::kMinBlocks) gemm_kernel(Launch launch) {
  using T = Tiling<BM>;
  using W = WarpWeights<kUnits, T::kWarps>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM, n0 = static_cast<int64_t>(blockIdx.y) * kBlockN;
  const int64_t first = blockIdx.z * launch.tiles_per_split, tiles = p.k / kTileK;
  const int64_t last = first + launch.tiles_per_split < tiles ? first + launch.tiles_per_split : tiles;
  const int64_t row = n0 + 16 * (warp % 8) + g;
  typename Format::Load l[W::kLoads];
  if (first < last) load_weights<Format, W, kWide>(p, row, first, kUnits, warp / 8, t, l);
  float acc[2][4][4] = {};
  for (int64_t tile = first; tile < last; ++tile) {
    __syncthreads();  // every warp is done with the previous tile
    load_x<BM>(p, m0, tile, smem);
    cp_async_commit();
    widen_weights<Format, kUnits, W, BM>(l, warp, g, t, smem);
    if (tile + 1 < last) load_weights<Format, W, kWide>(p, row, tile + 1, kUnits, warp / 8, t, l);
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
      const bf16* slice = smem + s * T::kSliceElems;
      grouped_mma_tile<2>(slice, slice + BM * kGroupedBlockK, warp / 4 * 32, warp % 4 * 32, acc);
    }
  }
  store_out<Tout>(launch, m0, n0, acc);
}

template <typename Format, int kUnits, bool kWide, typename Tout, int BM>
void launch_kernel(const Launch& launch, cudaStream_t stream) {
  using T = Tiling<BM>;
  const auto kernel = gemm_kernel<Format, kUnits, kWide, Tout, BM>;
  static const bool configured = [&] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
    return true;
  }();
  (void)configured;
  const dim3 grid(static_cast<unsigned>(ceil_div(launch.p.rows, BM)),
                  static_cast<unsigned>(ceil_div(launch.p.n, kBlockN)), launch.splits);
  kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(launch);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <typename Format, int kUnits, bool kWide, typename Tout>
void launch_tiles(const Launch& launch, cudaStream_t stream) {
  if (launch.tile_rows == 128) return launch_kernel<Format, kUnits, kWide, Tout, 128>(launch, stream);
  launch_kernel<Format, kUnits, kWide, Tout, 64>(launch, stream);
}

// Format: Load, load<kWide>(p, row, unit, t, Load&) as the GEMVs', and visit(load, r, t, f)
// calling f(column of the unit, float[4]) for lane t's values of row g (r 0) or g + 8.
template <typename Format, int kUnits, bool kWide = true>
void launch(const Launch& launch, cudaStream_t stream) {
  if (launch.out_dtype == DType::kF32) return launch_tiles<Format, kUnits, kWide, float>(launch, stream);
  launch_tiles<Format, kUnits, kWide, bf16>(launch, stream);
}

}  // namespace strata::cuda::quant_gemm

namespace strata::cuda {

// The formats of q8_0_mma_gemv.cu and fp8_mma_gemv.cu (kF8_E4M3_B128 rows 16-byte aligned or not).
void q8_0_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);
void fp8_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);

}  // namespace strata::cuda
