// Block-quantized weights (FP8, Q8_0, the GGUF k-quants and 32-value types, in their device
// layouts) against more rows than the GEMVs take, on the tensor cores: out[M, N] = x[M, K] @ W^T
// with the GEMVs' register widening and x tiles shared by 128 weight rows in shared memory
// (quant_mma_gemm.cuh), so a batched decode step reads the quantized bytes once a row block.
#pragma once

#include <cuda_runtime.h>

#include "strata/core/dtype.h"
#include "strata/ops/cuda/fp8_gemv.h"

namespace strata::cuda {

// Up to this many rows the GEMVs read x where it lies (each 16 weight rows read all of it);
// past it the GEMM shares each x tile among 128 weight rows.
constexpr int64_t kQuantGemvMaxRows = 8;
// Past this many rows the linear widens the weight to bf16 once for cuBLASLt instead: every 64
// x rows read the weight again (from L2) and widen its codes in registers again. H100, Q4_K, us,
// GEMM / widening + cuBLASLt at 128 rows: 8B gate_up 254 / 215, down 155 / 114, qkv 68 / 51; at
// 64 rows 133 / 212, 67 / 113, 46 / 47.
constexpr int64_t kQuantMmaGemmMaxRows = 64;

struct QuantGemmOptions {
  int k_splits = 0;   // blocks that split K (f32 partial sums in scratch, summed after); 0: by shape
  int tile_rows = 0;  // x rows a block: 32 (two blocks a SM) or 64 (one); 0: by M
  // Weights through shared memory in cp.async stages ahead of the products (the dtypes of
  // quant_mma_gemm_stages_weights); the lab's until it is measured against the register loads.
  bool staged_weights = false;
};

// Whether the GEMM can stage dtype's weights through shared memory (Q4_K, Q5_K, Q8_0).
bool quant_mma_gemm_stages_weights(DType dtype);

// dtype FP8 (kF8_E4M3_B128), Q8_0 or a nibble type (nibble_quant_mma_gemv.h) in a layout the GPU
// keeps, K a multiple of 256, M >= 1 (the linear takes it to kQuantMmaGemmMaxRows), no gated
// input, 16-byte aligned x, weight rows aligned as the GEMVs need them, bf16 or f32 out.
bool quant_mma_gemm_supported(DType dtype, const QuantGemvArgs& args);
void quant_mma_gemm(DType dtype, const QuantGemvArgs& args, cudaStream_t stream, QuantGemmOptions options = {});

}  // namespace strata::cuda
