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

// Weight rows per warp x 16-byte loads per row in flight per lane. kAuto picks by shape.
enum class WarpGemvVariant : uint8_t { kAuto, kRows1Unroll8, kRows2Unroll4, kRows4Unroll2, kRows2Unroll8 };

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

}  // namespace strata::cuda
