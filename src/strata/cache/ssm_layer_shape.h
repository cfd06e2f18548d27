// Per-slot sizes of one recurrent layer's state, shared by the SSM state pool and the verify
// buffer. Elements are f32 values as the kernels see them.
#pragma once

#include <cstdint>

namespace strata {

struct SsmLayerShape {
  // GDN: num_v_heads * k_head_dim * v_head_dim; Mamba-2: num_heads * head_dim * state_size.
  int64_t h_state_elems = 0;
  // conv channels * (kernel_size - 1): the K-1 inputs the causal conv still needs.
  int64_t conv_state_elems = 0;
};

}  // namespace strata
