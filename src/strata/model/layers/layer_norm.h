// A LayerNorm with weight and bias (BERT's post-norms and embedding norm; ModernBERT's have no
// bias, held as zeros), applied through ops::layer_norm (f32 on the CPU, bf16 or f32 on CUDA).
#pragma once

#include <string>

#include "strata/model/model_weights.h"
#include "strata/ops/layer_norm.h"

namespace strata {

struct LayerNorm {
  Tensor weight, bias;  // [dim] f32 each
  float eps = 1e-12f;

  bool defined() const { return weight.defined(); }

  // x, out: [N, dim] f32; out may alias x.
  void apply(const Tensor& x, const Tensor& out) const { ops::layer_norm(x, weight, bias, eps, out); }
};

// `name`.weight and `name`.bias (or the original BERT's `name`.gamma and `name`.beta) under `w`,
// widened to f32 on the model's device. Without `has_bias` only `name`.weight is read and the bias is zero.
LayerNorm load_layer_norm(const WeightScope& w, const std::string& name, int64_t dim, double eps,
                          bool has_bias = true);

}  // namespace strata
