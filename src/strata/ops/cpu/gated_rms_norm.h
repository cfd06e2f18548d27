// Gated RMS norms of the recurrent layers, f32, row by row:
//   kNormThenGate (Qwen3NextRMSNormGated): out = weight * rmsnorm(x) * act(z)
//   kGateThenNorm (MambaRMSNormGated / Zamba2RMSNormGated, HF's norm_before_gate=False):
//                 out = weight * rmsnorm_per_group(x * act(z))
// act: silu, or sigmoid (Qwen4-Exp's output_gate_type).
// rmsnorm(v) = v * rsqrt(mean(v^2) + eps) over each group of group_size elements.
#pragma once

#include <cstdint>

namespace strata::cpu {

enum class GateOrder : uint8_t { kNormThenGate, kGateThenNorm };
enum class GateActivation : uint8_t { kSilu, kSigmoid };

struct GatedRmsNormParams {
  const float* x = nullptr;       // [num_rows, hidden_size] f32
  const float* z = nullptr;       // [num_rows, hidden_size] f32, the gate
  const float* weight = nullptr;  // [hidden_size] f32 (used as is: HF inits it to ones, no 1+w)
  float* out = nullptr;           // [num_rows, hidden_size] f32; may be x
  int64_t num_rows = 0;
  // Qwen3-Next: rows = tokens * num_v_heads, hidden_size = group_size = head_v_dim.
  // Nemotron-H: hidden_size = intermediate, group_size = intermediate / n_groups.
  // HF Mamba2 (MambaRMSNormGated has no groups): group_size = hidden_size = intermediate.
  int64_t hidden_size = 0;
  int64_t group_size = 0;  // 0 means hidden_size
  float eps = 1e-6f;
  GateOrder order = GateOrder::kNormThenGate;
  GateActivation gate = GateActivation::kSilu;
};

// Throws strata::Error naming the field when a size or pointer is unusable.
void validate(const GatedRmsNormParams& p);

// Parallel over rows.
void gated_rms_norm(const GatedRmsNormParams& p);

}  // namespace strata::cpu
