// Feed-forward networks: the gated MLP (down(act(gate(x)) * up(x)): SwiGLU, GeGLU) and
// the plain MLP (down(act(up(x))): relu² of Nemotron-H).
#pragma once

#include "strata/model/layer.h"
#include "strata/model/model_weights.h"
#include "strata/ops/activation.h"

namespace strata {

// Leaf names of the projections under the layer's scope (".weight" / ".bias" appended).
struct MlpWeightNames {
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
  std::string gate_up;  // set: one stored [2 I, H] tensor, gate rows then up rows (ModernBERT's Wi)
};

struct MlpOptions {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  ops::Activation activation = ops::Activation::kSilu;
  bool gated = true;
  bool bias = false;
  // > 0: gate clamped above and up clamped to [-limit, limit] before act(gate) * up
  // (DeepSeek-V4); gate and up then stay separate projections.
  float swiglu_limit = 0.0f;
  MlpWeightNames names;
};

// gate = min(gate, limit), up = clamp(up, -limit, limit): swiglu_limit's clamp. gate, up: [T, I] activations.
void clamp_gate_up(const Tensor& gate, const Tensor& up, float limit);

class Mlp final : public Ffn {
 public:
  // Weights: gate_proj (gated only), up_proj, down_proj under `w` (options.names).
  Mlp(const MlpOptions& options, const WeightScope& w);
  void forward(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const override;
  // Each rank holds intermediate_size / ranks columns; a stored gate_up does not split by rows.
  bool tensor_parallel() const override { return options_.names.gate_up.empty(); }

 private:
  MlpOptions options_;  // intermediate_size: this rank's part under tensor parallelism
  Tensor gate_up_proj_;                      // [2 I, H] gate | up fused (accelerators, or stored so), or undefined
  Tensor gate_up_bias_;                      // [2 I] with a stored gate_up and biases, or undefined
  Tensor gate_proj_, up_proj_, down_proj_;  // [I, H], [I, H], [H, I] (gate, up undefined when fused); I local
  Tensor gate_bias_, up_bias_, down_bias_;  // [I], [I], [H] or undefined
};

}  // namespace strata
