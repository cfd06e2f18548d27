// Widening of stored element types to f32 for the CPU kernels, which compute in f32.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cpu {

// dst[0..n) = src[0..n) as f32. n must be a multiple of the block size for quantized types.
void widen_to_f32(const void* src, DType dtype, int64_t n, float* dst);

// f32 -> storage dtype (f32, f16, bf16).
void narrow_from_f32(const float* src, DType dtype, int64_t n, void* dst);

// Dot product of f32 x with n stored elements of w (f32, f16 or bf16).
float dot_f32(const float* x, const void* w, DType dtype, int64_t n);

// Decode's matvec step: out[r] = x . W[r] for r < num_rows (1..kDotRowsF32) consecutive rows
// of n stored elements (f32, f16 or bf16), each row_bytes long, starting at w. One pass
// reads x once for all rows and prefetches the rows that follow.
inline constexpr int kDotRowsF32 = 4;
void dot_rows_f32(const float* x, const void* w, DType dtype, int64_t row_bytes, int num_rows, int64_t n,
                  float* out);

}  // namespace strata::cpu
