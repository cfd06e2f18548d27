// Per-token recurrent states captured while a speculative verify row runs, so the row can be
// rolled back to the state after any accepted prefix. Kernels write row i = state after the
// row's token i (gated_delta_rule_recurrent / ssd_scan_recurrent / causal_conv1d intermediates).
#pragma once

#include <vector>

#include "strata/cache/ssm_layer_shape.h"

namespace strata {

class VerifyStateBuffer {
 public:
  // Throws strata::Error when max_tokens < 1 or a layer size is negative.
  VerifyStateBuffer(std::vector<SsmLayerShape> layers, int max_tokens);

  int num_layers() const { return static_cast<int>(layers_.size()); }
  int max_tokens() const { return max_tokens_; }
  const SsmLayerShape& layer_shape(int layer) const;

  float* h_states(int layer);                   // [max_tokens, h_state_elems] f32
  const float* h_states(int layer) const;
  float* conv_states(int layer);                // [max_tokens, conv_state_elems] f32
  const float* conv_states(int layer) const;

  // Tokens of the row whose states the buffer now holds (set by the layer code after the row).
  void set_num_tokens(int num_tokens);
  int num_tokens() const { return num_tokens_; }

 private:
  std::vector<SsmLayerShape> layers_;
  int max_tokens_;
  int num_tokens_ = 0;
  std::vector<std::vector<float>> h_;     // per layer [max_tokens, h_state_elems] f32
  std::vector<std::vector<float>> conv_;  // per layer [max_tokens, conv_state_elems] f32
};

}  // namespace strata
