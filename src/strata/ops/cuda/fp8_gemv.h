// GEMV over FP8 weights (kF8_E4M3_B128) for decode rows: out[M, N] = x[M, K] @ dequant(W)^T,
// M <= 8. Each warp streams whole 132-byte blocks of its weight rows (32 lanes x 4 codes, the
// scale broadcast), widens them in registers and accumulates in f32 against x in shared memory.
#pragma once

#include <cuda_runtime.h>

#include <optional>

#include "strata/core/dtype.h"
#include "strata/ops/activation.h"

namespace strata::cuda {

// Weight rows per warp x blocks per row in flight per lane. kAuto picks by shape.
enum class Fp8GemvVariant : uint8_t { kAuto, kRows2Unroll8, kRows1Unroll16, kRows4Unroll4 };

constexpr int64_t kFp8GemvMaxRows = 8;

struct QuantGemvArgs {
  const void* x = nullptr;       // [M, K] bf16, or [M, 2K] gate | up with gated_input
  const void* weight = nullptr;  // [N, K] fp8_b128
  const void* bias = nullptr;    // [N] bf16 or null
  void* out = nullptr;           // [M, N] bf16 or f32
  DType out_dtype = DType::kBF16;
  int64_t m = 0, n = 0, k = 0;
  std::optional<ops::Activation> gated_input;  // the product reads act(gate) * up
  bool accumulate = false;                     // out += the product
};

// MoE experts in pair order: out[p] = x[p / pairs_per_x] @ dequant(weights[expert_ids[p]])^T.
struct QuantExpertArgs {
  const void* x = nullptr;              // [pairs / pairs_per_x, K] bf16
  const void* weights = nullptr;        // [E, N, K] block-quantized (device layout)
  const int32_t* expert_ids = nullptr;  // [pairs]
  void* out = nullptr;                  // [pairs, N] bf16 or f32
  DType out_dtype = DType::kBF16;
  int64_t num_pairs = 0, n = 0, k = 0, pairs_per_x = 1;
};

// M <= 8, K a multiple of 128 (x staged in K tiles of up to 96 KB), 16-byte aligned x,
// 4-byte aligned weight, bf16 or f32 out.
bool fp8_gemv_supported(const QuantGemvArgs& args);
void fp8_gemv(const QuantGemvArgs& args, cudaStream_t stream, Fp8GemvVariant variant = Fp8GemvVariant::kAuto);

}  // namespace strata::cuda
