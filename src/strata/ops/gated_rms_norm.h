// Gated RMS norms of the recurrent layers (ops/cpu/gated_rms_norm.h gives the math):
//   kNormThenGate (Qwen3-Next): out = w * rmsnorm(x) * act(z)
//   kGateThenNorm (Mamba-2, Nemotron-H): out = w * rmsnorm_per_group(x * act(z))
// act: silu, or sigmoid (Qwen4-Exp's output_gate_type).
#pragma once

#include "strata/core/tensor.h"
#include "strata/ops/cpu/gated_rms_norm.h"

namespace strata::ops {

using GateOrder = cpu::GateOrder;
using GateActivation = cpu::GateActivation;

struct GatedRmsNormOptions {
  float eps = 1e-6f;
  int64_t group_size = 0;  // 0: the whole row
  GateOrder order = GateOrder::kNormThenGate;
  GateActivation gate = GateActivation::kSilu;
};

// x, z, out: [N, D] (out may alias x); weight: [D] f32, used as is (no 1 + w).
void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const GatedRmsNormOptions& options);

}  // namespace strata::ops

namespace strata::cpu {
void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const ops::GatedRmsNormOptions& options);
}
namespace strata::cuda {
void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const ops::GatedRmsNormOptions& options);
}
