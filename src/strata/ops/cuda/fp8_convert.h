// FP8 weight conversions on the current CUDA stream: bf16 rows quantized to Strata's FP8
// blocks (bit for bit what quantize_row_fp8_b128 writes on the CPU), and FP8 blocks widened
// to bf16 for the tensor-core GEMM of prefill-sized products.
#pragma once

#include <cstdint>

namespace strata::cuda {

// src: bf16 [rows, k]; dst: fp8_b128 [rows, k]; k % 128 == 0.
void quantize_bf16_to_fp8_b128(const void* src, int64_t rows, int64_t k, void* dst);
// src: fp8_b128 [rows, k]; dst: bf16 [rows, k] (value * scale rounded to nearest even).
void dequantize_fp8_b128_to_bf16(const void* src, int64_t rows, int64_t k, void* dst);

}  // namespace strata::cuda
