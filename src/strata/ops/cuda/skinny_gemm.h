// Bandwidth-bound products of few rows with a large weight: out = x @ w^T for M <= 8 rows
// (decode), optionally per expert group (rows of expert e use weight e, offsets on the
// device, so no host sync and the launch can be captured in a graph).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cuda {

struct SkinnyGemmArgs {
  const void* x;          // [M, K] bf16
  const void* weight;     // [G, N, K] bf16 (G = 1 without groups)
  const int32_t* offsets; // [G + 1] rows of each group on the device, or null (one group of M)
  int64_t num_groups = 1;
  void* out;              // [M, N] bf16 or f32
  DType out_dtype = DType::kBF16;
  const void* bias = nullptr;  // [N] bf16 or null
  int64_t m = 0, n = 0, k = 0;
};

// Whether the kernel takes these sizes and pointers (K a multiple of 8, 16-byte aligned).
bool skinny_gemm_supported(const SkinnyGemmArgs& args);
void skinny_gemm(const SkinnyGemmArgs& args, cudaStream_t stream);

}  // namespace strata::cuda
