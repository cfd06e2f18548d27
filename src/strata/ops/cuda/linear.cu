// CUDA linear layer: bf16 x and weight, f32 accumulation, bf16 or f32 out, through cuBLASLt
// at every row count: measured on an H200 (docs/perf.md), a SIMT skinny kernel streamed
// weights at ~2 TB/s for N <= 14336 against cuBLASLt's ~3.5 TB/s at one row.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/linear.h"

namespace strata::cuda {

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.dtype() != DType::kBF16) unsupported_dtype("linear x", x.dtype());
  if (weight.dtype() != DType::kBF16) unsupported_dtype("linear weight", weight.dtype());
  if (bias.defined() && bias.dtype() != DType::kBF16) unsupported_dtype("linear bias", bias.dtype());
  gemm_bf16({.weight = weight.data(), .x = x.data(), .out = out.data(), .out_dtype = out.dtype(),
             .bias = bias.defined() ? bias.data() : nullptr, .m = x.dim(0), .n = weight.dim(0),
             .k = x.dim(1)},
            current_stream());
}

}  // namespace strata::cuda
