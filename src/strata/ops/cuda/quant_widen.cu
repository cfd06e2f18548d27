#include "strata/ops/cuda/quant_widen.h"

#include "strata/core/error.h"
#include "strata/ops/cuda/fp8_convert.h"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#include "strata/ops/cuda/q8_0_mma_gemv.h"

namespace strata::cuda {

void widen_to_bf16(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  if (dtype == DType::kF8_E4M3_B128) return dequantize_fp8_b128_to_bf16(src, rows, k, dst);
  if (dtype == DType::kQ8_0) return dequantize_q8_0_to_bf16(src, rows, k, dst);
  dequantize_nibble_quant_to_bf16(dtype, src, rows, k, dst);
}

}  // namespace strata::cuda
