// Block-quantized weights (FP8, Q8_0, the GGUF k-quants and 32-value types, in their device
// layouts) against more rows than the GEMVs take, on the tensor cores: out[M, N] = x[M, K] @ W^T
// with each weight tile widened to bf16 in shared memory (quant_mma_gemm.cuh), so a batched
// decode step reads the quantized bytes instead of a bf16 copy of the whole weight.
#pragma once

#include <cuda_runtime.h>

#include "strata/core/dtype.h"
#include "strata/ops/cuda/fp8_gemv.h"

namespace strata::cuda {

// Past this many rows the linear widens the weight to bf16 once for cuBLASLt instead. H200,
// gpu_moe_bench --k-quant (Q4_K, us, GEMM / widening + cuBLASLt): Llama-3.1-8B gate_up at 64 rows
// 103 / 179, at 128 195 / 168; down 60 / 110, 94 / 94; lm_head 376 / 779, 733 / 708. Past 64 rows
// every 64-row block widens its weight tiles again, and the widening's conversions bound the GEMM.
constexpr int64_t kQuantMmaGemmMaxRows = 64;

struct QuantGemmOptions {
  int k_splits = 0;   // blocks that split K (f32 partial sums in scratch, summed after); 0: by shape
  int tile_rows = 0;  // x rows a block: 64 (8 warps, two blocks a SM) or 128 (16 warps); 0: by M
};

// dtype FP8 (kF8_E4M3_B128), Q8_0 or a nibble type (nibble_quant_mma_gemv.h) in a layout the GPU
// keeps, K a multiple of 256, M >= 1 (the linear takes it to kQuantMmaGemmMaxRows), no gated
// input, 16-byte aligned x, weight rows aligned as the GEMVs need them, bf16 or f32 out.
bool quant_mma_gemm_supported(DType dtype, const QuantGemvArgs& args);
void quant_mma_gemm(DType dtype, const QuantGemvArgs& args, cudaStream_t stream, QuantGemmOptions options = {});

}  // namespace strata::cuda
