// Block b of W warps owns weight rows [16b, 16b + 16); warp w takes 128-column blocks w, w + W,
// ...; the warps' sums meet in shared memory last. x is read where it lies (it stays in L1 while
// the weights stream past it). Lane (g, t) = (lane / 4, lane % 4) loads codes 16t..16t+15 of each
// 64-column half of a block for rows g and g + 8 (one 16-byte load each) and the same columns of
// x row g; mma step s of the half takes codes 4s..4s+3 of them: the k order is permuted alike.
#include "strata/ops/cuda/fp8_mma_gemv.h"

#include <cuda_fp8.h>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/weights/quant_blocks.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kTileRows = 16;                      // weight rows per block: the mma's m
constexpr float kUnscale = 5.192296858534828e33f;  // 2^112, see fp8x2_to_bf16x2_scaled

struct Params {
  const bf16* x;          // [M, K]; with experts [pairs / pairs_per_x, K], one row a pair
  const uint8_t* weight;  // [N, K] codes + [K / 128] scales a row (fp8.cuh); with experts [E, N, ...]
  const bf16* bias;       // [N] or null
  void* out;              // [M, N]; with experts [pairs, N]
  int64_t n, k, blocks;
  int rows;
  bool accumulate;
  const int32_t* expert_ids = nullptr;  // [pairs]: block row y multiplies pair y by its expert
  int64_t pairs_per_x = 1;
};

// Two e4m3 codes as bf16x2 of their values times 2^-112. Exact: every code widens to a normal
// f16 or zero, and f16's bits shifted into bf16's fields keep sign and mantissa (exponent bias
// 15 read as 127).
__device__ __forceinline__ uint32_t fp8x2_to_bf16x2_scaled(uint32_t codes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes & 0xffffu), __NV_E4M3);
  const uint32_t bits = static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
  return (bits & 0x80008000u) | ((bits >> 3) & 0x0fff0fffu);
}

// d += A (16 x 16, rows g / g + 8) * B (16 x 8, column g), f32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint2 b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}

// A 128-column block of rows g and g + 8 as lane t holds it: codes 16t..16t+15 of each half
// and the rows' scales (times 2^112); rows past N read as zero.
struct BlockLoad {
  uint4 lo[2], hi[2];
  float scale_lo, scale_hi;
};

// 16 codes at `at`: one 16-byte load where rows are 16-byte aligned, else two 8-byte loads.
template <bool kWide>
__device__ __forceinline__ uint4 load_codes(const uint8_t* at) {
  if constexpr (kWide) return __ldcs(reinterpret_cast<const uint4*>(at));
  const uint2 a = __ldcs(reinterpret_cast<const uint2*>(at)), b = __ldcs(reinterpret_cast<const uint2*>(at + 8));
  return uint4{a.x, a.y, b.x, b.y};
}

template <bool kWide>
__device__ __forceinline__ void load_block(const Params& p, int64_t row, int64_t b, int t, BlockLoad& l) {
  const bool lo_valid = row < p.n, hi_valid = row + 8 < p.n;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t col = b * kFp8Block + 64 * h + 16 * t;
    l.lo[h] = lo_valid ? load_codes<kWide>(p.weight + fp8_code_offset(row, col, p.k)) : uint4{};
    l.hi[h] = hi_valid ? load_codes<kWide>(p.weight + fp8_code_offset(row + 8, col, p.k)) : uint4{};
  }
  l.scale_lo = lo_valid ? __ldcs(reinterpret_cast<const float*>(p.weight + fp8_scale_offset(row, b, p.k))) * kUnscale
                        : 0.f;
  l.scale_hi =
      hi_valid ? __ldcs(reinterpret_cast<const float*>(p.weight + fp8_scale_offset(row + 8, b, p.k))) * kUnscale : 0.f;
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// acc += block b's product, summed apart in f32 and scaled per weight row. x rows past M are
// zeros that are never read.
template <int NT>
__device__ __forceinline__ void block_product(const Params& p, const BlockLoad& l, int64_t b, int g, int t,
                                              float (&acc)[NT][4]) {
  float part[NT][4] = {};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint4 xv[NT][2];  // x row nt * 8 + g, columns 16t..16t+15 of the half
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int token = nt * 8 + g;
      const uint4* x = reinterpret_cast<const uint4*>(p.x + token * p.k + b * kFp8Block + 64 * h + 16 * t);
      xv[nt][0] = token < p.rows ? __ldg(x) : uint4{};
      xv[nt][1] = token < p.rows ? __ldg(x + 1) : uint4{};
    }
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t lo = word(l.lo[h], s), hi = word(l.hi[h], s);
      const uint32_t a[4] = {fp8x2_to_bf16x2_scaled(lo), fp8x2_to_bf16x2_scaled(hi), fp8x2_to_bf16x2_scaled(lo >> 16),
                             fp8x2_to_bf16x2_scaled(hi >> 16)};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const uint4& xs = xv[nt][s / 2];
        mma_bf16(part[nt], a, s % 2 == 0 ? uint2{xs.x, xs.y} : uint2{xs.z, xs.w});
      }
    }
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    acc[nt][0] += part[nt][0] * l.scale_lo;
    acc[nt][1] += part[nt][1] * l.scale_lo;
    acc[nt][2] += part[nt][2] * l.scale_hi;
    acc[nt][3] += part[nt][3] * l.scale_hi;
  }
}

