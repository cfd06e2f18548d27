// Register-streaming GEMV for dense linears at 1-8 rows (decode): each warp owns a few weight
// rows and streams them with 16-byte loads, several in flight per lane, against x staged in
// shared memory. Launched with programmatic dependent launch: the first weight loads are issued
// before the kernel waits for the one before it, so they overlap that kernel's tail.
#pragma once

#include <cuda_runtime.h>

#include <optional>

#include "strata/ops/activation.h"
#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {

// Weight rows per warp x 16-byte loads per row in flight per lane (x warps per block where
// named; else 8). kAuto picks by shape. The Unroll3 and Warps4 shapes are for expert pairs.
enum class WarpGemvVariant : uint8_t {
  kAuto, kRows1Unroll8, kRows2Unroll4, kRows4Unroll2, kRows2Unroll8,
  kRows2Unroll3, kRows4Unroll3, kRows2Unroll3Warps4, kRows1Unroll3Warps4, kRows1Unroll8Warps4
};

constexpr int64_t kWarpGemvMaxRows = 8;
constexpr int64_t kWarpGemvMaxXBytes = 96 * 1024;  // x[M, K] bf16 staged in shared memory

// Work the GEMV takes over from the kernels around it.
struct WarpGemvFusion {
  std::optional<ops::Activation> gated_input;  // x is [M, 2K] gate | up; the GEMV reads act(gate) * up
  bool accumulate = false;                     // out += x @ weight^T (+ bias)
};

// Dense form of GroupedGemmArgs (offsets null, one expert): M <= 8, K a multiple of 8,
// M * K * 2 <= 96 KB, x and weight 16-byte aligned, bf16 or f32 out, optional bf16 bias.
bool warp_gemv_supported(const GroupedGemmArgs& args);
void warp_gemv(const GroupedGemmArgs& args, cudaStream_t stream, WarpGemvVariant variant = WarpGemvVariant::kAuto,
               const WarpGemvFusion& fusion = {});

// One row per (token, expert) pair without grouping, for decode-sized MoE steps:
// out[p] = x[p / pairs_per_x] @ weights[expert_ids[p]]^T, or with gated_input the x row is
// [2K] gate | up and the product reads act(gate) * up.
struct WarpGemvExpertArgs {
  const void* x;              // [pairs / pairs_per_x, K] bf16, or [.., 2K] with gated_input
  const void* weights;        // [num_experts, N, K] bf16
  const int32_t* expert_ids;  // [pairs] on the device
  void* out;                  // [pairs, N] bf16 or f32
  DType out_dtype = DType::kBF16;
  int64_t num_pairs = 0, num_experts = 0, n = 0, k = 0, pairs_per_x = 1;
  std::optional<ops::Activation> gated_input;
  WarpGemvVariant variant = WarpGemvVariant::kAuto;  // the launch shape (a lab lever; kAuto in the engine)
};

bool warp_gemv_experts_supported(const WarpGemvExpertArgs& args);
void warp_gemv_experts(const WarpGemvExpertArgs& args, cudaStream_t stream);

}  // namespace strata::cuda
