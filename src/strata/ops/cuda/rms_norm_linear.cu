// RMSNorm then a linear: at the rows where the dense linear streams its weights through the
// register GEMV, the GEMV normalises x as it stages it (one launch, not two); else the norm
// kernel and the linear run as they would apart.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dense_linear.h"
#include "strata/ops/cuda/warp_gemv.h"
#include "strata/ops/rms_norm_linear.h"

namespace strata::cuda {
namespace {

bool fusable(const ops::NormedLinearArgs& a, const GroupedGemmArgs& gemm) {
  const DType norm_dtype = a.norm_weight.dtype();
  return a.x.dtype() == DType::kBF16 && a.h.dtype() == DType::kBF16 && a.weight.dtype() == DType::kBF16 &&
         (!a.bias.defined() || a.bias.dtype() == DType::kBF16) &&
         (norm_dtype == DType::kBF16 || norm_dtype == DType::kF32) && a.h.data() != a.x.data() &&
         reinterpret_cast<uintptr_t>(a.h.data()) % 16 == 0 && dense_linear_kernel(gemm) == DenseKernel::kWarpStreaming;
}

}  // namespace

void rms_norm_linear(const ops::NormedLinearArgs& a) {
  const GroupedGemmArgs gemm{.x = a.x.data(), .weight = a.weight.data(), .offsets = nullptr, .out = a.out.data(),
                             .out_dtype = a.out.dtype(), .num_experts = 1, .m = a.x.dim(0), .n = a.weight.dim(0),
                             .k = a.x.dim(1), .bias = a.bias.defined() ? a.bias.data() : nullptr};
  if (a.x.dim(0) == 0) return;
  if (!fusable(a, gemm)) {
    rms_norm(a.x, nullptr, a.norm_weight, a.h, a.norm);
    linear(a.h, a.weight, a.bias, a.out);
    return;
  }
  const WarpGemvNorm norm{.weight = a.norm_weight.data(), .f32_weight = a.norm_weight.dtype() == DType::kF32,
                          .eps = a.norm.eps, .weight_offset = a.norm.unit_offset ? 1.0f : 0.0f, .h = a.h.data()};
  warp_gemv(gemm, current_stream(), WarpGemvVariant::kAuto, {.norm = norm});
}

}  // namespace strata::cuda
