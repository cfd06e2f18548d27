#include "strata/ops/logit_bias.h"

namespace strata::cpu {

void add_logit_bias(const Tensor& logits, const Tensor& targets, const Tensor& biases) {
  const int64_t num_rows = logits.dim(0), vocab = logits.dim(1);
  const int32_t* t = targets.data_as<const int32_t>();
  const float* b = biases.data_as<const float>();
  float* l = logits.data_as<float>();
  for (int64_t k = 0; k < biases.dim(0); ++k) {
    const int64_t row = t[2 * k], token = t[2 * k + 1];
    if (row >= 0 && row < num_rows && token >= 0 && token < vocab) l[row * vocab + token] += b[k];
  }
}

}  // namespace strata::cpu
