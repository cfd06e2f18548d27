// The skeleton of the tensor-core GEMVs over block-quantized weights (FP8, Q8_0): block b of W
// warps owns weight rows [16b, 16b + 16); warp w takes 128-column units w, w + W, ...; the warps'
// sums meet in shared memory last. x is read where it lies (it stays in L1 while the weights
// stream past). A Format widens its codes to bf16 in registers for mma.sync m16n8k16 (x rows are
// the 8, 16 or 32 columns) and scales each block's partial sums per row in f32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8_gemv.h"
#include "strata/ops/cuda/pdl.cuh"

namespace strata::cuda::mma_gemv {

using bf16 = __nv_bfloat16;
constexpr int kTileRows = 16;                      // weight rows per block: the mma's m
constexpr int64_t kUnitCols = 128;                 // columns a warp takes at a time
constexpr float kUnscale = 5.192296858534828e33f;  // 2^112, see f16x2_to_bf16x2_scaled

struct Params {
  const bf16* x;          // [M, K]; with experts [pairs / pairs_per_x, K], one row a pair
  const uint8_t* weight;  // [N, row bytes] in the device layout (weights/device_layout.h); [E, N, ..] with experts
  const bf16* bias;       // [N] or null
  void* out;              // [M, N]; with experts [pairs, N]
  int64_t n, k, units;    // units = K / 128
  int rows;
  bool accumulate;
  const int32_t* expert_ids = nullptr;  // [pairs]: block row y multiplies pair y by its expert
  int64_t pairs_per_x = 1;
  int64_t flat_pairs = 1;  // pairs numbered in blockIdx.x's tiles (a persistent grid), not by blockIdx.y
};

// The skeleton's parameters for a linear's arguments (no experts); units of 128 columns.
inline Params params_for(const QuantGemvArgs& args) {
  return {.x = static_cast<const bf16*>(args.x), .weight = static_cast<const uint8_t*>(args.weight),
          .bias = static_cast<const bf16*>(args.bias), .out = args.out, .n = args.n, .k = args.k,
          .units = args.k / kUnitCols, .rows = static_cast<int>(args.m), .accumulate = args.accumulate};
}

// And for experts in pair order: one x row per pair (or per pairs_per_x pairs).
inline Params params_for(const QuantExpertArgs& args) {
  return {.x = static_cast<const bf16*>(args.x), .weight = static_cast<const uint8_t*>(args.weights), .bias = nullptr,
          .out = args.out, .n = args.n, .k = args.k, .units = args.k / kUnitCols, .rows = 1, .accumulate = false,
          .expert_ids = args.expert_ids, .pairs_per_x = args.pairs_per_x};
}

// f16x2 bits of normal values or zeros as bf16x2 of the values times 2^-112: f16's bits shifted
// into bf16's fields keep sign and mantissa (exponent bias 15 read as 127). Exact when the f16
// mantissas have at most 7 significant bits (e4m3 codes, int8 values).
__device__ __forceinline__ uint32_t f16x2_to_bf16x2_scaled(uint32_t bits) {
  return (bits & 0x80008000u) | ((bits >> 3) & 0x0fff0fffu);
}

// Byte i of `word` as a float plus 2^23 (0x4b0000XX): a byte permute, where I2F runs on the
// conversion pipe at a quarter of the FMA rate. byte_value takes the 2^23 off: the byte, exactly.
__device__ __forceinline__ float byte_plus_2p23(uint32_t word, int i) {
  return __int_as_float(static_cast<int>(__byte_perm(word, 0x4b000000u, 0x7650u | static_cast<unsigned>(i))));
}
constexpr float k2p23 = 8388608.f;
__device__ __forceinline__ float byte_value(uint32_t word, int i) { return byte_plus_2p23(word, i) - k2p23; }

// d += A (16 x 16, rows g / g + 8) * B (16 x 8, column g), f32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint2 b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}

// Where a format's loads read its weights: HBM, streamed past the caches (the GEMVs), or a
// shared-memory tile that cp.async filled (quant_mma_gemm_staged.cuh).
struct GlobalWeights {
  template <typename T>
  __device__ __forceinline__ static T load(const uint8_t* at) { return __ldcs(reinterpret_cast<const T*>(at)); }
};
struct SharedWeights {
  template <typename T>
  __device__ __forceinline__ static T load(const uint8_t* at) { return *reinterpret_cast<const T*>(at); }
};

// 16 bytes at `at`: one load where rows are 16-byte aligned, else two 8-byte loads.
template <bool kWide>
__device__ __forceinline__ uint4 load16(const uint8_t* at) {
  if constexpr (kWide) return __ldcs(reinterpret_cast<const uint4*>(at));
  const uint2 a = __ldcs(reinterpret_cast<const uint2*>(at)), b = __ldcs(reinterpret_cast<const uint2*>(at + 8));
  return uint4{a.x, a.y, b.x, b.y};
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// x row `token` (zeros past M), 8 bf16 from column `col`.
__device__ __forceinline__ uint4 load_x(const Params& p, int token, int64_t col) {
  return token < p.rows ? __ldg(reinterpret_cast<const uint4*>(p.x + token * p.k + col)) : uint4{};
}

// x row `token` (zeros past M), 4 bf16 from column `col`.
__device__ __forceinline__ uint2 load_x4(const Params& p, int token, int64_t col) {
  return token < p.rows ? __ldg(reinterpret_cast<const uint2*>(p.x + token * p.k + col)) : uint2{};
}

// x as the GEMVs read it, rows where they lie (L1 keeps them while the weights stream past):
// load4 / load8 give 4 / 8 bf16 of row `token` from column `col` (zeros past M); step_sum adds
// the step's x sums to sum (an mma against ones, the same in every weight row of the fragment).
struct GlobalX {
  const Params& p;
  __device__ __forceinline__ uint2 load4(int token, int64_t col) const { return load_x4(p, token, col); }
  __device__ __forceinline__ uint4 load8(int token, int64_t col) const { return load_x(p, token, col); }
  __device__ __forceinline__ void step_sum(float (&sum)[4], uint2 x, int /*token0*/, int64_t /*col*/) const {
    constexpr uint32_t kOnes = 0x3f803f80u;  // bf16x2 {1, 1}
    const uint32_t ones[4] = {kOnes, kOnes, kOnes, kOnes};
    mma_bf16(sum, ones, x);
  }
};

// The warps' sums [W][16][8 * NT] into out rows < M.
template <int NT, int W, typename Tout>
__device__ __forceinline__ void write_out(const Params& p, const float (&acc)[NT][4], int64_t tile, int warp, int g,
                                          int t, float* sums) {
  constexpr int kCols = 8 * NT;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    float* lo = sums + (warp * kTileRows + g) * kCols + nt * 8 + 2 * t;
    lo[0] = acc[nt][0];
    lo[1] = acc[nt][1];
    lo[8 * kCols] = acc[nt][2];
    lo[8 * kCols + 1] = acc[nt][3];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kTileRows * kCols; i += W * 32) {
    const int r = i % kTileRows, token = i / kTileRows;
    const int64_t out_row = tile * kTileRows + r;
    if (token >= p.rows || out_row >= p.n) continue;
    float v = 0.f;
    for (int w = 0; w < W; ++w) v += sums[(w * kTileRows + r) * kCols + token];
    if (p.bias != nullptr) v += __bfloat162float(p.bias[out_row]);
    Tout* dst = static_cast<Tout*>(p.out) + token * p.n + out_row;
    if (p.accumulate) v += to_f32(*dst);
    *dst = from_f32<Tout>(v);
  }
}

// Tile f of the launch (pair-major: pair blockIdx.y + f / tiles, rows 16 (f % tiles) + [0, 16)):
// the parameters with that pair's expert weights, x row and out row (ids written by routing).
template <typename Format, typename Tout>
__device__ __forceinline__ Params tile_params(const Params& base, int64_t f, int64_t tiles, int64_t& tile) {
  tile = f % tiles;
  if (base.expert_ids == nullptr) return base;
  Params p = base;
  const int64_t pair = blockIdx.y + f / tiles;
  p.weight += base.expert_ids[pair] * base.n * Format::row_bytes(base.k);
  p.x += pair / base.pairs_per_x * base.k;
  p.out = static_cast<Tout*>(base.out) + pair * base.n;
  return p;
}

// Format: Load (a unit of rows g and g + 8 as lane t holds it), load<kWide, Mem>(p, row, unit,
// t, Load&) from GlobalWeights or SharedWeights, product<NT>(x, Load, unit, g, t, acc) over an x
// source (GlobalX here; the GEMM's shared tile, quant_mma_gemm.cuh), row_bytes(k) and kXSums
// (whether product reads step_sum). Blocks take tiles blockIdx.x, + gridDim.x, ...: with fewer
// blocks than tiles (a persistent grid) each warp loads its first unit of the next tile before
// the block meets to sum this one, so HBM stays busy.
template <typename Format, int NT, int W, bool kWide, typename Tout>
__device__ __forceinline__ void kernel_body(Params base) {
  __shared__ float sums[W * kTileRows * 8 * NT];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int64_t tiles = (base.n + kTileRows - 1) / kTileRows, total = tiles * base.flat_pairs;
  int64_t f = blockIdx.x, tile = 0;
  typename Format::Load first, second;
  Params p;
  if (base.expert_ids == nullptr) {
    p = tile_params<Format, Tout>(base, f, tiles, tile);
    if (warp < p.units) Format::template load<kWide>(p, tile * kTileRows + g, warp, t, first);  // weights are ready
    wait_for_previous_kernel();
  } else {
    wait_for_previous_kernel();
    p = tile_params<Format, Tout>(base, f, tiles, tile);
    if (warp < p.units) Format::template load<kWide>(p, tile * kTileRows + g, warp, t, first);
  }
  for (; f < total; f += gridDim.x) {
    const bool has_next = f + gridDim.x < total;
    int64_t next_tile = 0;
    const Params next = has_next ? tile_params<Format, Tout>(base, f + gridDim.x, tiles, next_tile) : p;
    const int64_t row = tile * kTileRows + g, next_row = next_tile * kTileRows + g;
    float acc[NT][4] = {};
    for (int64_t u = warp; u < p.units; u += 2 * W) {
      const bool two = u + W < p.units;
      if (two) Format::template load<kWide>(p, row, u + W, t, second);
      Format::template product<NT>(GlobalX{p}, first, u, g, t, acc);
      if (u + 2 * W < p.units) Format::template load<kWide>(p, row, u + 2 * W, t, first);
      else if (has_next && warp < p.units) Format::template load<kWide>(next, next_row, warp, t, first);
      if (two) Format::template product<NT>(GlobalX{p}, second, u + W, g, t, acc);
    }
    if (!has_next) allow_next_kernel();
    write_out<NT, W, Tout>(p, acc, tile, warp, g, t, sums);
    if (has_next) __syncthreads();  // the sums are read before the next tile writes them
    p = next;
    tile = next_tile;
  }
}

// The compiler's own register budget: an explicit minimum of 1 block a SM made the k-quant
// kernels slower (181 registers against 132 without).
template <typename Format, int NT, int W, bool kWide, typename Tout>
__global__ void __launch_bounds__(W * 32) kernel(Params p) {
  kernel_body<Format, NT, W, kWide, Tout>(p);
}

// Two blocks of 8 warps a SM (at most 128 registers): twice the loads in flight where one block
// of a wider kernel fills the register file.
template <typename Format, int NT, bool kWide, typename Tout>
__global__ void __launch_bounds__(256, 2) kernel_two_blocks(Params p) {
  kernel_body<Format, NT, 8, kWide, Tout>(p);
}

template <typename Format, int NT, int W, typename Tout>
void launch_shape(const Params& p, unsigned pairs, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kTileRows)), pairs);
  if (Format::row_bytes(p.k) % 16 == 0)
    return launch_dependent(kernel<Format, NT, W, true, Tout>, grid, dim3(W * 32), 0, stream, p);
  launch_dependent(kernel<Format, NT, W, false, Tout>, grid, dim3(W * 32), 0, stream, p);
}

