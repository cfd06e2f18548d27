// Gated DeltaNet (Qwen3-Next / Qwen3.5 linear_attn): q/k/v/z and b/a projections, a depthwise
// causal conv with SiLU over q|k|v, the gated delta rule with per-sequence state, a gated
// RMSNorm (norm, then * silu(z), or sigmoid(z) for Qwen4-Exp) per value head, and the output projection.
// Under tensor parallelism a rank holds a range of key heads and their value heads (its state too);
// out_proj is row-parallel.
#pragma once

#include "strata/model/layer.h"
#include "strata/model/model_weights.h"
#include "strata/ops/gated_rms_norm.h"

namespace strata {

struct GatedDeltaNetOptions {
  int64_t hidden_size = 0;
  int64_t num_k_heads = 0;   // linear_num_key_heads
  int64_t num_v_heads = 0;   // linear_num_value_heads
  int64_t k_head_dim = 0;    // linear_key_head_dim
  int64_t v_head_dim = 0;    // linear_value_head_dim
  int64_t conv_kernel = 4;   // linear_conv_kernel_dim
  float norm_eps = 1e-6f;
  // Qwen3.5: in_proj_qkv ([q | k | v], all heads each), in_proj_z, in_proj_b, in_proj_a; else
  // Qwen3-Next's in_proj_qkvz and in_proj_ba, grouped per key head.
  bool split_projections = false;
  ops::GateActivation output_gate = ops::GateActivation::kSilu;  // the gated norm's act(z)
};

class GatedDeltaNet final : public Mixer {
 public:
  // Weights under `w`: in_proj_qkvz, in_proj_ba (HF's per-key-head grouped layout, regrouped
  // here at load) or the split projections, conv1d, A_log, dt_bias, norm, out_proj; this rank's
  // heads of each under w.shard().
  GatedDeltaNet(const GatedDeltaNetOptions& options, const WeightScope& w);
  LayerCaps caps() const override;
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  int64_t key_dim() const { return options_.num_k_heads * options_.k_head_dim; }
  int64_t value_dim() const { return options_.num_v_heads * options_.v_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  void load_grouped_projections(const GatedDeltaNetOptions& whole, const WeightScope& w);
  void load_split_projections(const GatedDeltaNetOptions& whole, const WeightScope& w);

  GatedDeltaNetOptions options_;  // this rank's heads; `whole` above: the whole layer's
  Tensor qkv_proj_;     // [conv_dim, hidden]: q of the rank's key heads | k | v of its value heads
  Tensor z_proj_;       // [value_dim, hidden]
  Tensor b_proj_;       // [num_v_heads, hidden]
  Tensor a_proj_;       // [num_v_heads, hidden]
  Tensor conv_weight_;  // [conv_dim, conv_kernel] f32
  Tensor A_log_;        // [num_v_heads] f32
  Tensor dt_bias_;      // [num_v_heads] f32
  Tensor norm_weight_;  // [v_head_dim] f32
  Tensor out_proj_;     // [hidden, value_dim]
};

}  // namespace strata
