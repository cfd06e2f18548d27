// The grouped tensor-core kernel on Hopper's warpgroup MMA (sm_90a), for tiles of 64 and 128
// rows; grouped_gemm runs it there unless args.mma_sync_tiles asks for the mma.sync kernel.
#pragma once

#include <cuda_runtime.h>

#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

bool grouped_gemm_wgmma_takes(int tile_rows);
// Same contract as grouped_gemm (grouped_gemm_supported args) at a tile height it takes.
void grouped_gemm_wgmma(const GroupedGemmArgs& args, int tile_rows, cudaStream_t stream);

}  // namespace strata::cuda
