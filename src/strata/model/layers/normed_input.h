// What a block hands its mixer or feed-forward network: the residual stream x and the norm
// ahead of the sublayer. The sublayer's first projection takes x and the norm together
// (ops::rms_norm_linear: one launch on the GPU at decode rows); later readers get h.
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
  // out = norm(x) @ weight^T (+ bias); the first reader also stores h.
  void linear(const Tensor& weight, const Tensor& bias, const Tensor& out);

 private:
  explicit NormedInput(const Tensor& h) : x_(h), h_(h), norm_(nullptr) {}

  Tensor x_, h_;
  const RmsNorm* norm_;  // null once h holds norm(x)
};

}  // namespace strata
