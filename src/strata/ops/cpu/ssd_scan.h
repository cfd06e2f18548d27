// Mamba-2 selective state space scan (SSD) on the CPU, f32, for one sequence segment.
// Per head h (group grp = h / (num_heads / n_groups), HF's repeat_interleave), state S [head_dim,
// state_size], token by token:  S = S*exp(dt*A) + (dt*B) ⊗ x;  y = S·C + D*x.
// The chunked form is HF Mamba2Mixer.torch_forward's SSD (intra-chunk quadratic term plus
// inter-chunk state passing) and equals the recurrent form up to f32 rounding.
#pragma once

#include <cstdint>

namespace strata::cpu {

struct SsdScanParams {
  // Row strides let x, B and C be column ranges of the conv output [L, conv_dim] and dt a column
  // range of the projection; 0 means the rows are packed.
  const float* x = nullptr;   // [num_tokens, num_heads, head_dim] f32, row stride x_row_stride
  const float* dt = nullptr;  // [num_tokens, num_heads] f32: softplus(dt + dt_bias), clamped
  const float* A = nullptr;   // [num_heads] f32: -exp(A_log)
  const float* B = nullptr;   // [num_tokens, n_groups, state_size] f32, row stride b_row_stride
  const float* C = nullptr;   // [num_tokens, n_groups, state_size] f32, row stride c_row_stride
  const float* D = nullptr;   // [num_heads] f32, or null for no skip term
  float* state = nullptr;     // [num_heads, head_dim, state_size] f32: initial state in, final out
  float* y = nullptr;         // [num_tokens, num_heads, head_dim] f32, packed; includes D*x
  // Optional, recurrent form only: state after each token, for rolling back a verify row.
  float* intermediate_states = nullptr;  // [num_tokens, num_heads, head_dim, state_size] f32
  int64_t num_tokens = 0;
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t n_groups = 0;
  int64_t state_size = 0;
  int64_t x_row_stride = 0;   // elements between tokens; 0 = num_heads * head_dim
  int64_t dt_row_stride = 0;  // 0 = num_heads
  int64_t b_row_stride = 0;   // 0 = n_groups * state_size
  int64_t c_row_stride = 0;   // 0 = n_groups * state_size
  int64_t chunk_size = 256;   // chunked form only: the model config's chunk_size
};

// Throws strata::Error naming the field when a size or pointer is unusable.
void validate(const SsdScanParams& p);

// Token by token (HF's single-token cache path); writes intermediate_states when it is set.
void ssd_scan_recurrent(const SsdScanParams& p);

// HF's chunked SSD; a short last chunk is computed at its own length. intermediate_states must
// be null.
void ssd_scan_chunked(const SsdScanParams& p);

}  // namespace strata::cpu
