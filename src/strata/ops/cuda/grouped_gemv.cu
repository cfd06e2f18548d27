// The weight-streaming grouped kernel for decode: a block takes one tile (up to 8 rows of one
// expert) and 16 output features; each of its 4 warps streams 4 weight rows with 16-byte loads,
// up to 16 of them in flight per lane, and dots them with the tile's x rows (read through L1).
// Grid: 1-D over (tile, feature chunk), feature chunk fastest so neighbours share x rows.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dot_bf16.cuh"
#include "strata/ops/cuda/expert_tiles.cuh"
#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarps = 4;
constexpr int kFeatures = 4;  // weight rows per warp
constexpr int kTileRows = 8;

// Weights are read once: keep them out of L1 so the x rows stay there.
__device__ __forceinline__ uint4 load_streaming(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

struct WarpTask {
  const bf16* w;  // first of this warp's weight rows, [kFeatures, K]
  const bf16* x;  // the tile's first x row, [rows, K]
  int64_t row, n0;  // first output row and feature
  int rows, features;  // rows in the tile (<= R), valid weight rows (<= kFeatures)
};

// R: rows handled (a power of two >= task.rows); rows past task.rows are skipped.
template <int R, typename Tout>
__device__ void gemv_tile(const GroupedGemmArgs& p, const WarpTask& t) {
  constexpr int kUnroll = R >= 8 ? 2 : 4;  // 16-byte chunks per lane per weight row in flight
  const int lane = threadIdx.x % 32;
  const int64_t chunks = p.k / 8;
  float acc[kFeatures][R] = {};
  for (int64_t c0 = 0; c0 < chunks; c0 += 32 * kUnroll) {
    uint4 w[kFeatures][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = c0 + u * 32 + lane;
#pragma unroll
      for (int f = 0; f < kFeatures; ++f)
        w[f][u] = c < chunks && f < t.features ? load_streaming(t.w + f * p.k + c * 8) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = c0 + u * 32 + lane;
      if (c >= chunks) continue;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= t.rows) continue;
        const uint4 xv = __ldg(reinterpret_cast<const uint4*>(t.x + r * p.k) + c);
#pragma unroll
        for (int f = 0; f < kFeatures; ++f) fma_bf16x8(acc[f][r], w[f][u], xv);
      }
    }
  }
#pragma unroll
  for (int f = 0; f < kFeatures; ++f)
#pragma unroll
    for (int r = 0; r < R; ++r)
      for (int o = 16; o > 0; o >>= 1) acc[f][r] += __shfl_xor_sync(0xffffffffu, acc[f][r], o);
  // Lane f * R + r stores (feature f, row r): kFeatures * R <= 32.
  const int f = lane / R, r = lane % R;
  float v = 0.0f;
#pragma unroll
  for (int ff = 0; ff < kFeatures; ++ff)
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
      if (ff == f && rr == r) v = acc[ff][rr];
  if (f < t.features && r < t.rows) static_cast<Tout*>(p.out)[(t.row + r) * p.n + t.n0 + f] = from_f32<Tout>(v);
}

template <typename Tout>
__global__ void __launch_bounds__(kWarps * 32, 4) grouped_gemv_kernel(GroupedGemmArgs p, int64_t feature_chunks) {
  __shared__ ExpertTileShared shared;
  const int64_t chunk = blockIdx.x % feature_chunks, index = blockIdx.x / feature_chunks;
  ExpertTile tile;
  if (!find_expert_tile(p.offsets, p.num_experts, p.m, kTileRows, index, tile, shared)) return;
  const int warp = threadIdx.x / 32;
  const int64_t n0 = (chunk * kWarps + warp) * kFeatures;
  if (n0 >= p.n) return;
  const WarpTask t{.w = static_cast<const bf16*>(p.weight) + (tile.expert * p.n + n0) * p.k,
                   .x = static_cast<const bf16*>(p.x) + tile.row_begin * p.k,
                   .row = tile.row_begin, .n0 = n0,
                   .rows = static_cast<int>(tile.row_end - tile.row_begin),
                   .features = static_cast<int>(p.n - n0 < kFeatures ? p.n - n0 : kFeatures)};
  if (t.rows == 1) {
    gemv_tile<1, Tout>(p, t);
  } else if (t.rows == 2) {
    gemv_tile<2, Tout>(p, t);
  } else if (t.rows <= 4) {
    gemv_tile<4, Tout>(p, t);
  } else {
    gemv_tile<8, Tout>(p, t);
  }
}

}  // namespace

bool grouped_gemv_supported(const GroupedGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return args.k % 8 == 0 && aligned(args.x) && aligned(args.weight) &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void grouped_gemv(const GroupedGemmArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0 || args.num_experts == 0) return;
  STRATA_CHECK(grouped_gemv_supported(args));
  const int64_t feature_chunks = ceil_div(args.n, kWarps * kFeatures);
  const int64_t blocks = feature_chunks * expert_tile_bound(args.m, args.num_experts, kTileRows);
  STRATA_CHECK(blocks < (int64_t{1} << 31));
  if (args.out_dtype == DType::kF32) {
    grouped_gemv_kernel<float><<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(args, feature_chunks);
  } else {
    grouped_gemv_kernel<bf16><<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(args, feature_chunks);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
