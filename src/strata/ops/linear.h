// Linear layer: out = x @ weight^T (+ bias). Weights keep their stored dtype (f32, f16,
// bf16, or a ggml quantized type on the CPU); the arithmetic is f32 (CPU) or bf16 with
// f32 accumulation (CUDA).
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// x: [T, in]; weight: [out, in]; bias: [out] or undefined; out: [T, out].
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);
}
namespace strata::cuda {
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);
}
