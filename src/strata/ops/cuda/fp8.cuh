// FP8 e4m3 on the device: four values of a 32-bit word widened to f32 (exactly, through f16),
// and one f32 narrowed with the CPU's rounding (nearest even, saturating to +-448).
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "strata/weights/quant_blocks.h"

namespace strata::cuda {

__device__ __forceinline__ float4 fp8x4_to_float4(uint32_t v) {
  const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(v & 0xffffu), __NV_E4M3);
  const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(v >> 16), __NV_E4M3);
  const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
  return make_float4(a.x, a.y, b.x, b.y);
}

__device__ __forceinline__ uint8_t float_to_fp8(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

// kF8_E4M3_B128 in device memory (the CUDA backend's host copies convert, weights/fp8.h): each
// row holds its k codes, then its k / 128 f32 scales, so codes are contiguous for wide loads and
// a row keeps the host row's size (row slices still work).
__host__ __device__ __forceinline__ int64_t fp8_row_bytes(int64_t k) {
  return k / kFp8Block * static_cast<int64_t>(sizeof(BlockF8B128));
}
__device__ __forceinline__ int64_t fp8_code_offset(int64_t row, int64_t col, int64_t k) {
  return row * fp8_row_bytes(k) + col;
}
__device__ __forceinline__ int64_t fp8_scale_offset(int64_t row, int64_t block, int64_t k) {
  return row * fp8_row_bytes(k) + k + 4 * block;
}

}  // namespace strata::cuda
