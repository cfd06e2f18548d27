// LayerNorm with weight and bias (vision towers, BERT): out = (x - mean) / sqrt(var + eps) * w + b
// per row, in f32 arithmetic.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// x, out: [T, D] f32, or bf16 on CUDA (out may alias x); weight, bias: [D] f32.
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);
}
namespace strata::cuda {
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);
}
