// Which kernel the CUDA linear runs for a dense product out[M, N] = x[M, K] @ weight[N, K]^T:
// at up to 8 rows the weights are streamed once by the register-streaming GEMV (memory bound;
// cuBLASLt's skinny tiles leave bandwidth unused), x staged in shared memory, so x must fit
// there (warp_gemv.h); else cuBLASLt. One fixed rule, tested.
#pragma once

#include <cstdint>

#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

enum class DenseKernel : uint8_t { kWarpStreaming, kCublasLt };


// args: offsets null, num_experts 1 (the dense form of GroupedGemmArgs).
DenseKernel dense_linear_kernel(const GroupedGemmArgs& args);

}  // namespace strata::cuda
