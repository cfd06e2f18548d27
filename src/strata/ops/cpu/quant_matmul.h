// CPU matmul of f32 activations by a ggml block-quantized weight: y = x * W^T.
// The fast path (Q8_0, Q4_1, Q4_K, Q6_K) quantises each activation row once to int8
// blocks of 32 and takes integer dot products (AVX2); other dtypes dequantise each weight
// row to f32 and use FMA. Parallel over output rows.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cpu {

enum class QuantMatmulPath : uint8_t {
  kAuto,         // int8 dot products where the weight dtype has them, else kDequantFma
  kDequantFma,   // dequantise each weight row to f32, then f32 FMA dot products
};

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

// True when the int8 dot-product path covers `dtype`.
bool quant_matmul_has_int8_path(DType dtype);

// y[t, o] = sum_i x[t, i] * W[o, i]. Throws strata::Error when the weight dtype cannot
// be dequantised or in_features is not a whole number of blocks.
void quant_matmul(const QuantMatmulParams& p);

}  // namespace strata::cpu
