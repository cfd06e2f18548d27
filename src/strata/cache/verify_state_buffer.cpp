// VerifyStateBuffer: plain per-layer f32 arrays sized for the longest verify row.
#include "strata/cache/verify_state_buffer.h"

#include "strata/core/error.h"

namespace strata {

VerifyStateBuffer::VerifyStateBuffer(std::vector<SsmLayerShape> layers, int max_tokens)
    : layers_(std::move(layers)), max_tokens_(max_tokens) {
  if (max_tokens < 1) fail("VerifyStateBuffer: max_tokens is {}; it must be >= 1", max_tokens);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const SsmLayerShape& s = layers_[i];
    if (s.h_state_elems < 0 || s.conv_state_elems < 0) {
      fail("VerifyStateBuffer: layer {} has h_state_elems {} and conv_state_elems {}; sizes must "
           "be >= 0", i, s.h_state_elems, s.conv_state_elems);
    }
    h_.emplace_back(s.h_state_elems * max_tokens, 0.f);
    conv_.emplace_back(s.conv_state_elems * max_tokens, 0.f);
  }
}

const SsmLayerShape& VerifyStateBuffer::layer_shape(int layer) const {
  STRATA_CHECK(layer >= 0 && layer < num_layers());
  return layers_[layer];
}

float* VerifyStateBuffer::h_states(int layer) {
  STRATA_CHECK(layer >= 0 && layer < num_layers());
  return h_[layer].data();
}
const float* VerifyStateBuffer::h_states(int layer) const {
  STRATA_CHECK(layer >= 0 && layer < num_layers());
  return h_[layer].data();
}
float* VerifyStateBuffer::conv_states(int layer) {
  STRATA_CHECK(layer >= 0 && layer < num_layers());
  return conv_[layer].data();
}
const float* VerifyStateBuffer::conv_states(int layer) const {
  STRATA_CHECK(layer >= 0 && layer < num_layers());
  return conv_[layer].data();
}

void VerifyStateBuffer::set_num_tokens(int num_tokens) {
  STRATA_CHECK_MSG(num_tokens >= 0 && num_tokens <= max_tokens_,
                   "verify row of {} tokens in a buffer of {}", num_tokens, max_tokens_);
  num_tokens_ = num_tokens;
}

}  // namespace strata
