// Grouped products of the MoE layer: out[rows of expert e] = x[rows of e] @ weight[e]^T, the
// rows of each expert given by offsets that stay on the device (no host sync; launches can be
// captured in a graph). Kernels: tensor cores for many rows per expert (prefill), and two
// weight-streaming kernels for a few rows per expert (decode). grouped_linear picks one; the
// bulk-copy kernel also serves dense linears at a few rows (offsets null, one "expert").
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata::cuda {

struct GroupedGemmArgs {
  const void* x;           // [M, K] bf16, rows grouped by expert
  const void* weight;      // [E, N, K] bf16, K contiguous
  const int32_t* offsets;  // [E + 1] i32 on the device: expert e owns rows [offsets[e], offsets[e + 1]);
                           // null (bulk kernel only): a dense linear, E == 1, all M rows

  void* out;               // [M, N] bf16 or f32; rows outside every expert's range are not written
  DType out_dtype = DType::kBF16;
  int64_t num_experts = 0, m = 0, n = 0, k = 0;
  int tile_rows = 0;  // tensor-core kernel: rows per tile, 32, 64 or 128; 0 picks by rows per expert
  const void* bias = nullptr;  // [N] bf16 added to every row, or null; dense bulk kernel only
  bool mma_sync_tiles = false;  // lab lever (gpu_moe_bench): the mma.sync kernel where wgmma takes the tile
};

// Tensor-core kernel (cp.async pipeline; wgmma for 64- and 128-row tiles, mma.sync for 32):
// K a multiple of 64, N of 8, x and weight 16-byte aligned.
bool grouped_gemm_supported(const GroupedGemmArgs& args);
void grouped_gemm(const GroupedGemmArgs& args, cudaStream_t stream);

// The tile height grouped_gemm uses for these args (tile_rows, or its pick by rows per expert).
int grouped_gemm_tile_rows(const GroupedGemmArgs& args);

// Weight-streaming kernel: each warp streams 4 weight rows of one expert once per tile of up
// to 8 rows of x. K a multiple of 8, x and weight 16-byte aligned. Any M, best for few rows.
bool grouped_gemv_supported(const GroupedGemmArgs& args);
void grouped_gemv(const GroupedGemmArgs& args, cudaStream_t stream);

// Bulk-copy kernel: each block has cp.async.bulk move ~32 KB of one expert's weight rows into
// shared memory and dots them with a tile of up to 8 rows of x. K a multiple of 8 and at most
// 16384, x and weight 16-byte aligned; dense (offsets null) takes M <= 8 and an optional bias.
bool bulk_gemv_supported(const GroupedGemmArgs& args);
void bulk_gemv(const GroupedGemmArgs& args, cudaStream_t stream);

enum class GroupedKernel : uint8_t { kTensorCores, kBulkStreaming, kStreaming, kNone };

// The kernel grouped_linear runs for these args: a streaming kernel (bulk-copy where it takes
// the shape) up to 1 row per expert on average or where tensor tiles do not take the shape,
// tensor cores otherwise; kNone: none takes it.
GroupedKernel grouped_kernel_for(const GroupedGemmArgs& args);

}  // namespace strata::cuda
