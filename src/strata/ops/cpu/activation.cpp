#include "strata/ops/activation.h"

#include <algorithm>
#include <cmath>

#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

inline float apply(float x, ops::Activation act) {
  switch (act) {
    case ops::Activation::kSilu: return x / (1.0f + std::exp(-x));
    case ops::Activation::kGeluTanh: {
      constexpr float kAlpha = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(kAlpha * (x + 0.044715f * x * x * x)));
    }
    case ops::Activation::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    case ops::Activation::kRelu2: {
      const float r = x > 0 ? x : 0;
      return r * r;
    }
    case ops::Activation::kClampedSwiglu: {
      const float g = std::min(x, ops::kClampedSwigluLimit);
      return g / (1.0f + std::exp(-ops::kClampedSwigluAlpha * g));
    }
    case ops::Activation::kTanh: return std::tanh(x);
  }
  return x;
}

// The factor the up projection contributes.
inline float up_factor(float u, ops::Activation act) {
  if (act != ops::Activation::kClampedSwiglu) return u;
  return std::clamp(u, -ops::kClampedSwigluLimit, ops::kClampedSwigluLimit) + 1.0f;
}

}  // namespace

void gated_activation(const Tensor& gate, const Tensor* up, const Tensor& out, ops::Activation act) {
  const float* g = gate.data_as<float>();
  const float* u = up != nullptr ? up->data_as<float>() : nullptr;
  float* o = out.data_as<float>();
  parallel_for(gate.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = apply(g[i], act) * (u != nullptr ? up_factor(u[i], act) : 1.0f);
  });
}

void gated_activation_halves(const Tensor& gate_up, const Tensor& out, ops::Activation act) {
  const int64_t cols = out.dim(1);
  const float* src = gate_up.data_as<float>();
  float* o = out.data_as<float>();
  parallel_for(out.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* row = src + (i / cols) * 2 * cols;
      o[i] = apply(row[i % cols], act) * up_factor(row[cols + i % cols], act);
    }
  });
}

}  // namespace strata::cpu
