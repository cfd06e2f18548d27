// Which kernel the CUDA linear runs for a dense product out[M, N] = x[M, K] @ weight[N, K]^T:
// at a few rows the weights are streamed once by the bulk-copy GEMV (memory bound, cuBLASLt's
// skinny tiles left bandwidth unused at N = 4096-6144), else cuBLASLt. Every warp of that kernel
// reads all of x, so x is kept small enough to stay in L1. One fixed rule, tested.
#pragma once

#include <cstdint>

#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

enum class DenseKernel : uint8_t { kBulkStreaming, kCublasLt };

constexpr int64_t kDenseStreamingMaxRows = 4;
constexpr int64_t kDenseStreamingMaxXBytes = 16 * 1024;  // M * K * 2: Llama-3 K = 4096 up to 2 rows

// args: offsets null, num_experts 1 (the dense form of GroupedGemmArgs).
DenseKernel dense_linear_kernel(const GroupedGemmArgs& args);

}  // namespace strata::cuda
