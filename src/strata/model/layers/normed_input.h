// What a block hands its mixer or feed-forward network: the residual stream x and the norm
// ahead of the sublayer, applied once when a projection or reader first needs h. (A GEMV that
// normalised x itself measured slower on the GPU: docs/perf.md, 2026-12-06.)
#pragma once

#include "strata/model/layers/norm.h"

namespace strata {

class NormedInput {
 public:
  // x, h: [T, hidden]; h receives norm(x). The norm outlives this object.
  NormedInput(const Tensor& x, const RmsNorm& norm, const Tensor& h) : x_(x), h_(h), norm_(&norm) {}
  // An input that is normalised already (or takes no norm).
  static NormedInput normalized(const Tensor& h) { return NormedInput(h); }

  int64_t rows() const { return x_.dim(0); }
  // norm(x), computed here unless a projection already stored it.
  const Tensor& h();
  // out = norm(x) @ weight^T (+ bias).
  void linear(const Tensor& weight, const Tensor& bias, const Tensor& out);

 private:
  explicit NormedInput(const Tensor& h) : x_(h), h_(h), norm_(nullptr) {}

  Tensor x_, h_;
  const RmsNorm* norm_;  // null once h holds norm(x)
};

}  // namespace strata
