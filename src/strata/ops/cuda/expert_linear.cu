// CUDA expert_linear: the register-streaming GEMV with one block row per pair, which reads
// its expert id on the device (warp_gemv.h), so the step needs no grouping kernels. Quantized
// experts (FP8, Q8_0, GGUF k-quants and Q4_0 / Q4_1 / Q5_0 / Q5_1): the tensor-core GEMVs with one block row per pair (mma_gemv.cuh).
#include "strata/ops/activation.h"
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8_mma_gemv.h"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#include "strata/ops/cuda/q8_0_mma_gemv.h"
#include "strata/ops/cuda/warp_gemv.h"
#include "strata/ops/expert_linear.h"

namespace strata::cuda {
namespace {

// A gated input runs its activation first, into scratch that only grows (graphs keep its pointer).
void quantized_expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                       const ops::ExpertLinearOptions& options) {
  Tensor product_x = x;  // [rows, in]
  if (options.gated_input) {
    const Shape shape{x.dim(0), x.dim(1) / 2};
    void* gated = scratch(ScratchUse::kGatedExpertInput, dtype_bytes(DType::kBF16, shape.numel()));
    product_x = Tensor::view(gated, DType::kBF16, shape, x.device());
    cuda::gated_activation_halves(x, product_x, *options.gated_input);
  }
  const QuantExpertArgs args{.x = product_x.data(), .weights = weights.data(),
                              .expert_ids = topk_ids.data_as<int32_t>(), .out = out.data(),
                              .out_dtype = out.dtype(), .num_pairs = topk_ids.numel(), .n = weights.dim(1),
                              .k = weights.dim(2), .pairs_per_x = topk_ids.numel() / x.dim(0)};
  const DType dtype = weights.dtype();
  if (dtype == DType::kF8_E4M3_B128 && fp8_mma_gemv_experts_supported(args)) return fp8_mma_gemv_experts(args, current_stream());
  if (dtype == DType::kQ8_0 && q8_0_mma_gemv_experts_supported(args)) return q8_0_mma_gemv_experts(args, current_stream());
  STRATA_CHECK_MSG(nibble_quant_mma_gemv_experts_supported(dtype, args), "expert_linear: {} weights {} x {}",
                   dtype_name(dtype), weights.shape().str(), x.shape().str());
  nibble_quant_mma_gemv_experts(dtype, args, current_stream());
}

}  // namespace

void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ops::ExpertLinearOptions& options) {
  if (x.dtype() == DType::kBF16 && weights.dtype() != DType::kBF16)
    return quantized_expert_linear(x, weights, topk_ids, out, options);
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
