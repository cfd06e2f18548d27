// Depthwise causal conv1d over one sequence segment, with the sequence's conv state carried
// between segments (prefill chunks, decode steps, verify rows are all the same call).
// out[t][c] = act(bias[c] + Σ_j weight[c][j] * in[t - (K-1) + j][c]) where in[] is the
// conv_state history followed by x. HF keeps K columns of state (torch_causal_conv1d_update);
// the oldest never reaches an output, so we keep the K-1 that do: ours == HF's [:, 1:].
#pragma once

#include <cstdint>

namespace strata::cpu {

struct CausalConv1dParams {
  const float* x = nullptr;       // [num_tokens, channels] f32, row stride x_row_stride
  const float* weight = nullptr;  // [channels, kernel_size] f32: HF conv1d.weight squeezed
  const float* bias = nullptr;    // [channels] f32, or null
  float* conv_state = nullptr;    // [channels, kernel_size - 1] f32, oldest input first: the
                                  // previous inputs in (zeros for a fresh sequence), the last out
  float* out = nullptr;           // [num_tokens, channels] f32, packed; may be x when x is packed
  // Optional: conv_state after each token, for rolling back a verify row.
  float* intermediate_conv_states = nullptr;  // [num_tokens, channels, kernel_size - 1] f32
  int64_t num_tokens = 0;
  int64_t channels = 0;
  int64_t kernel_size = 0;
  int64_t x_row_stride = 0;  // elements between tokens; 0 = channels
  bool silu = true;          // fuse the SiLU that every HF recurrent layer applies after the conv
};

// Throws strata::Error naming the field when a size or pointer is unusable.
void validate(const CausalConv1dParams& p);

// Parallel over channel blocks; each token's input is read before its output is written.
void causal_conv1d(const CausalConv1dParams& p);

}  // namespace strata::cpu
