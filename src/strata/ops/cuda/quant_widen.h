// Block-quantized weights (FP8 and the GGUF types in their device layouts) widened to bf16 on
// the device, for the kernels that read bf16 only (steps past the GEMVs' 32 rows, grouped MoE).
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cuda {

// rows x k values of dtype at src as bf16 at dst, on the current stream.
void widen_to_bf16(DType dtype, const void* src, int64_t rows, int64_t k, void* dst);

}  // namespace strata::cuda
