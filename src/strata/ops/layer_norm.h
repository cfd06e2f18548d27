// LayerNorm with weight and bias (vision towers): out = (x - mean) / sqrt(var + eps) * w + b per
// row, in f32. CPU only for now; the vision tower that uses it is built on the CPU backend.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// x, out: [T, D] f32 (out may alias x); weight, bias: [D] f32.
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);
}
