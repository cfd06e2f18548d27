// The one cuBLASLt handle and workspace of the process, and a cache of matmul plans
// (descriptors, layouts and the heuristic's algorithm) per (m, n, k, output dtype, bias,
// alignment), so a decode step reuses its plans instead of asking the heuristic again.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cuda {

struct GemmArgs {
  const void* weight;  // [n, k] bf16, row-major
  const void* x;       // [m, k] bf16, row-major
  void* out;           // [m, n] bf16 or f32, row-major
  DType out_dtype = DType::kBF16;
  const void* bias = nullptr;  // [n] bf16, or null
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  // Time the heuristic's candidates on first use of a shape; off where shapes vary every
  // call (per-expert GEMMs), so tuning would never pay back.
  bool autotune = true;
  bool accumulate = false;  // out += the product (beta = 1; a block's residual add)
};

// out = x @ weight^T (+ bias), or out += with `accumulate`: bf16 operands, f32 accumulation, on `stream`. The bias is
// fused into the cuBLASLt epilogue when the library offers one for the shape, else added
// by a small kernel.
void gemm_bf16(const GemmArgs& args, cudaStream_t stream);

// Plans cached so far (for tests and logs).
int64_t gemm_plan_count();

}  // namespace strata::cuda
