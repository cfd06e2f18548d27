#include "strata/model/layers/normed_input.h"

#include "strata/ops/linear.h"

namespace strata {

const Tensor& NormedInput::h() {
  if (norm_ != nullptr) {
    norm_->apply(x_, h_);
    norm_ = nullptr;
  }
  return h_;
}

void NormedInput::linear(const Tensor& weight, const Tensor& bias, const Tensor& out) {
  ops::linear(h(), weight, bias, out);
}

}  // namespace strata
