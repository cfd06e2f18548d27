// Gated delta rule (Qwen3-Next Gated DeltaNet) on the CPU, f32, for one sequence segment.
// Per value head h with state S [k_head_dim, v_head_dim], token by token:
//   S *= exp(g);  S += k ⊗ (beta * (v - kᵀS));  out = qᵀS * scale     (q, k l2-normalised)
// which is HF transformers' torch_recurrent_gated_delta_rule; the chunked form is the WY/UT
// form of torch_chunk_gated_delta_rule and gives the same values up to f32 rounding.
#pragma once

#include <cstdint>

namespace strata::cpu {

struct GatedDeltaRuleParams {
  // Token rows may be views into a wider buffer (the conv output [L, conv_dim]): a row stride of
  // 0 means rows are packed. Value head h reads key head h / (num_v_heads / num_k_heads), which
  // is HF's repeat_interleave of q and k, so unexpanded q and k can be passed directly.
  const float* q = nullptr;     // [num_tokens, num_k_heads, k_head_dim] f32, row stride q_row_stride
  const float* k = nullptr;     // [num_tokens, num_k_heads, k_head_dim] f32, row stride k_row_stride
  const float* v = nullptr;     // [num_tokens, num_v_heads, v_head_dim] f32, row stride v_row_stride
  const float* g = nullptr;     // [num_tokens, num_v_heads] f32 log decay: -exp(A_log)*softplus(a+dt_bias)
  const float* beta = nullptr;  // [num_tokens, num_v_heads] f32, sigmoid already applied
  float* state = nullptr;       // [num_v_heads, k_head_dim, v_head_dim] f32: initial state in, final out
  float* out = nullptr;         // [num_tokens, num_v_heads, v_head_dim] f32, packed
  // Optional, recurrent form only: state after each token, for rolling back a verify row.
  float* intermediate_states = nullptr;  // [num_tokens, num_v_heads, k_head_dim, v_head_dim] f32
  int64_t num_tokens = 0;
  int64_t num_v_heads = 0;
  int64_t num_k_heads = 0;  // 0 means num_v_heads (q and k already expanded)
  int64_t k_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t q_row_stride = 0;  // elements between tokens; 0 = num_k_heads * k_head_dim
  int64_t k_row_stride = 0;
  int64_t v_row_stride = 0;  // 0 = num_v_heads * v_head_dim
  // HF calls the kernels with use_qk_l2norm_in_kernel=True: x * rsqrt(sum(x^2) + 1e-6).
  bool l2norm_qk = true;
  int64_t chunk_size = 64;  // chunked form only; HF uses 64
};

// Throws strata::Error naming the field when a size or pointer is unusable.
void validate(const GatedDeltaRuleParams& p);

// Token by token; writes intermediate_states when it is set. Parallel over value heads.
void gated_delta_rule_recurrent(const GatedDeltaRuleParams& p);

// Chunks of chunk_size tokens in WY form; a short last chunk is computed at its own length.
// intermediate_states must be null (use the recurrent form for verify rows).
void gated_delta_rule_chunked(const GatedDeltaRuleParams& p);

}  // namespace strata::cpu
