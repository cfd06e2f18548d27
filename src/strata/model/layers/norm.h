// A normalisation weight with its parameters, applied through ops::rms_norm.
#pragma once

#include "strata/model/forward_context.h"
#include "strata/ops/rms_norm.h"

namespace strata {

struct RmsNorm {
  Tensor weight;  // [dim] stored dtype
  ops::RmsNormParams params;

  bool defined() const { return weight.defined(); }
  // x, out: [N, dim]; out may alias x.
  void apply(const Tensor& x, const Tensor& out) const { ops::rms_norm(x, weight, out, params); }
  // residual += x; out = norm(residual).
  void add_apply(const Tensor& residual, const Tensor& x, const Tensor& out) const {
    ops::add_rms_norm(residual, x, weight, out, params);
  }
};

}  // namespace strata
