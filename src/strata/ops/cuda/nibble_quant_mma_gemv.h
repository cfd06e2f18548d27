// GGUF's nibble-coded weights against 1-32 decode rows on the tensor cores, in the device layout
// (weights/device_layout.h): out[M, N] = x[M, K] @ W^T. The k-quants Q4_K, Q5_K, Q6_K (256-value
// super-blocks of sub-block scales; k_quant_mma_gemv.cu) and the 32-value Q4_0, Q4_1, Q5_0, Q5_1
// (an f16 scale, for _1 an f16 minimum; legacy_quant_mma_gemv.cu).
#pragma once

#include <cuda_runtime.h>

#include "strata/core/dtype.h"
#include "strata/ops/cuda/fp8_gemv.h"

namespace strata::cuda {

constexpr int64_t kNibbleQuantMmaGemvMaxRows = 32;

// Warps splitting the 256-value units of each 16 weight rows; two blocks of 8 a SM (1-8 rows),
// persistent: that many blocks looping over the row tiles. kAuto picks by shape.
enum class NibbleMmaGemvVariant : uint8_t { kAuto, kWarps8, kWarps4, kWarps2, kWarps8TwoBlocks, kPersistent };

bool is_nibble_quant(DType dtype);

// dtype one of the seven in a layout the GPU keeps (keeps_device_layout), M <= 32, no gated
// input, 8-byte aligned x, 16-byte aligned weight, bf16 or f32 out.
bool nibble_quant_mma_gemv_supported(DType dtype, const QuantGemvArgs& args);
void nibble_quant_mma_gemv(DType dtype, const QuantGemvArgs& args, cudaStream_t stream,
                           NibbleMmaGemvVariant variant = NibbleMmaGemvVariant::kAuto);

// MoE experts [E, N, K] in pair order, the same conditions on K and alignment.
bool nibble_quant_mma_gemv_experts_supported(DType dtype, const QuantExpertArgs& args);
void nibble_quant_mma_gemv_experts(DType dtype, const QuantExpertArgs& args, cudaStream_t stream,
                                   NibbleMmaGemvVariant variant = NibbleMmaGemvVariant::kAuto);

// The device-layout rows [rows, k] as bf16 (each value computed in f32 as ggml does, rounded once).
void dequantize_nibble_quant_to_bf16(DType dtype, const void* src, int64_t rows, int64_t k, void* dst);

}  // namespace strata::cuda
