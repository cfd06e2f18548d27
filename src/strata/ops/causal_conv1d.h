// Depthwise causal conv1d over one sequence segment with the sequence's carried conv state
// (the K-1 previous inputs), optionally fused with SiLU. ops/cpu/causal_conv1d.h gives the
// exact math and how our K-1 state relates to transformers' K columns.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

struct CausalConv1dArgs {
  Tensor x;                    // [T, C] activations
  Tensor weight;               // [C, K] f32 (HF conv1d.weight squeezed)
  Tensor bias;                 // [C] f32 or undefined
  Tensor conv_state;           // [C, K-1] f32: this sequence's history in, updated out
  Tensor out;                  // [T, C] like x; may be x
  Tensor intermediate_states;  // [T, C, K-1] f32: state after each token, or undefined
  bool silu = true;
};

void causal_conv1d(const CausalConv1dArgs& args);

}  // namespace strata::ops

namespace strata::cpu {
void causal_conv1d(const ops::CausalConv1dArgs& args);
}
namespace strata::cuda {
void causal_conv1d(const ops::CausalConv1dArgs& args);
}
