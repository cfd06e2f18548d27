#include "strata/model/layers/normed_input.h"

#include "strata/ops/rms_norm_linear.h"

namespace strata {

const Tensor& NormedInput::h() {
  if (norm_ != nullptr) {
    norm_->apply(x_, h_);
    norm_ = nullptr;
  }
  return h_;
}

void NormedInput::linear(const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (norm_ == nullptr) return ops::linear(h_, weight, bias, out);
  ops::rms_norm_linear({.x = x_, .norm_weight = norm_->weight, .norm = norm_->params, .h = h_, .weight = weight,
                        .bias = bias, .out = out});
  norm_ = nullptr;
}

}  // namespace strata
