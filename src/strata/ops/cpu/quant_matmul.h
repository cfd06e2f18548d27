// CPU matmul of f32 activations by a ggml block-quantized weight: y = x * W^T.
// The fast path (Q8_0, Q4_1, Q4_K, Q6_K) quantises each activation row once to int16
// blocks of 32 and takes integer dot products (AVX2); other dtypes dequantise each weight
// row to f32 and use FMA; many-token calls dequantise tiles of rows and use sgemm.
// Parallel over output rows.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cpu {

enum class QuantMatmulPath : uint8_t {
  kAuto,          // pick_quant_matmul_path(dtype, num_tokens)
  kInt16Dot,      // int16 activation blocks x weight quants (Q8_0, Q4_1, Q4_K, Q6_K only)
  kDequantFma,    // dequantise each weight row to f32, then f32 FMA dot products
  kDequantGemm,   // dequantise tiles of weight rows to f32, then sgemm (many tokens)
};

// Token count from which kAuto dequantises to f32 tiles and calls sgemm: below it the
// per-token integer dots are cheaper than a dequantisation pass (bench/quant_matmul_bench).
inline constexpr int64_t kQuantGemmMinTokens = 32;

struct QuantMatmulParams {
  const float* x = nullptr;  // f32 [num_tokens, in_features], rows contiguous
  const void* w = nullptr;   // w_dtype [out_features, in_features], ggml block rows
  float* y = nullptr;        // f32 [num_tokens, out_features]
  DType w_dtype = DType::kQ8_0;
  int64_t num_tokens = 0;
  int64_t in_features = 0;   // a multiple of the weight's block size
  int64_t out_features = 0;
  QuantMatmulPath path = QuantMatmulPath::kAuto;
};

// True when the int16 dot-product path covers `dtype`.
bool quant_matmul_has_int16_path(DType dtype);
// The path kAuto takes: kDequantGemm from kQuantGemmMinTokens tokens, else kInt16Dot where
// the dtype has it, else kDequantFma.
QuantMatmulPath pick_quant_matmul_path(DType dtype, int64_t num_tokens);

// y[t, o] = sum_i x[t, i] * W[o, i]. Throws strata::Error when the weight dtype cannot
// be dequantised or in_features is not a whole number of blocks.
void quant_matmul(const QuantMatmulParams& p);

}  // namespace strata::cpu
