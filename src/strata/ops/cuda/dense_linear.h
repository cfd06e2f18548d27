// Which kernel the CUDA linear runs for a dense product out[M, N] = x[M, K] @ weight[N, K]^T:
// at 1-2 rows the weights are streamed by the register-streaming GEMV (warp_gemv.h), whose
// first loads start before the kernel ahead of it ends; from 3 rows cuBLASLt, which held
// 4.1-4.4 TB/s on the large Llama-3 shapes where the GEMV fell to 1.5-3 (docs/perf.md, lab).
#pragma once

#include <cstdint>

#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

enum class DenseKernel : uint8_t { kWarpStreaming, kCublasLt };

constexpr int64_t kDenseStreamingMaxRows = 2;


// args: offsets null, num_experts 1 (the dense form of GroupedGemmArgs).
DenseKernel dense_linear_kernel(const GroupedGemmArgs& args);

}  // namespace strata::cuda
