// Activations of feed-forward layers: the gated form act(gate) * up (SwiGLU, GeGLU) and
// the plain form act(x) (relu² of Nemotron-H).
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// kClampedSwiglu is gpt-oss's gated unit: gate clamped above at 7, gate * sigmoid(1.702 gate),
// times (up clamped to [-7, 7]) + 1.
// kTanh is BERT's classifier pooler (tanh(dense(x)) on [CLS]).
enum class Activation : uint8_t { kSilu, kGeluTanh, kGelu, kRelu2, kClampedSwiglu, kTanh };
inline constexpr float kClampedSwigluAlpha = 1.702f;
inline constexpr float kClampedSwigluLimit = 7.0f;

// Parses HF `hidden_act` names: silu/swish, gelu_pytorch_tanh, gelu, relu2, tanh.
Activation parse_activation(const std::string& name);

// gate, up, out: [T, I]; out = act(gate) * up. out may alias gate.
void gated_activation(const Tensor& gate, const Tensor& up, const Tensor& out, Activation act);
// x, out: [T, I]; out = act(x). out may alias x.
void activation(const Tensor& x, const Tensor& out, Activation act);
// out = act(gate) * up from a fused projection. gate_up: [T, 2 * I] (gate | up); out: [T, I].
void gated_activation_halves(const Tensor& gate_up, const Tensor& out, Activation act);

}  // namespace strata::ops

namespace strata::cpu {
void gated_activation(const Tensor& gate, const Tensor* up, const Tensor& out, ops::Activation act);
void gated_activation_halves(const Tensor& gate_up, const Tensor& out, ops::Activation act);
}
namespace strata::cuda {
void gated_activation(const Tensor& gate, const Tensor* up, const Tensor& out, ops::Activation act);
void gated_activation_halves(const Tensor& gate_up, const Tensor& out, ops::Activation act);
}
