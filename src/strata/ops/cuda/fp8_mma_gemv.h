// FP8 weights (kF8_E4M3_B128) against 2-32 decode rows on the tensor cores: out[M, N] =
// x[M, K] @ dequant(W)^T. Each warp widens 16 weight rows x 16 columns of codes to bf16 in
// registers per mma.sync m16n8k16 step (the rows of x are its 8, 16 or 32 columns), sums each
// 128-column block apart and scales it by the row's block scale in f32.
#pragma once

#include <cuda_runtime.h>

#include "strata/ops/cuda/fp8_gemv.h"

namespace strata::cuda {

constexpr int64_t kFp8MmaGemvMaxRows = 32;
constexpr int64_t kFp8MmaGemvKMultiple = 256;  // rows of 33 K / 32 bytes stay 8-byte aligned

// Warps splitting the K blocks of each 16 weight rows. kAuto picks by shape.
enum class Fp8MmaGemvVariant : uint8_t { kAuto, kWarps8, kWarps4, kWarps2 };

// M <= 32, K a multiple of 256, x without a gated input (the caller applies act(gate) * up),
// 16-byte aligned x, 8-byte aligned weight rows (16 where K % 512 == 0), bf16 or f32 out.
bool fp8_mma_gemv_supported(const QuantGemvArgs& args);
void fp8_mma_gemv(const QuantGemvArgs& args, cudaStream_t stream,
                  Fp8MmaGemvVariant variant = Fp8MmaGemvVariant::kAuto);

// MoE experts in pair order (QuantExpertArgs, fp8_gemv.h).
bool fp8_mma_gemv_experts_supported(const QuantExpertArgs& args);
void fp8_mma_gemv_experts(const QuantExpertArgs& args, cudaStream_t stream);

}  // namespace strata::cuda
