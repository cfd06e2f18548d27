// Per-token recurrent states captured while a speculative verify row runs, so the row can be
// rolled back to the state after any accepted prefix. Kernels write row i = state after the
// row's token i (gated_delta_rule_recurrent / ssd_scan_recurrent / causal_conv1d intermediates).
// Lives where the SSM state pool lives: host memory, or device memory of a GPU backend.
#pragma once

#include <vector>

#include "strata/backend/backend.h"
#include "strata/cache/ssm_layer_shape.h"

namespace strata {

class VerifyStateBuffer {
 public:
  // backend: where the buffer lives (null: host memory). Throws strata::Error when
  // max_tokens < 1 or a layer size is negative.
  VerifyStateBuffer(std::vector<SsmLayerShape> layers, int max_tokens, Backend* backend = nullptr);

  int num_layers() const { return static_cast<int>(layers_.size()); }
  int max_tokens() const { return max_tokens_; }
  const SsmLayerShape& layer_shape(int layer) const;
  Device device() const { return device_; }

  // Pointers in the buffer's memory (device memory on a GPU).
  float* h_states(int layer);                   // [max_tokens, h_state_elems] f32
  const float* h_states(int layer) const;
  float* conv_states(int layer);                // [max_tokens, conv_state_elems] f32
  const float* conv_states(int layer) const;
  // The same arrays as tensors that carry their device.
  const Tensor& h_state_rows(int layer) const;     // [max_tokens, h_state_elems] f32
  const Tensor& conv_state_rows(int layer) const;  // [max_tokens, conv_state_elems] f32

  // Tokens of the row whose states the buffer now holds (set by the layer code after the row).
  void set_num_tokens(int num_tokens);
  int num_tokens() const { return num_tokens_; }

 private:
  void check_layer(int layer) const;

  std::vector<SsmLayerShape> layers_;
  int max_tokens_;
  int num_tokens_ = 0;
  Device device_;
  std::vector<Tensor> h_;     // per layer [max_tokens, h_state_elems] f32
  std::vector<Tensor> conv_;  // per layer [max_tokens, conv_state_elems] f32
};

}  // namespace strata
