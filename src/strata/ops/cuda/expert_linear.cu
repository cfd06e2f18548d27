// CUDA expert_linear: the register-streaming GEMV with one block row per pair, which reads
// its expert id on the device (warp_gemv.h), so the step needs no grouping kernels.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/warp_gemv.h"
#include "strata/ops/expert_linear.h"

namespace strata::cuda {

void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ops::ExpertLinearOptions& options) {
  if (x.dtype() != DType::kBF16 || weights.dtype() != DType::kBF16) unsupported_dtype("expert_linear", weights.dtype());
  const WarpGemvExpertArgs args{.x = x.data(), .weights = weights.data(), .expert_ids = topk_ids.data_as<int32_t>(),
                                .out = out.data(), .out_dtype = out.dtype(), .num_pairs = topk_ids.numel(),
                                .num_experts = weights.dim(0), .n = weights.dim(1), .k = weights.dim(2),
                                .pairs_per_x = topk_ids.numel() / x.dim(0), .gated_input = options.gated_input};
  STRATA_CHECK_MSG(warp_gemv_experts_supported(args), "expert_linear: weights {} x {}", weights.shape().str(),
                   x.shape().str());
  warp_gemv_experts(args, current_stream());
}

}  // namespace strata::cuda