// The warps' sums [W][16][8 * NT] into out rows < M.
template <int NT, int W, typename Tout>
__device__ __forceinline__ void write_out(const Params& p, const float (&acc)[NT][4], int warp, int g, int t,
                                          float* sums) {
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
    const int64_t out_row = static_cast<int64_t>(blockIdx.x) * kTileRows + r;
    if (token >= p.rows || out_row >= p.n) continue;
    float v = 0.f;
    for (int w = 0; w < W; ++w) v += sums[(w * kTileRows + r) * kCols + token];
    if (p.bias != nullptr) v += __bfloat162float(p.bias[out_row]);
    Tout* dst = static_cast<Tout*>(p.out) + token * p.n + out_row;
    if (p.accumulate) v += to_f32(*dst);
    *dst = from_f32<Tout>(v);
  }
}

// Pair blockIdx.y's expert weights and x row (its expert id is written by routing).
__device__ __forceinline__ void select_pair(Params& p) {
  const int64_t pair = blockIdx.y;
  p.weight += p.expert_ids[pair] * p.n * fp8_row_bytes(p.k);
  p.x += pair / p.pairs_per_x * p.k;
}

template <int NT, int W, bool kWide, typename Tout>
__global__ void __launch_bounds__(W * 32) fp8_mma_gemv_kernel(Params p) {
  __shared__ float sums[W * kTileRows * 8 * NT];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kTileRows + g;
  float acc[NT][4] = {};
  BlockLoad first, second;
  if (p.expert_ids == nullptr) {
    if (warp < p.blocks) load_block<kWide>(p, row, warp, t, first);  // weights do not depend on the previous kernel
    wait_for_previous_kernel();
  } else {
    wait_for_previous_kernel();
    select_pair(p);
    p.out = static_cast<Tout*>(p.out) + static_cast<int64_t>(blockIdx.y) * p.n;
    if (warp < p.blocks) load_block<kWide>(p, row, warp, t, first);
  }
  for (int64_t b = warp; b < p.blocks; b += 2 * W) {
    const bool two = b + W < p.blocks;
    if (two) load_block<kWide>(p, row, b + W, t, second);
    block_product<NT>(p, first, b, g, t, acc);
    if (b + 2 * W < p.blocks) load_block<kWide>(p, row, b + 2 * W, t, first);
    if (two) block_product<NT>(p, second, b + W, g, t, acc);
  }
  allow_next_kernel();
  write_out<NT, W, Tout>(p, acc, warp, g, t, sums);
}

template <int NT, int W, typename Tout>
void launch(const Params& p, unsigned pairs, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kTileRows)), pairs);
  if (fp8_row_bytes(p.k) % 16 == 0)
    return launch_dependent(fp8_mma_gemv_kernel<NT, W, true, Tout>, grid, dim3(W * 32), 0, stream, p);
  launch_dependent(fp8_mma_gemv_kernel<NT, W, false, Tout>, grid, dim3(W * 32), 0, stream, p);
}

