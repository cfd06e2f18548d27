// f32 x times f32 weight on the CUDA cores, in f32: the few small linears a model keeps in full
// precision (DeepSeek-V4's hyper-connection mixes read their normed streams this way, as
// transformers computes them). One warp per output element; not for large weights.
#pragma once

#include "strata/core/tensor.h"

namespace strata::cuda {

// x: [M, K] f32; weight: [N, K] f32; bias: [N] f32 or undefined; out: [M, N] f32, = or += (accumulate).
void linear_f32(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out, bool accumulate);

}  // namespace strata::cuda
