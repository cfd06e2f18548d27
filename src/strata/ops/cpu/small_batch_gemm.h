// Linear for a handful of tokens: y[T, out] = x[T, in] W^T with W read in its stored dtype
// (f32, f16, bf16), never copied to f32. Sums are f32 in 8 lanes per (row, token), then a
// horizontal add: results differ from a serial f32 loop by rounding only.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cpu {

struct SmallBatchGemmParams {
  const float* x = nullptr;     // f32 [num_tokens, in_features]
  const void* w = nullptr;      // w_dtype [out_features, in_features]
  float* y = nullptr;           // f32 [num_tokens, out_features]
  DType w_dtype = DType::kF32;  // kF32, kF16 or kBF16
  int64_t num_tokens = 0, in_features = 0, out_features = 0;
};

// Any num_tokens >= 1 and in_features >= 1; threads split the output rows.
void small_batch_gemm(const SmallBatchGemmParams& p);

// linear's kernel for unquantized weights: per-row dots for 1 token, this kernel (f32/f16/bf16)
// for 2-16, widened tiles + sgemm above. It beats sgemm to ~32 tokens, but the two round apart
// and a bound of 32 splits the fp8-KV batch-invariance fixtures' prompts (docs/perf.md).
enum class LinearKernel { kDotRows, kSmallBatch, kTiledSgemm };
inline constexpr int64_t kSmallBatchMinTokens = 2;
inline constexpr int64_t kSmallBatchMaxTokens = 16;
inline LinearKernel linear_kernel_for(DType w_dtype, int64_t num_tokens) {
  const bool stored_float = w_dtype == DType::kF32 || w_dtype == DType::kF16 || w_dtype == DType::kBF16;
  if (num_tokens < kSmallBatchMinTokens) return LinearKernel::kDotRows;
  if (stored_float && num_tokens <= kSmallBatchMaxTokens) return LinearKernel::kSmallBatch;
  return LinearKernel::kTiledSgemm;
}

}  // namespace strata::cpu
