// CUDA linear layer: bf16 x and weight, f32 accumulation, bf16 or f32 out. Up to 2 rows the
// register-streaming GEMV (warp_gemv.h) reads the weights; else cuBLASLt. The choice is
// dense_linear_kernel, a fixed rule (dense_linear.h). FP8 and GGUF block weights: up to
// kQuantGemvMaxRows on the tensor-core GEMVs (fp8_mma_gemv.h, q8_0_mma_gemv.h,
// nibble_quant_mma_gemv.h; FP8 with K not a multiple of 256: up to 8 rows on the CUDA cores,
// fp8_gemv.h), up to kQuantMmaGemmMaxRows the quantized GEMM (quant_mma_gemm.h), more (or
// shapes those refuse) through a bf16 widening.
// f32 x with f32 weights: linear_f32.h.
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/cuda/dense_linear.h"
#include "strata/ops/cuda/fp8_gemv.h"
#include "strata/ops/cuda/fp8_mma_gemv.h"
#include "strata/ops/cuda/grouped_gemm.h"
#include "strata/ops/cuda/linear_f32.h"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#include "strata/ops/cuda/q8_0_mma_gemv.h"
#include "strata/ops/cuda/quant_mma_gemm.h"
#include "strata/ops/cuda/quant_widen.h"
#include "strata/ops/cuda/warp_gemv.h"
#include "strata/ops/activation.h"
#include "strata/ops/linear.h"
#include "strata/weights/device_layout.h"

namespace strata::cuda {

DenseKernel dense_linear_kernel(const GroupedGemmArgs& args) {
  return args.m <= kDenseStreamingMaxRows && warp_gemv_supported(args) ? DenseKernel::kWarpStreaming
                                                                       : DenseKernel::kCublasLt;
}

namespace {

void check_dtypes(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.dtype() != DType::kBF16) unsupported_dtype("linear x", x.dtype());
  if (weight.dtype() != DType::kBF16 && !keeps_device_layout(weight.dtype(), weight.dim(1)))
    unsupported_dtype("linear weight", weight.dtype());
  if (bias.defined() && bias.dtype() != DType::kBF16) unsupported_dtype("linear bias", bias.dtype());
  if (out.dtype() != DType::kBF16 && out.dtype() != DType::kF32) unsupported_dtype("linear out", out.dtype());
}

// x: the product's input, [M, K] (already act(gate) * up where gated).
void dense_product(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out, bool accumulate) {
  const GroupedGemmArgs args{.x = x.data(), .weight = weight.data(), .offsets = nullptr, .out = out.data(),
                             .out_dtype = out.dtype(), .num_experts = 1, .m = x.dim(0), .n = weight.dim(0),
                             .k = x.dim(1), .bias = bias.defined() ? bias.data() : nullptr};
  if (dense_linear_kernel(args) == DenseKernel::kWarpStreaming) {
    warp_gemv(args, current_stream(), WarpGemvVariant::kAuto, {.accumulate = accumulate});
    return;
  }
  gemm_bf16({.weight = weight.data(), .x = x.data(), .out = out.data(), .out_dtype = out.dtype(),
             .bias = args.bias, .m = args.m, .n = args.n, .k = args.k, .accumulate = accumulate},
            current_stream());
}

// The tensor-core GEMV for this weight type and shape, if one takes it.
bool quantized_gemv(DType dtype, const QuantGemvArgs& args) {
  if (dtype == DType::kF8_E4M3_B128 && fp8_mma_gemv_supported(args)) return fp8_mma_gemv(args, current_stream()), true;
  if (dtype == DType::kQ8_0 && q8_0_mma_gemv_supported(args)) return q8_0_mma_gemv(args, current_stream()), true;
  if (nibble_quant_mma_gemv_supported(dtype, args)) return nibble_quant_mma_gemv(dtype, args, current_stream()), true;
  return false;
}

// Block-quantized weight [N, K] (FP8, GGUF types): up to kQuantGemvMaxRows the GEMVs stream it,
// up to kQuantMmaGemmMaxRows the GEMM (or the GEMVs, to 32 rows, where it refuses the shape);
// more rows read its bf16 widening, made in scratch that only grows (captured graphs keep its
// pointer; the runner warms shapes first).
void quantized_product(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                       const ops::LinearOptions& options) {
  const bool fp8 = weight.dtype() == DType::kF8_E4M3_B128;
  QuantGemvArgs args{.x = x.data(), .weight = weight.data(), .bias = bias.defined() ? bias.data() : nullptr,
                     .out = out.data(), .out_dtype = out.dtype(), .m = x.dim(0), .n = weight.dim(0),
                     .k = weight.dim(1), .gated_input = options.gated_input, .accumulate = options.accumulate};
  if (fp8 && args.k % kFp8MmaGemvKMultiple != 0 && fp8_gemv_supported(args)) return fp8_gemv(args, current_stream());
  Tensor product_x = x;  // [M, K]: act(gate) * up where the input is gated
  if (options.gated_input) {
    cuda::gated_activation_halves(x, options.gated_scratch, *options.gated_input);
    product_x = options.gated_scratch;
    args.x = product_x.data();
    args.gated_input.reset();
  }
  const bool gemm = args.m <= kQuantMmaGemmMaxRows && quant_mma_gemm_supported(weight.dtype(), args);
  if (gemm && args.m > kQuantGemvMaxRows) return quant_mma_gemm(weight.dtype(), args, current_stream());
  if (quantized_gemv(weight.dtype(), args)) return;
  if (gemm) return quant_mma_gemm(weight.dtype(), args, current_stream());
  void* widened = scratch(ScratchUse::kWidenedWeight, weight.numel() * 2);
  widen_to_bf16(weight.dtype(), weight.data(), weight.dim(0), weight.dim(1), widened);
  const Tensor bf16_weight = Tensor::view(widened, DType::kBF16, weight.shape(), weight.device());
  dense_product(product_x, bf16_weight, bias, out, options.accumulate);
}

}  // namespace

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.dtype() == DType::kF32 && weight.dtype() == DType::kF32) return linear_f32(x, weight, bias, out, false);
  check_dtypes(x, weight, bias, out);
  if (weight.dtype() != DType::kBF16) return quantized_product(x, weight, bias, out, {});
  dense_product(x, weight, bias, out, false);
}

// At decode rows the GEMV stages act(gate) * up itself; else the activation runs into the
// scratch first. Both accumulate in the product's epilogue.
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const ops::LinearOptions& options) {
  if (x.dtype() == DType::kF32 && weight.dtype() == DType::kF32 && !options.gated_input)
    return linear_f32(x, weight, bias, out, options.accumulate);
  check_dtypes(x, weight, bias, out);
  if (weight.dtype() != DType::kBF16) return quantized_product(x, weight, bias, out, options);
  if (!options.gated_input) return dense_product(x, weight, bias, out, options.accumulate);
  const GroupedGemmArgs args{.x = x.data(), .weight = weight.data(), .offsets = nullptr, .out = out.data(),
                             .out_dtype = out.dtype(), .num_experts = 1, .m = x.dim(0), .n = weight.dim(0),
                             .k = weight.dim(1), .bias = bias.defined() ? bias.data() : nullptr};
  if (dense_linear_kernel(args) == DenseKernel::kWarpStreaming) {
    warp_gemv(args, current_stream(), WarpGemvVariant::kAuto,
              {.gated_input = options.gated_input, .accumulate = options.accumulate});
    return;
  }
  cuda::gated_activation_halves(x, options.gated_scratch, *options.gated_input);
  dense_product(options.gated_scratch, weight, bias, out, options.accumulate);
}

}  // namespace strata::cuda
