// Dequantisation of ggml block types (and f16/bf16/f32) to f32, bit-exact with ggml's
// reference dequantize_row_* (each value is computed with the same float operations in the
// same order, without fused multiply-adds). Used by loaders and by the matmul fallback.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata {

// True for the dtypes dequantize_* accept: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0,
// q4_K, q5_K, q6_K, q8_K, f8_e4m3 and Strata's fp8_b128.
bool can_dequantize(DType dtype);

// src: `num_blocks` consecutive blocks of `dtype` (elements for plain types), starting
// `first_block` blocks into `src`; dst: f32 [num_blocks * dtype_block_elems(dtype)].
void dequantize_blocks(DType dtype, const void* src, int64_t first_block, int64_t num_blocks,
                       float* dst);

// One row: src holds `num_elems` values of `dtype` (a multiple of the block size);
// dst: f32 [num_elems].
void dequantize_row(DType dtype, const void* src, float* dst, int64_t num_elems);

}  // namespace strata