// Blocks of `kernel` that fit on the chip at once (asked once per kernel).
template <typename Kernel>
int64_t resident_blocks(Kernel kernel, int threads) {
  static const int64_t count = [&] {
    int per_sm = 0;
    STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    return static_cast<int64_t>(per_sm) * num_sms();
  }();
  return count;
}

// 8 warps, two blocks a SM, for 1-8 rows (1 x row a pair with experts); persistent: as many
// blocks as fit, each looping over the tiles of every pair.
template <typename Format, typename Tout, bool kWide>
void launch_two_blocks_aligned(Params p, unsigned pairs, bool persistent, cudaStream_t stream) {
  const auto kernel = kernel_two_blocks<Format, 1, kWide, Tout>;
  const int64_t tiles = ceil_div(p.n, kTileRows);
  dim3 grid(static_cast<unsigned>(tiles), pairs);
  if (persistent) {
    p.flat_pairs = pairs;
    grid = dim3(static_cast<unsigned>(std::min(tiles * pairs, resident_blocks(kernel, 256))));
  }
  launch_dependent(kernel, grid, dim3(256), 0, stream, p);
}

template <typename Format, typename Tout>
void launch_two_blocks(const Params& p, unsigned pairs, bool persistent, cudaStream_t stream) {
  if (Format::row_bytes(p.k) % 16 == 0)
    return launch_two_blocks_aligned<Format, Tout, true>(p, pairs, persistent, stream);
  launch_two_blocks_aligned<Format, Tout, false>(p, pairs, persistent, stream);
}

