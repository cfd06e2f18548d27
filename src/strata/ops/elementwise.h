// Small elementwise ops on activations: residual add, sigmoid gating, splitting the
// halves of packed heads, scaling and copies.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// x += y; both [N, D].
void add(const Tensor& x, const Tensor& y);
// x *= sigmoid(gate); same shapes.
void sigmoid_gate(const Tensor& x, const Tensor& gate);
// packed: [T, H, 2 * D] -> first: [T, H, D] (packed[..., :D]), second: [T, H, D] (packed[..., D:]).
void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second);
// first, second: [T, D] -> packed: [T, 2 * D] (first | second), the row-wise concatenation.
void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed);
// x *= factor.
void scale(const Tensor& x, float factor);
// x = min(max(x, lo), hi), NaN kept (DeepSeek-V4's swiglu_limit on gate and up); f32, or
// bf16 on CUDA (clamped in f32, the bound rounded to bf16).
void clamp(const Tensor& x, float lo, float hi);
// Rows of src picked by index: out[i] = src[indices[i]]; src [N, D], indices [M] i32, out [M, D].
void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
// Rows of out overwritten by index: out[indices[i]] = src[i]; src [M, D], indices [M] i32, out [N, D].
void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
// Copies and converts between activation dtypes (f32 <-> bf16) of the same shape.
void convert(const Tensor& src, const Tensor& dst);

enum class ElementwiseKind : uint8_t { kAdd, kSigmoidGate };

}  // namespace strata::ops

namespace strata::cpu {
void elementwise(const Tensor& x, const Tensor& y, ops::ElementwiseKind kind);
void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second);
void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed);
void scale(const Tensor& x, float factor);
void clamp(const Tensor& x, float lo, float hi);
void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
void convert(const Tensor& src, const Tensor& dst);
}  // namespace strata::cpu
namespace strata::cuda {
void elementwise(const Tensor& x, const Tensor& y, ops::ElementwiseKind kind);
void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second);
void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed);
void scale(const Tensor& x, float factor);
void clamp(const Tensor& x, float lo, float hi);
void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out);
void convert(const Tensor& src, const Tensor& dst);
}  // namespace strata::cuda
