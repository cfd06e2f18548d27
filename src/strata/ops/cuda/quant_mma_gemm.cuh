// The tensor-core GEMM over block-quantized weights past the GEMVs' rows (quant_mma_gemm.h). A
// block computes 64 x rows by 128 weight rows; per 256-column K tile each warp loads one 16-row
// tile of weight units as the GEMVs do (Format::load), widens it to bf16 in shared memory
// (Format::visit: lane t's values, four at a column) in the grouped kernels' swizzled 64-wide
// slices, and the 8 warps run mma.sync over them (grouped_mma_slice) while the next tile loads.
#pragma once

#include "strata/ops/cuda/grouped_tiles.cuh"
#include "strata/ops/cuda/mma_gemv.cuh"

namespace strata::cuda::quant_gemm {

using mma_gemv::bf16;
constexpr int kThreads = 256;
constexpr int kBlockM = 64;               // x rows of a block
constexpr int kBlockN = kGroupedBlockN;   // weight rows of a block: 16 a warp
constexpr int64_t kTileK = 256;           // a k-quant super-block: four 64-wide slices
constexpr int kSlices = kTileK / kGroupedBlockK;
constexpr int kSliceElems = (kBlockM + kBlockN) * kGroupedBlockK;  // x rows, then weight rows
constexpr int kSmemBytes = kSlices * kSliceElems * 2;              // 96 KB: two blocks a SM

struct Launch {
  // rows = M. With K split over blockIdx.z, out is the f32 partials [splits, M, N], no bias and
  // no accumulation; else the linear's out.
  mma_gemv::Params p;
  int64_t tiles_per_split = 0;  // K tiles each blockIdx.z takes
  unsigned splits = 1;
  DType out_dtype = DType::kF32;
};

// The warp's weight units of K tile `tile` (kUnits of them: 256 / the format's unit columns),
// rows `row` and row + 8 (zeros past N).
template <typename Format, int kUnits, bool kWide>
__device__ __forceinline__ void load_weights(const mma_gemv::Params& p, int64_t row, int64_t tile, int t,
                                             typename Format::Load (&l)[kUnits]) {
#pragma unroll
  for (int j = 0; j < kUnits; ++j) Format::template load<kWide>(p, row, tile * kUnits + j, t, l[j]);
}

// Lane t's values of the warp's units as bf16 into the slices' weight rows 16 warp + g (+ 8).
template <typename Format, int kUnits>
__device__ __forceinline__ void widen_weights(const typename Format::Load (&l)[kUnits], int warp, int g, int t,
                                              bf16* smem) {
  constexpr int kUnitCols = kTileK / kUnits;
#pragma unroll
  for (int j = 0; j < kUnits; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = 16 * warp + g + 8 * r;
      Format::visit(l[j], r, t, [&](int col, const float (&v)[4]) {
        const int c = j * kUnitCols + col;  // column of the K tile, a multiple of 4
        bf16* w = smem + c / kGroupedBlockK * kSliceElems + kBlockM * kGroupedBlockK;
        mma_gemv::store_bf16x4(w + grouped_swizzled(row, c % kGroupedBlockK / 8) + c % 8, v);
      });
    }
}

// cp.asyncs of x rows [m0, m0 + 64) of K tile `tile` into the slices' x rows (zeros past M).
__device__ __forceinline__ void load_x(const mma_gemv::Params& p, int64_t m0, int64_t tile, bf16* smem) {
  constexpr int kRowChunks = kTileK / 8;  // 16-byte chunks of a tile row
#pragma unroll
  for (int j = 0; j < kBlockM * kRowChunks / kThreads; ++j) {
    const int i = threadIdx.x + j * kThreads, row = i / kRowChunks, c = i % kRowChunks;
    const bool valid = m0 + row < p.rows;
    const bf16* src = valid ? p.x + (m0 + row) * p.k + tile * kTileK + c * 8 : p.x;
    cp_async_16(smem + c / 8 * kSliceElems + grouped_swizzled(row, c % 8), src, valid);
  }
}

// acc (grouped_mma_slice's fragments) into out rows < M, columns < N: + bias, + out.
template <typename Tout>
__device__ __forceinline__ void store_out(const Launch& launch, int64_t m0, int64_t n0,
                                          const float (&acc)[kBlockM / 32][4][4]) {
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q = threadIdx.x % 4;
  Tout* out = static_cast<Tout*>(p.out) + static_cast<int64_t>(blockIdx.z) * p.rows * p.n;
#pragma unroll
  for (int fm = 0; fm < kBlockM / 32; ++fm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // fragment value i: x row g (i < 2) or g + 8, weight row 2q + i % 2
      const int64_t token = m0 + warp / 4 * (kBlockM / 2) + fm * 16 + g + 8 * (i / 2);
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

// Grid (M / 64, N / 128, splits). One shared buffer a stage of the tile: the syncs keep the
// widening of tile i + 1 behind every warp's mma of tile i; two blocks a SM overlap the two.
template <typename Format, int kUnits, bool kWide, typename Tout>
__global__ void __launch_bounds__(kThreads, 2) gemm_kernel(Launch launch) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const mma_gemv::Params& p = launch.p;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kBlockM, n0 = static_cast<int64_t>(blockIdx.y) * kBlockN;
  const int64_t first = blockIdx.z * launch.tiles_per_split, tiles = p.k / kTileK;
  const int64_t last = first + launch.tiles_per_split < tiles ? first + launch.tiles_per_split : tiles;
  const int64_t row = n0 + 16 * warp + g;
  typename Format::Load l[kUnits];
  if (first < last) load_weights<Format, kUnits, kWide>(p, row, first, t, l);
  float acc[kBlockM / 32][4][4] = {};
  for (int64_t tile = first; tile < last; ++tile) {
    __syncthreads();  // every warp is done with the previous tile
    load_x(p, m0, tile, smem);
    cp_async_commit();
    widen_weights<Format, kUnits>(l, warp, g, t, smem);
    if (tile + 1 < last) load_weights<Format, kUnits, kWide>(p, row, tile + 1, t, l);
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kSlices; ++s) grouped_mma_slice<kBlockM>(smem + s * kSliceElems, warp / 4, warp % 4, acc);
  }
  store_out<Tout>(launch, m0, n0, acc);
}

template <typename Format, int kUnits, bool kWide, typename Tout>
void launch_kernel(const Launch& launch, cudaStream_t stream) {
  const auto kernel = gemm_kernel<Format, kUnits, kWide, Tout>;
  static const bool configured = [&] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  const dim3 grid(static_cast<unsigned>(ceil_div(launch.p.rows, kBlockM)),
                  static_cast<unsigned>(ceil_div(launch.p.n, kBlockN)), launch.splits);
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(launch);
  STRATA_CUDA_CHECK_LAUNCH();
}

// Format: Load, load<kWide>(p, row, unit, t, Load&) as the GEMVs', and visit(load, r, t, f)
// calling f(column of the unit, float[4]) for lane t's values of row g (r 0) or g + 8.
template <typename Format, int kUnits, bool kWide = true>
void launch(const Launch& launch, cudaStream_t stream) {
  if (launch.out_dtype == DType::kF32) return launch_kernel<Format, kUnits, kWide, float>(launch, stream);
  launch_kernel<Format, kUnits, kWide, bf16>(launch, stream);
}

}  // namespace strata::cuda::quant_gemm

namespace strata::cuda {

// The formats of q8_0_mma_gemv.cu and fp8_mma_gemv.cu (kF8_E4M3_B128 rows 16-byte aligned or not).
void q8_0_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);
void fp8_mma_gemm(const quant_gemm::Launch& launch, cudaStream_t stream);

}  // namespace strata::cuda