template <typename Format, int W, typename Tout>
void launch_rows(const Params& p, unsigned pairs, cudaStream_t stream) {
  if (p.rows <= 8) return launch_shape<Format, 1, W, Tout>(p, pairs, stream);
  if (p.rows <= 16) return launch_shape<Format, 2, W, Tout>(p, pairs, stream);
  launch_shape<Format, 4, W, Tout>(p, pairs, stream);
}

// Four values as bf16 in one 8-byte store.
__device__ __forceinline__ void store_bf16x4(bf16* at, const float (&v)[4]) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v[0], v[1]), hi = __floats2bfloat162_rn(v[2], v[3]);
  *reinterpret_cast<uint2*>(at) = uint2{*reinterpret_cast<const uint32_t*>(&lo), *reinterpret_cast<const uint32_t*>(&hi)};
}

// The weight rows widened to bf16 [N, K] for the kernels that read bf16 (prefill, grouped MoE):
// warp w of a block takes unit blockIdx.y * 8 + w of rows [16 blockIdx.x, + 16), lanes load as
// the GEMV's do and Format::widen(load, r, unit, t, row) writes lane t's values of rows g, g + 8.
template <typename Format>
__global__ void __launch_bounds__(256) widen_kernel(Params p, bf16* dst) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t u = static_cast<int64_t>(blockIdx.y) * 8 + threadIdx.x / 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kTileRows + g;
  if (u >= p.units) return;
  typename Format::Load l;
  Format::template load<true>(p, row, u, t, l);
