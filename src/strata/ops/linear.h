// Linear layer: out = x @ weight^T (+ bias). Weights keep their stored dtype (f32, f16,
// bf16, or a ggml quantized type on the CPU); the arithmetic is f32 (CPU) or bf16 with
// f32 accumulation (CUDA).
#pragma once

#include <optional>

#include "strata/core/tensor.h"
#include "strata/ops/activation.h"

namespace strata::ops {

// What a linear does around x @ weight^T + bias, so that the activation before an MLP's down
// projection and the block's residual add after it need no launches of their own.
struct LinearOptions {
  // x is [T, 2 * in] (gate | up halves) and the product reads act(gate) * up.
  std::optional<Activation> gated_input;
  Tensor gated_scratch;     // [T, in]: where a backend that cannot fuse puts act(gate) * up
  bool accumulate = false;  // out += the product; else out = the product
};

// x: [T, in]; weight: [out, in]; bias: [out] or undefined; out: [T, out].
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);
// As above with options; x is [T, 2 * in] with a gated input.
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const LinearOptions& options);

}  // namespace strata::ops

namespace strata::cpu {
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const ops::LinearOptions& options);
}
namespace strata::cuda {
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out);
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const ops::LinearOptions& options);
}
