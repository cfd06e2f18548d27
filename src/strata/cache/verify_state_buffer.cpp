// VerifyStateBuffer: per-layer f32 arrays sized for the longest verify row, in the backend's
// memory (state_memory.h).
#include "strata/cache/verify_state_buffer.h"

#include <utility>

#include "strata/cache/state_memory.h"
#include "strata/core/error.h"

namespace strata {

VerifyStateBuffer::VerifyStateBuffer(std::vector<SsmLayerShape> layers, int max_tokens, Backend* backend)
    : layers_(std::move(layers)), max_tokens_(max_tokens),
      device_(backend != nullptr ? backend->device() : Device{}) {
  if (max_tokens < 1) fail("VerifyStateBuffer: max_tokens is {}; it must be >= 1", max_tokens);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const SsmLayerShape& s = layers_[i];
    if (s.h_state_elems < 0 || s.conv_state_elems < 0) {
      fail("VerifyStateBuffer: layer {} has h_state_elems {} and conv_state_elems {}; sizes must "
           "be >= 0", i, s.h_state_elems, s.conv_state_elems);
    }
    h_.push_back(alloc_state(backend, DType::kF32, {max_tokens, s.h_state_elems}));
    conv_.push_back(alloc_state(backend, DType::kF32, {max_tokens, s.conv_state_elems}));
  }
}

void VerifyStateBuffer::check_layer(int layer) const {
  STRATA_CHECK_MSG(layer >= 0 && layer < num_layers(), "verify buffer layer {} of {}", layer, num_layers());
}

const SsmLayerShape& VerifyStateBuffer::layer_shape(int layer) const {
  check_layer(layer);
  return layers_[layer];
}

float* VerifyStateBuffer::h_states(int layer) {
  check_layer(layer);
  return h_[layer].data_as<float>();
}
const float* VerifyStateBuffer::h_states(int layer) const {
  check_layer(layer);
  return h_[layer].data_as<float>();
}
float* VerifyStateBuffer::conv_states(int layer) {
  check_layer(layer);
  return conv_[layer].data_as<float>();
}
const float* VerifyStateBuffer::conv_states(int layer) const {
  check_layer(layer);
  return conv_[layer].data_as<float>();
}
const Tensor& VerifyStateBuffer::h_state_rows(int layer) const {
  check_layer(layer);
  return h_[layer];
}
const Tensor& VerifyStateBuffer::conv_state_rows(int layer) const {
  check_layer(layer);
  return conv_[layer];
}

void VerifyStateBuffer::set_num_tokens(int num_tokens) {
  STRATA_CHECK_MSG(num_tokens >= 0 && num_tokens <= max_tokens_,
                   "verify row of {} tokens in a buffer of {}", num_tokens, max_tokens_);
  num_tokens_ = num_tokens;
}

}  // namespace strata
