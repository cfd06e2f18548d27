// GGUF Q8_0 weights (blocks of 32 int8 values and an f16 scale) against 1-32 decode rows on the
// tensor cores, in the device layout (weights/device_layout.h): out[M, N] = x[M, K] @ W^T.
#pragma once

#include <cuda_runtime.h>

#include "strata/ops/cuda/fp8_gemv.h"

namespace strata::cuda {

constexpr int64_t kQ8_0MmaGemvMaxRows = 32;

// M <= 32, K a multiple of 128, x without a gated input, 16-byte aligned x, 8-byte aligned
// weight, bf16 or f32 out.
bool q8_0_mma_gemv_supported(const QuantGemvArgs& args);
void q8_0_mma_gemv(const QuantGemvArgs& args, cudaStream_t stream);

// MoE experts in pair order: K a multiple of 128, 16-byte aligned x, 8-byte aligned weights.
bool q8_0_mma_gemv_experts_supported(const QuantExpertArgs& args);
void q8_0_mma_gemv_experts(const QuantExpertArgs& args, cudaStream_t stream);

// The device-layout Q8_0 rows [rows, k] as bf16 (exact: int8 times an f16 scale rounded once).
void dequantize_q8_0_to_bf16(const void* src, int64_t rows, int64_t k, void* dst);

}  // namespace strata::cuda