#pragma unroll
  for (int r = 0; r < 2; ++r)
    if (row + 8 * r < p.n) Format::widen(l, r, u, t, dst + (row + 8 * r) * p.k);
}

template <typename Format>
void widen(const Params& p, bf16* dst, cudaStream_t stream) {
  if (p.n == 0 || p.units == 0) return;
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kTileRows)), static_cast<unsigned>(ceil_div(p.units, 8)));
  widen_kernel<Format><<<grid, 256, 0, stream>>>(p, dst);
  STRATA_CUDA_CHECK_LAUNCH();
}

// How a GEMV is spread: warps a block (8, 4 or 2); two_blocks: 8 warps in at most 128 registers
// (1-8 rows), persistent: with as many blocks as fit.
struct LaunchShape {
  int warps = 8;
  bool two_blocks = false, persistent = false;
};

// pairs: 1, or the (token, expert) pairs with p.expert_ids.
template <typename Format, typename Tout>
void launch(const Params& p, unsigned pairs, LaunchShape shape, cudaStream_t stream) {
  const int warps = shape.warps;
  if (shape.two_blocks && p.rows <= 8) return launch_two_blocks<Format, Tout>(p, pairs, shape.persistent, stream);
  if (warps == 4) return launch_rows<Format, 4, Tout>(p, pairs, stream);
  if (warps == 2) return launch_rows<Format, 2, Tout>(p, pairs, stream);
  launch_rows<Format, 8, Tout>(p, pairs, stream);
}

// launch<Format, Tout> for an out dtype of bf16 or f32.
template <typename Format>
void launch_for(DType out_dtype, const Params& p, unsigned pairs, LaunchShape shape, cudaStream_t stream) {
  if (out_dtype == DType::kF32) return launch<Format, float>(p, pairs, shape, stream);
  launch<Format, bf16>(p, pairs, shape, stream);
}

// 32 columns with short rows: 4 warps a block (FP8 gate|up 90 us against 119 at 8, H200); else 8.
inline int auto_warps(int64_t rows, int64_t units) { return rows > 16 && units <= 64 ? 4 : 8; }

inline bool aligned(const void* ptr, uintptr_t to) { return reinterpret_cast<uintptr_t>(ptr) % to == 0; }

}  // namespace strata::cuda::mma_gemv
