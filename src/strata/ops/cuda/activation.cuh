// The activation functions of feed-forward layers as device code, shared by the activation
// kernels and the GEMV that reads act(gate) * up straight from a fused gate | up projection.
#pragma once

#include "strata/ops/activation.h"

namespace strata::cuda {

template <ops::Activation kAct>
__device__ __forceinline__ float apply_activation(float x) {
  if constexpr (kAct == ops::Activation::kSilu) {
    return x / (1.0f + expf(-x));
  } else if constexpr (kAct == ops::Activation::kGeluTanh) {
    constexpr float kAlpha = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(kAlpha * (x + 0.044715f * x * x * x)));
  } else if constexpr (kAct == ops::Activation::kGelu) {
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
  } else if constexpr (kAct == ops::Activation::kClampedSwiglu) {
    const float g = fminf(x, ops::kClampedSwigluLimit);
    return g / (1.0f + expf(-ops::kClampedSwigluAlpha * g));
  } else if constexpr (kAct == ops::Activation::kTanh) {
    return tanhf(x);
  } else {
    const float r = x > 0.0f ? x : 0.0f;
    return r * r;
  }
}

// The factor the up projection contributes.
template <ops::Activation kAct>
__device__ __forceinline__ float up_factor(float u) {
  if constexpr (kAct == ops::Activation::kClampedSwiglu) {
    return fminf(fmaxf(u, -ops::kClampedSwigluLimit), ops::kClampedSwigluLimit) + 1.0f;
  } else {
    return u;
  }
}

template <ops::Activation kAct>
__device__ __forceinline__ float gated_value(float gate, float up) {
  return apply_activation<kAct>(gate) * up_factor<kAct>(up);
}

// act(gate) * up for an activation known only at run time.
__device__ __forceinline__ float gated_value(ops::Activation act, float gate, float up) {
  switch (act) {
    case ops::Activation::kSilu: return gated_value<ops::Activation::kSilu>(gate, up);
    case ops::Activation::kGeluTanh: return gated_value<ops::Activation::kGeluTanh>(gate, up);
    case ops::Activation::kGelu: return gated_value<ops::Activation::kGelu>(gate, up);
    case ops::Activation::kRelu2: return gated_value<ops::Activation::kRelu2>(gate, up);
    case ops::Activation::kClampedSwiglu: return gated_value<ops::Activation::kClampedSwiglu>(gate, up);
    case ops::Activation::kTanh: return gated_value<ops::Activation::kTanh>(gate, up);
  }
  return 0.0f;
}

}  // namespace strata::cuda
