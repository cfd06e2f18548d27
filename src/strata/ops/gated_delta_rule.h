// Gated delta rule (Qwen3-Next Gated DeltaNet) over one sequence segment with its carried
// state, including the gating transformers computes around the kernel:
//   g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b); q, k l2-normalised; scale 1/sqrt(dk).
// ops/cpu/gated_delta_rule.h gives the recurrence; value head h reads key head h / (nv / nk).
// With state_slots it is a batched decode step: every token is its own sequence, whose state
// is one slot of a slot-major state array (one launch for all rows, graph-stable addresses).
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct GatedDeltaRuleArgs {
  Tensor qkv;                  // [T, 2 * nk * dk + nv * dv]: the conv output, q | k | v
  Tensor a;                    // [T, nv] decay input (in_proj_ba's a)
  Tensor b;                    // [T, nv] beta logits (in_proj_ba's b)
  Tensor A_log;                // [nv] f32
  Tensor dt_bias;              // [nv] f32
  Tensor state;                // [nv, dk, dv] f32: this sequence's state in, updated out;
                               // with state_slots: [num_slots, nv, dk, dv] f32, every slot
  Tensor out;                  // [T, nv, dv]
  Tensor intermediate_states;  // [T, nv, dk, dv] f32: state after each token, or undefined
  // Batched decode: token t's state is state[state_slots[t]]; needs no intermediates. Slots
  // are in [0, num_slots) and distinct, except rows whose state is scratch (graph padding rows
  // share one). The CPU throws strata::Error on a slot out of range,
  // the CUDA kernel leaves that row untouched (it cannot report).
  Tensor state_slots;          // [T] i32 on qkv's device, or undefined (qkv is one sequence)
};

// nk is derived: (qkv.dim(1) - nv * dv) / (2 * dk).
void gated_delta_rule(const GatedDeltaRuleArgs& args);

// The CUDA backend runs a segment token by token (short and verify rows, which may need
// per-token states) or in chunks of kGatedDeltaRuleChunkTokens in WY form (prefill rows).
enum class GatedDeltaRuleForm { kRecurrent, kChunked };
constexpr int64_t kGatedDeltaRuleChunkTokens = 64;

// Chunked when the segment has at least one full chunk, no intermediate_states are asked
// for, k_head_dim is 32, 64 or 128 and v_head_dim a multiple of 32; recurrent otherwise.
GatedDeltaRuleForm gated_delta_rule_cuda_form(int64_t num_tokens, int64_t k_head_dim,
                                              int64_t v_head_dim, bool intermediate_states);

// Key head sizes the CUDA recurrent kernel is compiled for.
inline constexpr int64_t kCudaGatedDeltaRuleKeyHeadDims[] = {32, 64, 128, 256};
// Refuses, when `layer` is built, a key head size `device` has no kernel for (an Error
// naming the layer and the supported sizes), so that no step meets it.
void check_gated_delta_rule_supported(Device device, int64_t k_head_dim, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void gated_delta_rule(const ops::GatedDeltaRuleArgs& args);
}
namespace strata::cuda {
void gated_delta_rule(const ops::GatedDeltaRuleArgs& args);
// A given form (benchmarks); kChunked throws strata::Error where gated_delta_rule_cuda_form
// would not pick it for a full chunk.
void gated_delta_rule(const ops::GatedDeltaRuleArgs& args, ops::GatedDeltaRuleForm form);
}
