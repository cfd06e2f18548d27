// Which kernel the CUDA linear runs for a dense product out[M, N] = x[M, K] @ weight[N, K]^T:
// up to 4 rows the persistent streaming GEMV (memory bound; cuBLASLt's skinny tiles left
// bandwidth unused at N = 4096-6144 and it cannot start before the previous kernel ends),
// else cuBLASLt. One fixed rule, tested.
#pragma once

#include <cstdint>

#include "strata/ops/cuda/grouped_gemm.h"
#include "strata/ops/cuda/stream_gemv.h"

namespace strata::cuda {

enum class DenseKernel : uint8_t { kStreamGemv, kCublasLt };


// args: offsets null, num_experts 1 (the dense form of GroupedGemmArgs).
DenseKernel dense_linear_kernel(const GroupedGemmArgs& args);

}  // namespace strata::cuda
