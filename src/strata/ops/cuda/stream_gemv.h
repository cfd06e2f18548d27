// The dense decode GEMV: out[M, N] = x[M, K] @ weight[N, K]^T for 1-4 rows, memory bound.
// One persistent block per SM streams its share of the weight through a ring of shared-memory
// stages (cp.async.bulk, mbarriers), so HBM never waits on a block launch; launched as a
// programmatic dependent, it starts fetching weights while the kernel before it still runs.
// Not picked by dense_linear_kernel: it measured 0.7-1.5 TB/s on the H200 (gpu_moe_bench
// "stream"), slower with more rows, so one block of 8 warps per SM is the limit, not DRAM.
#pragma once

#include <cuda_runtime.h>

#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

constexpr int64_t kStreamGemvMaxRows = 4;

// Dense args (offsets null, one "expert"), M <= 4, K a multiple of 8 with at least two weight
// rows' worth of stages beside x in shared memory, x and weight 16-byte aligned.
bool stream_gemv_supported(const GroupedGemmArgs& args);
void stream_gemv(const GroupedGemmArgs& args, cudaStream_t stream);

}  // namespace strata::cuda
