// Depthwise causal conv1d over one sequence segment with the sequence's carried conv state
// (the K-1 previous inputs), optionally fused with SiLU. ops/cpu/causal_conv1d.h gives the
// exact math and how our K-1 state relates to transformers' K columns. With state_slots it
// is a batched decode step instead: every token is its own sequence, whose state is one slot
// of a slot-major state array (one launch for all rows, at stable addresses for CUDA graphs).
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct CausalConv1dArgs {
  Tensor x;                    // [T, C] activations
  Tensor weight;               // [C, K] f32 (HF conv1d.weight squeezed)
  Tensor bias;                 // [C] f32 or undefined
  Tensor conv_state;           // [C, K-1] f32: this sequence's history in, updated out;
                               // with state_slots: [num_slots, C, K-1] f32, every slot
  Tensor out;                  // [T, C] like x; may be x
  Tensor intermediate_states;  // [T, C, K-1] f32: state after each token, or undefined
  bool silu = true;
  // Batched decode: token t's state is conv_state[state_slots[t]]; needs no intermediates.
  // Slots are in [0, num_slots) and distinct, except rows whose state is scratch (graph
  // padding rows share one). The CPU throws strata::Error on a slot out of range, the CUDA
  // kernel leaves that row untouched (it cannot report).
  Tensor state_slots;          // [T] i32 on x's device, or undefined (x is one sequence)
};

void causal_conv1d(const CausalConv1dArgs& args);

inline constexpr int64_t kCudaMaxConvKernel = 16;  // the CUDA kernel's history registers
// Refuses, when `layer` is built, a kernel size no backend kernel takes (at least 2; at most
// kCudaMaxConvKernel on CUDA): an Error naming the layer, so that no step meets it.
void check_causal_conv1d_supported(Device device, int64_t kernel_size, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void causal_conv1d(const ops::CausalConv1dArgs& args);
}
namespace strata::cuda {
void causal_conv1d(const ops::CausalConv1dArgs& args);
}
