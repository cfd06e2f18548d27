#include "strata/ops/activation.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

Activation parse_activation(const std::string& name) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_tanh") return Activation::kGeluTanh;
  if (name == "gelu") return Activation::kGelu;
  if (name == "relu2") return Activation::kRelu2;
  if (name == "tanh") return Activation::kTanh;
  fail("activation '{}' is not supported; supported: silu, gelu_pytorch_tanh, gelu, relu2, tanh", name);
}

void gated_activation(const Tensor& gate, const Tensor& up, const Tensor& out, Activation act) {
  expect_shape(up, gate.shape(), "gated_activation up");
  expect_shape(out, gate.shape(), "gated_activation out");
  STRATA_DISPATCH(gate.device(), cpu::gated_activation(gate, &up, out, act),
                  cuda::gated_activation(gate, &up, out, act));
}

void activation(const Tensor& x, const Tensor& out, Activation act) {
  expect_shape(out, x.shape(), "activation out");
  STRATA_DISPATCH(x.device(), cpu::gated_activation(x, nullptr, out, act),
                  cuda::gated_activation(x, nullptr, out, act));
}

void gated_activation_halves(const Tensor& gate_up, const Tensor& out, Activation act) {
  expect_shape(gate_up, {out.dim(0), 2 * out.dim(1)}, "gated_activation_halves gate_up");
  STRATA_DISPATCH(gate_up.device(), cpu::gated_activation_halves(gate_up, out, act),
                  cuda::gated_activation_halves(gate_up, out, act));
}

}  // namespace strata::ops
