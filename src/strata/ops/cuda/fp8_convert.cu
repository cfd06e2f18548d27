// One warp per 128-value block, four values per lane: the block's scale comes from a warp-wide
// max, and each lane writes one 32-bit word of e4m3 codes.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/fp8_convert.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void quantize_kernel(const __nv_bfloat16* src, int64_t num_blocks, int64_t k, uint8_t* dst) {
  const int lane = threadIdx.x % 32;
  for (int64_t b = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32; b < num_blocks;
       b += static_cast<int64_t>(gridDim.x) * kThreads / 32) {
    const __nv_bfloat16* x = src + b * kFp8Block + 4 * lane;
    float v[4], amax = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = __bfloat162float(x[j]);
      amax = fmaxf(amax, fabsf(v[j]));
    }
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float d = amax / 448.f;
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) word |= static_cast<uint32_t>(d > 0.f ? float_to_fp8(v[j] / d) : 0) << (8 * j);
    const int64_t row = b / (k / kFp8Block), block = b % (k / kFp8Block);
    *reinterpret_cast<uint32_t*>(dst + fp8_code_offset(row, block * kFp8Block + 4 * lane, k)) = word;
    if (lane == 0) *reinterpret_cast<float*>(dst + fp8_scale_offset(row, block, k)) = d;
  }
}

__global__ void dequantize_kernel(const uint8_t* src, int64_t num_words, int64_t k, __nv_bfloat16* dst) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < num_words;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t row = i / (k / 4), col = i % (k / 4) * 4;
    const float4 q = fp8x4_to_float4(*reinterpret_cast<const uint32_t*>(src + fp8_code_offset(row, col, k)));
    const float d = *reinterpret_cast<const float*>(src + fp8_scale_offset(row, col / kFp8Block, k));
    __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(dst + i * 4);
    out[0] = __floats2bfloat162_rn(q.x * d, q.y * d);
    out[1] = __floats2bfloat162_rn(q.z * d, q.w * d);
  }
}

}  // namespace

void quantize_bf16_to_fp8_b128(const void* src, int64_t rows, int64_t k, void* dst) {
  STRATA_CHECK(k % kFp8Block == 0);
  const int64_t num_blocks = rows * k / kFp8Block;
  if (num_blocks == 0) return;
  quantize_kernel<<<grid_for(num_blocks * 32, kThreads), kThreads, 0, current_stream()>>>(
      static_cast<const __nv_bfloat16*>(src), num_blocks, k, static_cast<uint8_t*>(dst));
  STRATA_CUDA_CHECK_LAUNCH();
}

void dequantize_fp8_b128_to_bf16(const void* src, int64_t rows, int64_t k, void* dst) {
  STRATA_CHECK(k % kFp8Block == 0);
  const int64_t num_words = rows * k / 4;
  if (num_words == 0) return;
  dequantize_kernel<<<grid_for(num_words, kThreads), kThreads, 0, current_stream()>>>(
      static_cast<const uint8_t*>(src), num_words, k, static_cast<__nv_bfloat16*>(dst));
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
