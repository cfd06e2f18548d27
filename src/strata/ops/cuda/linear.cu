// CUDA linear layer: bf16 x and weight, f32 accumulation, bf16 or f32 out. A few rows go
// through the weight-streaming skinny kernel, more through cuBLASLt.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/cuda/skinny_gemm.h"
#include "strata/ops/linear.h"

namespace strata::cuda {

// Up to this many rows the weight-streaming kernel beats the library's GEMMs (decode).
constexpr int64_t kSkinnyMaxRows = 4;

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.dtype() != DType::kBF16) unsupported_dtype("linear x", x.dtype());
  if (weight.dtype() != DType::kBF16) unsupported_dtype("linear weight", weight.dtype());
  if (bias.defined() && bias.dtype() != DType::kBF16) unsupported_dtype("linear bias", bias.dtype());
  const SkinnyGemmArgs skinny{.x = x.data(), .weight = weight.data(), .offsets = nullptr, .num_groups = 1,
                              .out = out.data(), .out_dtype = out.dtype(),
                              .bias = bias.defined() ? bias.data() : nullptr, .m = x.dim(0),
                              .n = weight.dim(0), .k = x.dim(1)};
  if (x.dim(0) <= kSkinnyMaxRows && skinny_gemm_supported(skinny)) {
    skinny_gemm(skinny, current_stream());
    return;
  }
  gemm_bf16({.weight = weight.data(), .x = x.data(), .out = out.data(), .out_dtype = out.dtype(),
             .bias = bias.defined() ? bias.data() : nullptr, .m = x.dim(0), .n = weight.dim(0),
             .k = x.dim(1)},
            current_stream());
}

}  // namespace strata::cuda