template <int W, typename Tout>
void launch_rows(const Params& p, unsigned pairs, cudaStream_t stream) {
  if (p.rows <= 8) return launch<1, W, Tout>(p, pairs, stream);
  if (p.rows <= 16) return launch<2, W, Tout>(p, pairs, stream);
  launch<4, W, Tout>(p, pairs, stream);
}

template <typename Tout>
void launch_variant(const Params& p, unsigned pairs, Fp8MmaGemvVariant variant, cudaStream_t stream) {
  switch (variant) {
    case Fp8MmaGemvVariant::kWarps8: return launch_rows<8, Tout>(p, pairs, stream);
    case Fp8MmaGemvVariant::kWarps4: return launch_rows<4, Tout>(p, pairs, stream);
    case Fp8MmaGemvVariant::kWarps2: return launch_rows<2, Tout>(p, pairs, stream);
    case Fp8MmaGemvVariant::kAuto: break;
  }
  STRATA_CHECK(false);
}

bool aligned(const void* p, uintptr_t to) { return reinterpret_cast<uintptr_t>(p) % to == 0; }

// K a multiple of 256 keeps every row 8-byte aligned (33 K / 32 bytes), of 512 16-byte aligned.
bool weight_aligned(const void* weight, int64_t k) {
  return k > 0 && k % kFp8MmaGemvKMultiple == 0 && aligned(weight, fp8_row_bytes(k) % 16 == 0 ? 16 : 8);
}

}  // namespace

bool fp8_mma_gemv_supported(const Fp8GemvArgs& args) {
  return args.m >= 1 && args.m <= kFp8MmaGemvMaxRows && weight_aligned(args.weight, args.k) && !args.gated_input &&
         aligned(args.x, 16) && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void fp8_mma_gemv(const Fp8GemvArgs& args, cudaStream_t stream, Fp8MmaGemvVariant variant) {
  if (args.n == 0) return;
  STRATA_CHECK(fp8_mma_gemv_supported(args));
  const Params params{.x = static_cast<const bf16*>(args.x), .weight = static_cast<const uint8_t*>(args.weight),
                      .bias = static_cast<const bf16*>(args.bias), .out = args.out, .n = args.n, .k = args.k,
                      .blocks = args.k / kFp8Block, .rows = static_cast<int>(args.m), .accumulate = args.accumulate};
  // 32 columns with short rows: 4 warps a block (gate|up 90 us against 119 at 8, H200); else 8.
  if (variant == Fp8MmaGemvVariant::kAuto)
    variant = args.m > 16 && params.blocks <= 64 ? Fp8MmaGemvVariant::kWarps4 : Fp8MmaGemvVariant::kWarps8;
  if (args.out_dtype == DType::kF32) return launch_variant<float>(params, 1, variant, stream);
  launch_variant<bf16>(params, 1, variant, stream);
}

bool fp8_mma_gemv_experts_supported(const Fp8MmaExpertArgs& args) {
  return weight_aligned(args.weights, args.k) && aligned(args.x, 16) && args.pairs_per_x >= 1 &&
         args.num_pairs <= 65535 && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void fp8_mma_gemv_experts(const Fp8MmaExpertArgs& args, cudaStream_t stream) {
  if (args.num_pairs == 0 || args.n == 0) return;
  STRATA_CHECK(fp8_mma_gemv_experts_supported(args));
  const Params params{.x = static_cast<const bf16*>(args.x), .weight = static_cast<const uint8_t*>(args.weights),
                      .bias = nullptr, .out = args.out, .n = args.n, .k = args.k, .blocks = args.k / kFp8Block,
                      .rows = 1, .accumulate = false, .expert_ids = args.expert_ids, .pairs_per_x = args.pairs_per_x};
  const auto pairs = static_cast<unsigned>(args.num_pairs);
  if (args.out_dtype == DType::kF32) return launch_variant<float>(params, pairs, Fp8MmaGemvVariant::kWarps8, stream);
  launch_variant<bf16>(params, pairs, Fp8MmaGemvVariant::kWarps8, stream);
}

}  // namespace strata::cuda
